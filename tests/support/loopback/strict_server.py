"""An OpenAI-compatible server as strict as `transformers serve`: the shapes a real
server sends where OpenAI's own API would not.

- A body field it does not know is a 422 whose body is FastAPI's `{"detail": "..."}`,
  "Unexpected fields in the request: {'extra_body'}", not OpenAI's `{"error": {...}}`.
- Pinned to one model (`pinned`): asking another is a 400 with `{"detail": "Server is pinned
  to '...'; requested '...'"}`.
- The Responses API streams (server-sent events) unless the body says `"stream": false`.

Everything else is `OpenAIServer`'s (answers, faults, the request log)."""

from __future__ import annotations

from .core import Reply, Request
from .openai_server import OpenAIServer

# The fields it reads; anything else in a body is refused.
CHAT_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "stream",
        "n",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "response_format",
        "reasoning_effort",
        "chat_template_kwargs",
        "tools",
        "tool_choice",
        "user",
    }
)
RESPONSES_FIELDS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "reasoning",
        "metadata",
        "store",
        "include",
        "tools",
        "tool_choice",
        "previous_response_id",
        "text",
        "user",
    }
)


class StrictServer(OpenAIServer):
    def __init__(self, responder=None, *, pinned: str | None = None, **kwargs):
        super().__init__(responder, **kwargs)
        self.pinned = pinned

    def chat_completion(self, request: Request) -> Reply:
        return self._refusal(request, CHAT_FIELDS) or super().chat_completion(request)

    def response(self, request: Request) -> Reply:
        if refused := self._refusal(request, RESPONSES_FIELDS):
            return refused
        if isinstance(request.body, dict) and request.body.get("stream") is not False:
            return Reply(
                200,
                'event: response.created\ndata: {"type": "response.created"}\n\n',
                {"content-type": "text/event-stream"},
            )
        return super().response(request)

    def _refusal(self, request: Request, fields: frozenset[str]) -> Reply | None:
        body = request.body if isinstance(request.body, dict) else {}
        unexpected = set(body) - fields
        if unexpected:
            return Reply(422, {"detail": f"Unexpected fields in the request: {unexpected!r}"})
        if self.pinned and body.get("model") != self.pinned:
            return Reply(
                400,
                {"detail": f"Server is pinned to {self.pinned!r}; requested {body.get('model')!r}"},
            )
        return None
