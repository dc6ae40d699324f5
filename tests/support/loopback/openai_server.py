"""Loopback server speaking OpenAI's Chat Completions, Responses and Models endpoints.

Wire shapes follow bodies recorded from the live API (see
/work/shared/reference/provider-payloads/).
Point `openai.OpenAI(base_url=server.url + "/v1")` at it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from itertools import count
from typing import Any, Sequence

from .batches import Batch, BatchServing, LineResult, page, reply_json
from .core import Reply, Request, RoutedServer, usage_numbers

# Named error kinds: name -> (status, type, code, message), as the real API sends them.
ERRORS = {
    "invalid_request_error": (400, "invalid_request_error", None, "Invalid request."),
    "invalid_api_key": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: sk-****. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    "model_not_found": (
        404,
        "invalid_request_error",
        "model_not_found",
        "The model does not exist or you do not have access to it.",
    ),
    "rate_limit_exceeded": (
        429,
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again later.",
    ),
    "insufficient_quota": (
        429,
        "insufficient_quota",
        "insufficient_quota",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    "server_error": (
        500,
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
}

# Neutral finish reasons -> (Responses status, incomplete_details.reason).
_RESPONSES_FINISH = {
    "stop": ("completed", None),
    "length": ("incomplete", "max_output_tokens"),
    "content_filter": ("incomplete", "content_filter"),
}


# Purposes the Files API accepts for an upload; the server itself writes "batch_output" files.
UPLOAD_PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
BATCH_ENDPOINTS = ("/v1/chat/completions", "/v1/responses")  # the ones this server answers
DAY = 24 * 3600

# Top-level `error` of an error-file line for a request that never ran.
_UNRUN_LINE_ERRORS = {
    "expired": {
        "code": "batch_expired",
        "message": "This request could not be executed before the completion window expired.",
    },
    "cancelled": {
        "code": "batch_cancelled",
        "message": "This request could not be executed before the batch was cancelled.",
    },
}


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def wire(self) -> dict:
        expires_at = self.created_at + 30 * DAY if self.purpose.startswith("batch") else None
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "expires_at": expires_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


class OpenAIServer(BatchServing, RoutedServer):
    """`reasoning_field`: message key carrying chat reasoning text, as OpenAI-compatible servers
    do ("reasoning_content": vLLM/DeepSeek, "reasoning": OpenRouter); None never sends it, like
    OpenAI itself.

    Also the Files and Batch APIs (see batches.py for `batch_seconds` and the test controls):
    a batch's output and error files appear in the Files API when it ends.
    """

    routes = {
        ("POST", "/v1/chat/completions"): "chat_completion",
        ("POST", "/v1/responses"): "response",
        ("GET", "/v1/models"): "list_models",
        ("POST", "/v1/files"): "upload_file",
        ("GET", "/v1/files"): "list_files",
        ("GET", "/v1/files/{file_id}"): "get_file",
        ("DELETE", "/v1/files/{file_id}"): "delete_file",
        ("GET", "/v1/files/{file_id}/content"): "file_content",
        ("POST", "/v1/batches"): "create_batch",
        ("GET", "/v1/batches"): "list_batches",
        ("GET", "/v1/batches/{batch_id}"): "get_batch",
    }
    required = {"/v1/chat/completions": ("model", "messages"), "/v1/responses": ("model",)}

    def __init__(
        self,
        responder=None,
        *,
        reasoning_field: str | None = "reasoning_content",
        models: Sequence[str] = ("gpt-4o-mini", "gpt-5", "o3-mini"),
        **kwargs,
    ):
        super().__init__(responder, **kwargs)
        self.reasoning_field = reasoning_field
        self.models = list(models)
        self._files: dict[str, StoredFile] = {}  # insertion order = upload order
        self._files_lock = threading.Lock()
        self._file_numbers = count(1)
        self._uploads = 0

    def wants_reasoning(self, body: dict) -> bool:
        return bool(body.get("reasoning") or body.get("reasoning_effort"))

    def error_reply(self, status, error=None, message=None) -> Reply:
        if error is None:  # pick the usual kind for the status
            error = next(
                (k for k, v in ERRORS.items() if v[0] == status),
                "server_error" if (status or 500) >= 500 else "invalid_request_error",
            )
        default_status, type_, code, default_message = ERRORS.get(
            error, (status, error, error, error)
        )
        body = {
            "error": {
                "message": message or default_message,
                "type": type_,
                "param": None,
                "code": code,
            }
        }
        return Reply(status or default_status or 500, body, {"x-request-id": "req_loopback"})

    def chat_completion(self, request: Request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        inp, out, reasoning = usage_numbers(request.body, answer)
        message = {"role": "assistant", "content": answer.text, "refusal": None, "annotations": []}
        if answer.reasoning and self.reasoning_field:
            message[self.reasoning_field] = answer.reasoning
        return Reply(
            200,
            answer.wire(
                {
                    "id": f"chatcmpl-loopback{request.index:06d}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": request.body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "logprobs": None,
                            "finish_reason": answer.finish_reason,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": inp,
                        "completion_tokens": out,
                        "total_tokens": inp + out,
                        "prompt_tokens_details": {
                            "cached_tokens": answer.cached_tokens,
                            "audio_tokens": 0,
                        },
                        "completion_tokens_details": {
                            "reasoning_tokens": reasoning,
                            "audio_tokens": 0,
                            "accepted_prediction_tokens": 0,
                            "rejected_prediction_tokens": 0,
                        },
                    },
                    "service_tier": "default",
                    "system_fingerprint": "fp_loopback",
                }
            ),
        )

    def response(self, request: Request) -> Reply:
        answer = self.answer(request)
        if isinstance(answer, Reply):
            return answer
        body = request.body
        inp, out, reasoning = usage_numbers(body, answer)
        status, incomplete_reason = _RESPONSES_FINISH.get(
            answer.finish_reason, ("incomplete", answer.finish_reason)
        )
        output = []
        if answer.reasoning is not None:  # "" = reasoning happened, no summary (o3-mini style)
            text = answer.reasoning
            summary = [{"type": "summary_text", "text": text}] if text else []
            item = {
                "id": f"rs_loopback{request.index:06d}",
                "type": "reasoning",
                "summary": summary,
            }
            if "reasoning.encrypted_content" in (body.get("include") or []):
                item["encrypted_content"] = "gAAAAloopback-opaque"
            output.append(item)
        output.append(
            {
                "id": f"msg_loopback{request.index:06d}",
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [
                    {"type": "output_text", "annotations": [], "logprobs": [], "text": answer.text}
                ],
            }
        )
        requested_reasoning = body.get("reasoning") or {}
        return Reply(
            200,
            answer.wire(
                {
                    "id": f"resp_loopback{request.index:06d}",
                    "object": "response",
                    "created_at": int(time.time()),
                    "status": status,
                    "background": False,
                    "error": None,
                    "incomplete_details": {"reason": incomplete_reason}
                    if incomplete_reason
                    else None,
                    "instructions": body.get("instructions"),
                    "max_output_tokens": body.get("max_output_tokens"),
                    "model": body["model"],
                    "output": output,
                    "parallel_tool_calls": True,
                    "previous_response_id": body.get("previous_response_id"),
                    "reasoning": {
                        "effort": requested_reasoning.get("effort"),
                        "summary": requested_reasoning.get("summary"),
                    },
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
                }
            ),
        )

    def list_models(self, request: Request) -> Reply:
        return Reply(
            200,
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": 1700000000, "owned_by": "loopback"}
                    for m in self.models
                ],
            },
        )

    # -- Files API ---------------------------------------------------------------------------

    def backdate(self, seconds: float) -> None:
        """Every batch and file made so far, as if made `seconds` earlier."""
        super().backdate(seconds)
        with self._files_lock:
            for stored in self._files.values():
                stored.created_at -= int(seconds)

    @property
    def uploads(self) -> int:
        """Files uploaded through POST /v1/files so far (batch results are not uploads)."""
        return self._uploads

    def upload_file(self, request: Request) -> Reply:
        fields = parse_multipart(request.headers.get("content-type", ""), request.raw_body)
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        filename, data = fields.get("file", (None, None))
        if data is None:
            return self._invalid("file", "Missing required parameter: 'file'.")
        if purpose not in UPLOAD_PURPOSES:
            return self._invalid(
                "purpose",
                f"Invalid value for 'purpose': {purpose!r}. "
                f"Supported values are: {', '.join(UPLOAD_PURPOSES)}.",
            )
        if purpose == "batch" and not (filename or "").endswith(".jsonl"):
            return self._invalid("file", "Invalid file format for Batch API. Must be .jsonl")
        return Reply(200, self.store_file(filename or "upload", purpose, data, upload=True).wire())

    def store_file(
        self, filename: str, purpose: str, data: bytes, upload: bool = False
    ) -> StoredFile:
        with self._files_lock:
            stored = StoredFile(
                f"file-loopback{next(self._file_numbers):06d}",
                filename,
                purpose,
                data,
                int(time.time()),
            )
            self._files[stored.id] = stored
            self._uploads += upload
            return stored

    def list_files(self, request: Request) -> Reply:
        params = request.params
        with self._files_lock:
            files = list(self._files.values())
        if params.get("order", "desc") == "desc":
            files.reverse()
        if params.get("purpose"):
            files = [f for f in files if f.purpose == params["purpose"]]
        return list_reply([f.wire() for f in files], params, self.page_limit(params, 10_000))

    def get_file(self, request: Request, file_id: str) -> Reply:
        stored = self._files.get(file_id)
        return Reply(200, stored.wire()) if stored else self._no_such("File", file_id)

    def delete_file(self, request: Request, file_id: str) -> Reply:
        with self._files_lock:
            stored = self._files.pop(file_id, None)
        if stored is None:
            return self._no_such("File", file_id)
        return Reply(200, {"id": file_id, "object": "file", "deleted": True})

    def file_content(self, request: Request, file_id: str) -> Reply:
        stored = self._files.get(file_id)
        if stored is None:
            return self._no_such("File", file_id)
        return Reply(200, stored.data, {"content-type": "application/octet-stream"})

    # -- Batch API ---------------------------------------------------------------------------

    def create_batch(self, request: Request) -> Reply:
        """Checks what the real API checks at create (400); the input file's lines are checked
        by the batch itself, which then fails with `errors`, as the real one does."""
        body = request.body if isinstance(request.body, dict) else {}
        endpoint, metadata = body.get("endpoint"), body.get("metadata")
        stored = self._files.get(body.get("input_file_id") or "")
        if endpoint not in BATCH_ENDPOINTS:
            return self._invalid(
                "endpoint",
                f"Invalid value for 'endpoint': {endpoint!r}. "
                f"This server batches {', '.join(BATCH_ENDPOINTS)}.",
            )
        if body.get("completion_window") != "24h":
            return self._invalid(
                "completion_window", "Invalid value for 'completion_window': must be '24h'."
            )
        if metadata is not None and not (
            isinstance(metadata, dict)
            and len(metadata) <= 16
            and all(isinstance(v, str) for v in metadata.values())
        ):
            return self._invalid("metadata", "Invalid 'metadata': at most 16 string values.")
        if stored is None or stored.purpose != "batch":
            return self._invalid(
                "input_file_id",
                f"Invalid 'input_file_id': {body.get('input_file_id')!r}. "
                "Expected the id of a file uploaded with purpose 'batch'.",
            )
        lines, problems = read_batch_input(
            stored.data, endpoint, self.batch_max_requests, self.batch_max_bytes
        )
        batch = self.book.create(
            endpoint, lines, {"input_file_id": stored.id, "metadata": metadata}, problems
        )
        return Reply(200, self.batch_wire(batch))

    def get_batch(self, request: Request, batch_id: str) -> Reply:
        batch = self.book.get(batch_id)
        return Reply(200, self.batch_wire(batch)) if batch else self._no_such("Batch", batch_id)

    def list_batches(self, request: Request) -> Reply:
        batches = [self.batch_wire(batch) for batch in self.book.all()]
        return list_reply(batches, request.params, self.page_limit(request.params, 20))

    def batch_ended(self, batch: Batch) -> None:
        """Write the output file (succeeded lines) and the error file (the others); a file with
        no lines is not written and its id stays null."""
        for kind_is_ok, name in ((True, "output"), (False, "error")):
            lines = [
                self._result_line(r) for r in batch.results if (r.kind == "succeeded") == kind_is_ok
            ]
            if lines:
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
                stored = self.store_file(f"{batch.id}_{name}.jsonl", "batch_output", data)
                batch.attributes[f"{name}_file_id"] = stored.id

    def _result_line(self, result: LineResult) -> dict:
        line = {"id": f"batch_req_loopback{result.number:06d}", "custom_id": result.custom_id}
        if result.reply is None:
            return {**line, "response": None, "error": _UNRUN_LINE_ERRORS[result.kind]}
        return {
            **line,
            "response": {
                "status_code": result.reply.status,
                "request_id": f"req_loopback{result.number:06d}",
                "body": reply_json(result.reply),
            },
            "error": None,
        }

    def batch_wire(self, batch: Batch) -> dict:
        """The Batch object, as in the API reference's example."""

        def at(status: str) -> int | None:
            return int(batch.entered[status]) if status in batch.entered else None

        ended = batch.results is not None
        bodies = [reply_json(r.reply) for r in batch.results or () if r.kind == "succeeded"]
        first_body = batch.lines[0][1] if batch.lines else None
        wire = {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "model": first_body.get("model") if isinstance(first_body, dict) else None,
            "errors": {"object": "list", "data": batch.problems} if batch.problems else None,
            "input_file_id": batch.attributes["input_file_id"],
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.attributes.get("output_file_id"),
            "error_file_id": batch.attributes.get("error_file_id"),
            "created_at": at("validating"),
            "in_progress_at": at("in_progress"),
            "expires_at": at("validating") + DAY,
            "finalizing_at": at("finalizing"),
            "completed_at": at("completed"),
            "failed_at": at("failed"),
            "expired_at": at("expired"),
            "cancelling_at": at("cancelling"),
            "cancelled_at": at("cancelled"),
            "request_counts": {
                "total": len(batch.lines) if batch.status != "failed" else 0,
                "completed": len(bodies),
                "failed": len(batch.results or ()) - len(bodies) if ended else 0,
            },
            "metadata": batch.attributes["metadata"],
        }
        if batch.status == "completed":
            wire["usage"] = batch_usage(bodies)
        return wire

    def _invalid(self, param: str, message: str) -> Reply:
        reply = self.error_reply(400, message=message)
        reply.body["error"]["param"] = param
        return reply

    def _no_such(self, kind: str, object_id: str) -> Reply:
        return self.error_reply(404, message=f"No such {kind} object: {object_id}")


