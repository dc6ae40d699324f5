"""What every provider speaks: one `Request` in, one `Completion` out, one attempt per call.

Providers only translate between these types and their SDK. Retrying, throttling and caching
live elsewhere (`_retry.py`, `evals.cache`), so a new provider (a Batch API mode, a local
checkpoint) is one more module that implements `complete`."""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import functools
import json
import math
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal, overload
from urllib.parse import urlsplit

from evals import urls
from evals.errors import (
    FatalProviderError,
    MalformedReply,
    ProviderError,
    QuotaExhausted,
    TransientError,
    Unreachable,
    UsageError,
)
from evals.messages import REPLY_LIMIT, Completion, Request, Usage, is_count as _is_count, kind_of  # noqa: F401 (the shared types, re-exported)
from evals.scrub import printable


@dataclass(frozen=True)
class ProviderSpec:
    """Everything that decides which model answers and how: part of the run identity,
    except `api_key_env`, `responses_api` and `device`, which only say how to reach it.

    `recorded` is what the identity records in place of (or beside) the flags, as config keys
    and values: for a provider that reads local files (`local`), the content hashes of the
    folders `model` and `adapter` name, the resolved dtype, the chat template's hash and the
    generation settings, so that the run is the files' and not their path's
    (`effective_spec` fills it in)."""

    provider: str
    model: str
    base_url: str | None = None
    effort: str | None = None
    thinking: bool = False
    route: str | None = None
    max_tokens: int | None = None
    adapter: str | None = None
    dtype: str | None = None
    api_key_env: str | None = None
    responses_api: bool = False
    device: str | None = None
    recorded: tuple[tuple[str, Any], ...] = ()
    # The values of the provider's own how-to-run flags (`ProviderInfo.flags`) that are not
    # fields here, by their option name: not identity either (`option` reads one).
    options: tuple[tuple[str, Any], ...] = ()
    # The values of the provider's own identity flags (`ProviderInfo.fields`), by field name:
    # identity, as the fields above are (`value` reads one).
    extra: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str, default: Any = None) -> Any:
        """The value of the provider's own flag `name` ("stutter" for --stutter)."""
        return dict(self.options).get(name, default)

    def value(self, name: str) -> Any:
        """An identity field's value: one of the fields above, or the provider's own (None: not given)."""
        return getattr(self, name) if name in _SPEC_FIELDS else dict(self.extra).get(name)

    def with_values(self, **values: Any) -> ProviderSpec:
        """A copy with some identity fields changed, the shared ones and the provider's own."""
        shared = {k: v for k, v in values.items() if k in _SPEC_FIELDS}
        own = {**dict(self.extra), **{k: v for k, v in values.items() if k not in _SPEC_FIELDS}}
        return dataclasses.replace(
            self, **shared, extra=tuple((k, v) for k, v in own.items() if v not in (None, False))
        )

    @classmethod
    def from_identity(cls, ident: dict[str, Any], **how: Any) -> ProviderSpec:
        """The spec a cache record's or a Batch ledger's `identity()` names (with how to reach it)."""
        return cls(**{k: v for k, v in ident.items() if k in _SPEC_FIELDS}, **how).with_values(
            **{k: v for k, v in ident.items() if k not in _SPEC_FIELDS}
        )

    def identity(self) -> dict[str, Any]:
        """Who is asked, as a cache record holds it (and a Batch API ledger names it)."""
        return dict(self._identity)

    @functools.cached_property
    def _identity(self) -> dict[str, Any]:
        # Worked out once per spec (it is frozen): every call's record names it, twice per item.
        ident = dataclasses.asdict(self)
        del (
            ident["api_key_env"],
            ident["responses_api"],
            ident["device"],
            ident["recorded"],
            ident["options"],
            ident["extra"],
        )
        if not ident["thinking"]:
            del ident["thinking"]
        return {
            k: v
            for k, v in {**ident, **dict(self.extra), **dict(self.recorded)}.items()
            if v is not None
        }


# The identity fields every provider shares, as ProviderSpec attributes.
_SPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(ProviderSpec)) - {
    "api_key_env",
    "responses_api",
    "device",
    "recorded",
    "options",
    "extra",
}


