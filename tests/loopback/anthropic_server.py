"""Loopback server speaking Anthropic's Messages API.

Wire shapes follow bodies recorded from the live API (see
/work/shared/reference/provider-payloads/).
Point `anthropic.Anthropic(base_url=server.url)` at it.
"""

from __future__ import annotations

import base64
import hashlib

from .core import Reply, Request, RoutedServer, usage_numbers

# Error types the real API sends, with their statuses.
ERRORS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


class AnthropicServer(RoutedServer):
    routes = {("POST", "/v1/messages"): "message"}
    required = {"/v1/messages": ("model", "messages", "max_tokens")}

    def wants_reasoning(self, body: dict) -> bool:
        return (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")

    def error_reply(self, status, error=None, message=None) -> Reply:
        if error is None:  # pick the usual type for the status
            error = next((k for k, v in ERRORS.items() if v == status),
                         "api_error" if (status or 500) >= 500 else "invalid_request_error")
        body = {"type": "error", "error": {"type": error, "message": message or error},
                "request_id": "req_loopback"}
        return Reply(status or ERRORS.get(error, 500), body, {"request-id": "req_loopback"})

    def message(self, request: Request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        inp, out, _ = usage_numbers(request.body, answer)  # thinking is counted inside output
        content = []
        if answer.reasoning is not None:
            # The signature is opaque to clients; derive it so replays are byte-identical.
            digest = hashlib.sha256(answer.reasoning.encode()).digest()
            content.append({"type": "thinking", "thinking": answer.reasoning,
                            "signature": base64.b64encode(digest).decode()})
        content.append({"type": "text", "text": answer.text})
        return Reply(200, answer.wire({
            "id": f"msg_loopback{request.index:06d}",
            "type": "message",
            "role": "assistant",
            "model": request.body["model"],
            "content": content,
            "stop_reason": _STOP_REASONS.get(answer.finish_reason, answer.finish_reason),
            "stop_sequence": None,
            "usage": {
                "input_tokens": inp,
                "output_tokens": out,
                "cache_creation_input_tokens": answer.cache_creation_tokens,
                "cache_read_input_tokens": answer.cached_tokens,
                "service_tier": "standard",
            },
        }), {"request-id": f"req_loopback{request.index:06d}"})