def list_reply(objects: list[dict], params: dict[str, str], limit: int) -> Reply:
    """OpenAI's cursor-paginated list: `after` an id, at most `limit` objects."""
    items, has_more = page(objects, lambda o: o["id"], limit, after=params.get("after"))
    return Reply(
        200,
        {
            "object": "list",
            "data": items,
            "first_id": items[0]["id"] if items else None,
            "last_id": items[-1]["id"] if items else None,
            "has_more": has_more,
        },
    )


def read_batch_input(
    data: bytes, endpoint: str, max_requests: int, max_bytes: int
) -> tuple[list[tuple[str, Any]], list[dict]]:
    """The (custom_id, body) lines of a batch input file, and the problems that make the batch
    fail, each {code, message, param, line} with the 1-based line number."""
    problems: list[dict] = []

    def problem(code: str, message: str, param: str | None = None, line: int | None = None):
        problems.append({"code": code, "message": message, "param": param, "line": line})

    if len(data) > max_bytes:
        problem(
            "file_too_large",
            f"The input file is {len(data)} bytes, over the limit of {max_bytes} bytes.",
        )
        return [], problems
    lines: list[tuple[str, Any]] = []
    seen: set[str] = set()
    models: set = set()
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            problem("invalid_json_line", "This line is not parseable as valid JSON.", None, number)
            continue
        missing = [f for f in ("custom_id", "method", "url", "body") if item.get(f) is None]
        custom_id, body = item.get("custom_id"), item.get("body")
        if missing:
            problem(
                "missing_required_parameter",
                f"Missing required parameter: '{missing[0]}'.",
                missing[0],
                number,
            )
        elif item["method"] != "POST":
            problem(
                "invalid_value", "The method for this request must be 'POST'.", "method", number
            )
        elif item["url"] != endpoint:
            problem(
                "url_mismatch",
                f"The URL provided for this request does not match the batch endpoint {endpoint}.",
                "url",
                number,
            )
        elif custom_id in seen:
            problem(
                "duplicate_custom_id",
                "The custom_id for this request is a duplicate of "
                "another request. The custom_id parameter must be unique for each request "
                "in a batch.",
                "custom_id",
                number,
            )
        elif isinstance(body, dict) and models and body.get("model") not in models:
            problem(
                "model_mismatch",
                "The model of this request differs from the model of "
                "the other requests in the file. A batch must use one model.",
                "body.model",
                number,
            )
        else:
            seen.add(custom_id)
            models.add(body.get("model") if isinstance(body, dict) else None)
            lines.append((custom_id, body))
    if not lines and not problems:
        problem("empty_file", "The batch input file is empty.")
    if len(lines) > max_requests:
        problem(
            "too_many_tasks",
            f"The batch input file has {len(lines)} requests, over the limit of {max_requests}.",
        )
    return lines, problems