class Provider(ABC):
    """One model behind one endpoint. `complete` makes exactly one attempt and raises
    `TransientError`, `ProviderError` or `FatalProviderError` from `evals.errors`."""

    def __init__(self, spec: ProviderSpec):
        self.spec = spec

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in a record or a message (API keys)."""
        return ()

    @abstractmethod
    def complete(self, request: Request, *, timeout: float) -> Completion: ...

    def endpoint(self) -> str:
        """Where the provider asks, for a message (an SDK's default when no --base-url is given)."""
        return self.spec.base_url or f"{self.spec.provider}'s default endpoint"

    def batch_api(self):  # -> evals.providers._batch.BatchAPI | None
        """The provider's Batch API, or None when it has none (`--batch` then asks directly)."""
        return None


def api_key_from_env(name: str, *, required: bool) -> str:
    key = os.environ.get(name, "")
    if required and not key:
        raise UsageError(f"the environment variable {name} is not set: export the API key in it")
    return key


def client_options(spec: ProviderSpec) -> dict[str, Any]:
    """The SDK client's endpoint arguments: `spec.base_url` (saved without credentials) with
    the user info and query parameters it was given, which the SDKs would not send intact
    (their base URL gets a "/" appended after the query)."""
    endpoint = urls.connection(spec.base_url)
    if endpoint is None:
        return {}
    return {
        "base_url": endpoint.base_url,
        "default_query": endpoint.query or None,
        "default_headers": endpoint.headers or None,
    }


def is_openrouter(base_url: Any) -> bool:
    """Whether the endpoint is OpenRouter's: by its host name, openrouter.ai or a subdomain of
    it (https://myopenrouter.ai.example.com is not, nor https://openrouter.ai@evil.example,
    whose host is evil.example), in any case, written fully qualified ("openrouter.ai.") too."""
    if not isinstance(base_url, str) or not base_url.strip():
        return False
    try:
        host = (urlsplit(base_url.strip()).hostname or "").lower().removesuffix(".")
    except ValueError:  # not a URL at all (an unclosed [ in the host)
        return False
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


def status_error(status: int, message: str, headers) -> ProviderError:
    """An HTTP error status as the harness treats it, whichever provider sent it: 429 and 5xx
    are retried (honouring Retry-After), a rejected key or an account out of credit (402)
    ends the run, the rest is final."""
    if status == 429:
        return TransientError(
            message, kind="rate_limit", status=status, retry_after=retry_after(headers)
        )
    if status in (401, 403):
        return FatalProviderError(f"{message}; check the API key", kind="auth", status=status)
    if status == 402:  # Payment Required (OpenRouter's spent credits, Anthropic's billing_error)
        return QuotaExhausted(f"{message}; {QUOTA_FIX}", kind="quota", status=status)
    if status in (408, 409) or status >= 500:  # 529 is Anthropic's "overloaded"
        return TransientError(
            message, kind="server_error", status=status, retry_after=retry_after(headers)
        )
    return ProviderError(message, kind="bad_request", status=status)


# The most of a server's own text (an error's message) a message quotes.
SERVER_TEXT_LIMIT = 300


def server_text(text: str) -> str:
    """What a server said, safe to put in one line of a message (`printable`: control
    characters as their escapes), cut to SERVER_TEXT_LIMIT characters."""
    return printable(text.strip(), SERVER_TEXT_LIMIT)


def error_text(body: Any) -> str | None:
    """The explanation in an error body, whatever server shaped it: OpenAI's and Anthropic's
    `{"error": {"message"}}`, FastAPI's `{"detail": "..."}` or `{"detail": [{"msg"}]}`
    (transformers serve, many Python servers), `{"error": "..."}`, `{"message": "..."}`, or
    a body of plain text. None when it holds none."""
    if isinstance(body, str):
        return body.strip() or None
    if not isinstance(body, dict):
        return None
    for key in ("error", "message", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict) and (inner := error_text(value)):
            return inner
        if key == "detail" and isinstance(value, list):  # FastAPI's validation errors
            found = [
                item["msg"]
                for item in value
                if isinstance(item, dict) and isinstance(item.get("msg"), str)
            ]
            if found:
                return "; ".join(found)
    return None


# The HTTP status an error's type stands for, in either vendor's error object (Anthropic's
# `error.type`, OpenAI's `error.type` or string `error.code`): an error sent with HTTP 200 (a
# gateway's) or as a batch result is retried or kept as the same error over HTTP would be.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,  # OpenAI's code
    "api_error": 500,
    "server_error": 500,  # OpenAI's type
    "timeout_error": 504,
    "overloaded_error": 529,
}


def error_status(error: Any) -> tuple[int, str] | None:
    """The HTTP status an error object says, and what said it: its `code` when that is a
    status (LiteLLM's, a number or a string of digits), else its `code` or `type` when
    ERROR_STATUS knows it. None when it says none."""
    if not isinstance(error, dict):
        return None
    code = error.get("code")
    if isinstance(code, str) and code.isascii() and code.isdigit():  # not "4²9", nor "٤٢٩"
        code = int(code)
    if _is_count(code) and 400 <= code <= 599:
        return code, str(code)
    for said in (code, error.get("type")):
        if isinstance(said, str) and said in ERROR_STATUS:
            return ERROR_STATUS[said], said
    return None


