"""The JSON API `tests.support.json_provider` speaks (a model API that is not OpenAI's):
POST /generate with {"model", "prompt", "system", "max_tokens"}, answered {"text", "model",
"usage": {"input", "output"}}; an error as {"error": {"type", "message"}} (the base shape)."""

from __future__ import annotations

from .core import Answer, Reply, RoutedServer, count_words


class JsonApiServer(RoutedServer):
    routes = {("POST", "/generate"): "generate"}
    required = {"/generate": ("model", "prompt")}

    def generate(self, request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        usage = {
            "input": count_words([request.body.get("system"), request.body["prompt"]]),
            "output": count_words(answer.text),
        }
        return Reply(
            200, answer.wire({"text": answer.text, "model": request.body["model"], "usage": usage})
        )

    def default_responder(self, request) -> Answer:
        return Answer(f"loopback reply to: {request.body['prompt'].splitlines()[0]}")
