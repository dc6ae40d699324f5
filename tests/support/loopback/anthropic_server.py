"""Loopback server speaking Anthropic's Messages API.

Wire shapes follow bodies recorded from the live API (see
/work/shared/reference/provider-payloads/).
Point `anthropic.Anthropic(base_url=server.url)` at it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import UTC, datetime, timedelta

from .batches import Batch, BatchServing, LineResult, page, reply_json
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

CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")

# The batch states of batches.py, as Anthropic's three processing statuses.
_PROCESSING_STATUS = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "cancelling": "canceling",
}


class AnthropicServer(BatchServing, RoutedServer):
    """Also the Message Batches API (see batches.py for `batch_seconds` and the test controls).
    Results are served from the URL in `results_url`, built from the Host header the client
    used, so it is absolute and reachable however the client named this server."""

    routes = {
        ("POST", "/v1/messages"): "message",
        ("POST", "/v1/messages/batches"): "create_batch",
        ("GET", "/v1/messages/batches"): "list_batches",
        ("GET", "/v1/messages/batches/{batch_id}"): "get_batch",
        ("GET", "/v1/messages/batches/{batch_id}/results"): "batch_results",
    }
    required = {"/v1/messages": ("model", "messages", "max_tokens")}
    batch_id_prefix = "msgbatch_"
    batch_limits = (100_000, 256 * 1024 * 1024)
    batch_fates = ("expired", "cancelled")  # requests are checked at create: no failed batches

    def wants_reasoning(self, body: dict) -> bool:
        return (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")

    def error_reply(self, status, error=None, message=None) -> Reply:
        if error is None:  # pick the usual type for the status
            error = next(
                (k for k, v in ERRORS.items() if v == status),
                "api_error" if (status or 500) >= 500 else "invalid_request_error",
            )
        body = {
            "type": "error",
            "error": {"type": error, "message": message or error},
            "request_id": "req_loopback",
        }
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
            content.append(
                {
                    "type": "thinking",
                    "thinking": answer.reasoning,
                    "signature": base64.b64encode(digest).decode(),
                }
            )
        content.append({"type": "text", "text": answer.text})
        return Reply(
            200,
            answer.wire(
                {
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
                }
            ),
            {"request-id": f"req_loopback{request.index:06d}"},
        )

    # -- Message Batches API -----------------------------------------------------------------

    def create_batch(self, request: Request) -> Reply:
        """Checks the whole request at create, as the real API does; the params of each request
        are checked when it runs, so a bad one ends as an errored result."""
        requests = request.body.get("requests") if isinstance(request.body, dict) else None
        if not isinstance(requests, list) or not requests:
            return self.error_reply(400, message="requests: Input should be a non-empty list")
        if len(requests) > self.batch_max_requests or len(request.raw_body) > self.batch_max_bytes:
            return self.error_reply(
                413,
                message=f"Batch exceeds the limit of "
                f"{self.batch_max_requests} requests or "
                f"{self.batch_max_bytes} bytes.",
            )
        seen: set[str] = set()
        for index, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
                return self.error_reply(
                    400,
                    message=f"requests.{index}.custom_id: String should "
                    f"match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
                )
            if custom_id in seen:
                return self.error_reply(
                    400,
                    message=f"Duplicate custom_id {custom_id!r}: each "
                    f"request in a batch needs its own.",
                )
            if not isinstance(item.get("params"), dict):
                return self.error_reply(400, message=f"requests.{index}.params: Field required")
            seen.add(custom_id)
        lines = [(item["custom_id"], item["params"]) for item in requests]
        return Reply(200, self.batch_wire(self.book.create("/v1/messages", lines), request))

    def get_batch(self, request: Request, batch_id: str) -> Reply:
        batch = self.book.get(batch_id)
        return Reply(200, self.batch_wire(batch, request)) if batch else self._no_such(batch_id)

    def list_batches(self, request: Request) -> Reply:
        params = request.params
        batches = [self.batch_wire(batch, request) for batch in self.book.all()]
        items, has_more = page(
            batches,
            lambda b: b["id"],
            self.page_limit(params, 20),
            after=params.get("after_id"),
            before=params.get("before_id"),
        )
        return Reply(
            200,
            {
                "data": items,
                "has_more": has_more,
                "first_id": items[0]["id"] if items else None,
                "last_id": items[-1]["id"] if items else None,
            },
        )

    def batch_results(self, request: Request, batch_id: str) -> Reply:
        """JSONL, one line per request, in the batch's shuffled order."""
        batch = self.book.get(batch_id)
        if batch is None:
            return self._no_such(batch_id)
        if batch.results is None:
            return self.error_reply(
                404,
                message=f"Results for message batch {batch_id} are not "
                f"available yet: it is still processing.",
            )
        lines = [json.dumps(self._result_line(result)) + "\n" for result in batch.results]
        return Reply(200, "".join(lines).encode(), {"content-type": "application/binary"})

    def _result_line(self, result: LineResult) -> dict:
        if result.kind in ("expired", "cancelled"):
            outcome = {"type": "expired" if result.kind == "expired" else "canceled"}
        elif result.kind == "succeeded":
            outcome = {"type": "succeeded", "message": reply_json(result.reply)}
        else:  # the error body is an ErrorResponse: the specific type is at error.error.type
            outcome = {"type": "errored", "error": reply_json(result.reply)}
        return {"custom_id": result.custom_id, "result": outcome}

    def batch_wire(self, batch: Batch, request: Request) -> dict:
        """The MessageBatch object. Counts move out of `processing` only when the batch ends."""
        ended_at = next(
            (batch.entered[s] for s in ("completed", "expired", "cancelled") if s in batch.entered),
            None,
        )
        counts = {
            "processing": len(batch.lines),
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        }
        if ended_at:
            counts = {
                "processing": 0,
                "succeeded": batch.count("succeeded"),
                "errored": batch.count("errored"),
                "canceled": batch.count("cancelled"),
                "expired": batch.count("expired"),
            }
        host = request.headers.get("host") or self.url.removeprefix("http://")
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": _PROCESSING_STATUS.get(batch.status, "ended"),
            "request_counts": counts,
            "ended_at": rfc3339(ended_at),
            "created_at": rfc3339(batch.created_at),
            "expires_at": rfc3339(batch.created_at + timedelta(days=1).total_seconds()),
            "archived_at": None,
            "cancel_initiated_at": rfc3339(batch.entered.get("cancelling")),
            "results_url": (
                f"http://{host}/v1/messages/batches/{batch.id}/results" if ended_at else None
            ),
        }

    def _no_such(self, batch_id: str) -> Reply:
        return self.error_reply(404, message=f"No message batch found with id {batch_id!r}.")


def rfc3339(timestamp: float | None) -> str | None:
    """Anthropic's timestamp format, e.g. 2024-09-24T18:37:24.100435Z."""
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")
