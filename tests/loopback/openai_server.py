"""Loopback server speaking OpenAI's Chat Completions, Responses and Models endpoints.

Wire shapes follow bodies recorded from the live API (see
/work/shared/reference/provider-payloads/).
Point `openai.OpenAI(base_url=server.url + "/v1")` at it.
"""

from __future__ import annotations

import time
from typing import Sequence

from .core import Reply, Request, RoutedServer, usage_numbers

# Named error kinds: name -> (status, type, code, message), as the real API sends them.
ERRORS = {
    "invalid_request_error": (400, "invalid_request_error", None, "Invalid request."),
    "invalid_api_key": (401, "invalid_request_error", "invalid_api_key",
                        "Incorrect API key provided: sk-****. You can find your API key at "
                        "https://platform.openai.com/account/api-keys."),
    "model_not_found": (404, "invalid_request_error", "model_not_found",
                        "The model does not exist or you do not have access to it."),
    "rate_limit_exceeded": (429, "requests", "rate_limit_exceeded",
                            "Rate limit reached for requests. Please try again later."),
    "insufficient_quota": (429, "insufficient_quota", "insufficient_quota",
                           "You exceeded your current quota, please check your plan and billing "
                           "details."),
    "server_error": (500, "server_error", None,
                     "The server had an error while processing your request. Sorry about that!"),
}

# Neutral finish reasons -> (Responses status, incomplete_details.reason).
_RESPONSES_FINISH = {"stop": ("completed", None), "length": ("incomplete", "max_output_tokens"),
                     "content_filter": ("incomplete", "content_filter")}


class OpenAIServer(RoutedServer):
    """`reasoning_field`: message key carrying chat reasoning text, as OpenAI-compatible servers
    do ("reasoning_content": vLLM/DeepSeek, "reasoning": OpenRouter); None never sends it, like
    OpenAI itself."""

    routes = {("POST", "/v1/chat/completions"): "chat_completion",
              ("POST", "/v1/responses"): "response",
              ("GET", "/v1/models"): "list_models"}
    required = {"/v1/chat/completions": ("model", "messages"), "/v1/responses": ("model",)}

    def __init__(self, responder=None, *, reasoning_field: str | None = "reasoning_content",
                 models: Sequence[str] = ("gpt-4o-mini", "gpt-5", "o3-mini"), **kwargs):
        super().__init__(responder, **kwargs)
        self.reasoning_field = reasoning_field
        self.models = list(models)

    def wants_reasoning(self, body: dict) -> bool:
        return bool(body.get("reasoning") or body.get("reasoning_effort"))

    def error_reply(self, status, error=None, message=None) -> Reply:
        if error is None:  # pick the usual kind for the status
            error = next((k for k, v in ERRORS.items() if v[0] == status),
                         "server_error" if (status or 500) >= 500 else "invalid_request_error")
        default_status, type_, code, default_message = ERRORS.get(error,
                                                                  (status, error, error, error))
        body = {"error": {"message": message or default_message, "type": type_, "param": None,
                          "code": code}}
        return Reply(status or default_status or 500, body, {"x-request-id": "req_loopback"})

    def chat_completion(self, request: Request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        inp, out, reasoning = usage_numbers(request.body, answer)
        message = {"role": "assistant", "content": answer.text, "refusal": None, "annotations": []}
        if answer.reasoning and self.reasoning_field:
            message[self.reasoning_field] = answer.reasoning
        return Reply(200, answer.wire({
            "id": f"chatcmpl-loopback{request.index:06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body["model"],
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": answer.finish_reason}],
            "usage": {
                "prompt_tokens": inp,
                "completion_tokens": out,
                "total_tokens": inp + out,
                "prompt_tokens_details": {"cached_tokens": answer.cached_tokens, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0,
                                              "rejected_prediction_tokens": 0},
            },
            "service_tier": "default",
            "system_fingerprint": "fp_loopback",
        }))

    def response(self, request: Request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        body = request.body
        inp, out, reasoning = usage_numbers(body, answer)
        status, incomplete_reason = _RESPONSES_FINISH.get(answer.finish_reason,
                                                          ("incomplete", answer.finish_reason))
        output = []
        if answer.reasoning is not None:  # "" = reasoning happened, no summary (o3-mini style)
            text = answer.reasoning
            summary = [{"type": "summary_text", "text": text}] if text else []
            item = {"id": f"rs_loopback{request.index:06d}", "type": "reasoning",
                    "summary": summary}
            if "reasoning.encrypted_content" in (body.get("include") or []):
                item["encrypted_content"] = "gAAAAloopback-opaque"
            output.append(item)
        output.append({
            "id": f"msg_loopback{request.index:06d}", "type": "message", "status": status,
            "role": "assistant",
            "content": [{"type": "output_text", "annotations": [], "logprobs": [],
                         "text": answer.text}],
        })
        requested_reasoning = body.get("reasoning") or {}
        return Reply(200, answer.wire({
            "id": f"resp_loopback{request.index:06d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": requested_reasoning.get("effort"),
                          "summary": requested_reasoning.get("summary")},
            "service_tier": "default",
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": body.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": {
                "input_tokens": inp,
                "input_tokens_details": {"cached_tokens": answer.cached_tokens},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": inp + out,
            },
            "user": None,
            "metadata": body.get("metadata") or {},
        }))

    def list_models(self, request: Request) -> Reply:
        return Reply(200, {"object": "list", "data": [
            {"id": m, "object": "model", "created": 1700000000, "owned_by": "loopback"}
            for m in self.models]})