# OpenAI's code for an account out of credit: the run stops at once (every call would be
# refused), whether it comes as an HTTP 429 or inside a 200 (a gateway's), kept to resume.
QUOTA_SPENT = "insufficient_quota"
QUOTA_FIX = "add credit to the account, then rerun to resume"


def error_in_body(body: dict[str, Any]) -> ProviderError | None:
    """An HTTP 200 whose body is an error object (LiteLLM answers some failures so, a gateway
    in front of Anthropic sends its `{"type": "error", "error": {...}}`; a failed Responses API
    reply carries one too): the API error it says, retried when its status is (429, 5xx:
    `error_status`), the run stopped when the account's quota is spent. None when `error` is
    absent or null."""
    error = body.get("error")
    if error is None or error == {}:
        return None
    message = server_text(error_text(body) or f"an error object of {kind_of(error)}")
    if isinstance(error, dict) and QUOTA_SPENT in (error.get("code"), error.get("type")):
        return QuotaExhausted(
            f"HTTP 200 carrying an error {QUOTA_SPENT}: {message}; {QUOTA_FIX}",
            kind="quota",
            status=200,
        )
    if found := error_status(error):
        status, said = found
        return status_error(
            status, f"HTTP 200 carrying an error {server_text(said)}: {message}", {}
        )
    return ProviderError(f"HTTP 200 carrying an error: {message}", kind="bad_request")


def retry_after(headers) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date) or OpenAI's retry-after-ms."""
    if ms := headers.get("retry-after-ms"):
        with contextlib.suppress(ValueError):
            if (seconds := _wait(float(ms) / 1000)) is not None:
                return seconds
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return _wait(float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None  # unreadable: fall back to our own backoff


def _wait(seconds: float) -> float | None:
    """A wait a server asked for as a number: none below 0 (nothing to wait), nan unreadable
    (our own backoff); an infinite one stays, past any patience."""
    return None if math.isnan(seconds) else max(0.0, seconds)


# -- reading a reply ----------------------------------------------------------------------
# Providers read the JSON body themselves, not the SDK's models: those are built without
# validation (a null message, a number for the text pass through) or coerce ("12" becomes 12).
# Every field the harness uses is checked here; a reply that is not what the API documents is
# a MalformedReply, retried like a garbled body. A field the API may leave out reads as empty
# (no usage: zero tokens); one present with the wrong type is malformed.


def reply_body(raw: bytes) -> dict[str, Any]:
    """A 200 reply's body: a JSON object, or MalformedReply."""
    try:
        body = json.loads(raw)
    except ValueError as error:  # JSONDecodeError, or bytes that are not UTF-8
        raise MalformedReply(f"the body is not valid JSON ({error})") from None
    return json_object(body, "the body")


def json_object(value: Any, where: str, *, optional: bool = False) -> dict[str, Any]:
    """An object; with `optional`, null or missing reads as an empty one."""
    if optional and value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedReply(f"{where} is {kind_of(value)}, not an object")
    return value


def json_list(value: Any, where: str, *, optional: bool = False) -> list[Any]:
    """A list; with `optional`, null or missing reads as an empty one."""
    if optional and value is None:
        return []
    if not isinstance(value, list):
        raise MalformedReply(f"{where} is {kind_of(value)}, not a list")
    return value


def text_parts(value: Any, where: str) -> str:
    """A chat message's content: a string, or (as LiteLLM and some gateways send it) a list of
    `{"type": "text", "text": ...}` parts, joined; null is no text. A part of any other type
    (an image, audio) is no answer the harness can read: malformed."""
    if value is None or isinstance(value, str):
        return value or ""
    parts = json_list(value, where)
    for i, part in enumerate(parts):
        part = json_object(part, f"{where}[{i}]")
        if part.get("type") != "text":
            raise MalformedReply(f"{where}[{i}] is a part that is not text")
        json_text(part.get("text"), f"{where}[{i}].text")
    return "".join(part["text"] for part in parts)


@overload
def json_text(value: Any, where: str, *, optional: Literal[False] = False) -> str: ...


@overload
def json_text(value: Any, where: str, *, optional: bool) -> str | None: ...


def json_text(value: Any, where: str, *, optional: bool = False) -> str | None:
    """A string; with `optional`, null or missing reads as None."""
    if optional and value is None:
        return None
    if not isinstance(value, str):
        raise MalformedReply(f"{where} is {kind_of(value)}, not a string")
    return value


def token_count(value: Any, where: str) -> int:
    """A non-negative int; null or missing is 0 (usage the API left out)."""
    if value is None:
        return 0
    if not _is_count(value):
        raise MalformedReply(f"{where} is {kind_of(value)}, not a token count")
    return value