def batch_usage(bodies: list) -> dict:
    """Token totals of the succeeded lines, in the Batch object's (Responses-style) names:
    chat lines count prompt/completion tokens, responses lines input/output tokens."""
    totals = {"input": 0, "output": 0, "cached": 0, "reasoning": 0}
    for body in bodies:
        usage = (body.get("usage") if isinstance(body, dict) else None) or {}
        details_in = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
        details_out = (
            usage.get("completion_tokens_details") or usage.get("output_tokens_details") or {}
        )
        totals["input"] += usage.get("prompt_tokens", usage.get("input_tokens")) or 0
        totals["output"] += usage.get("completion_tokens", usage.get("output_tokens")) or 0
        totals["cached"] += details_in.get("cached_tokens") or 0
        totals["reasoning"] += details_out.get("reasoning_tokens") or 0
    return {
        "input_tokens": totals["input"],
        "input_tokens_details": {"cached_tokens": totals["cached"]},
        "output_tokens": totals["output"],
        "output_tokens_details": {"reasoning_tokens": totals["reasoning"]},
        "total_tokens": totals["input"] + totals["output"],
    }


def parse_multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """multipart/form-data fields: name -> (filename or None, bytes), bytes kept exactly."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        return {}
    fields = {}
    for part in raw.split(b"--" + match.group(1).encode())[1:-1]:
        head, _, data = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        name = re.search(rb'\bname="([^"]*)"', head)
        filename = re.search(rb'\bfilename="([^"]*)"', head)
        if name:
            fields[name.group(1).decode()] = (
                filename.group(1).decode() if filename else None,
                data.removesuffix(b"\r\n"),
            )
    return fields
