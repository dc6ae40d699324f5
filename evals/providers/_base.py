"""What every provider speaks: one `Request` in, one `Completion` out, one attempt per call.

Providers only translate between these types and their SDK. Retrying, throttling and caching
live elsewhere (`_retry.py`, `evals.cache`), so a new provider (a Batch API mode, a local
checkpoint) is one more module that implements `complete`."""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import math
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, overload
from urllib.parse import urlsplit

from evals import urls
from evals.errors import FatalProviderError, ProviderError, TransientError, UsageError
from evals.reasoning import merged, split as split_reasoning
from evals.scrub import printable


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def kind_of(value: Any) -> str:
    """What a value is, for a message that must not repeat the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a negative number" if value < 0 else "a number" if isinstance(value, int) else "a decimal number"
    return _KINDS.get(type(value), type(value).__name__)


_KINDS: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}


@dataclass(frozen=True)
class Request:
    """One model call. `context` never goes over the wire: only the offline `reference`
    provider reads it (the gold answer, or the reply a reference judge compares)."""

    prompt: str
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    context: dict[str, str] = field(default_factory=dict, compare=False)

    def to_record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        del record["context"]
        return {k: v for k, v in record.items() if v is not None}


@dataclass(frozen=True)
class Usage:
    """Token counts, each a non-negative int: a Usage of any other values cannot be made, so
    none reaches a cache record or the token totals."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cached: int = 0

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if not _is_count(value):
                raise ValueError(f"usage.{name} is {kind_of(value)}, not a token count")

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))


# The most characters of a reply's text (and of its reasoning) the harness keeps: 1 MB, the
# length its reply parsers are measured at (tests/{unit,e2e}/test_parsing_linear.py), far beyond any
# answer an eval asks for.
REPLY_LIMIT = 1_000_000


@dataclass(frozen=True)
class Completion:
    """One reply, checked when made (a ValueError names the field of the wrong type), so a
    cache record that does not make one is corrupt, and a provider cannot hand on a wrong one."""

    text: str
    reasoning: str | None = None
    usage: Usage = Usage()
    finish_reason: str | None = None
    model: str | None = None
    latency: float = 0.0
    batch: str | None = None  # the Batch API batch that answered it, if one did
    cut: bool = False  # the text or the reasoning was longer than REPLY_LIMIT and is kept cut there (`kept`)

    def __post_init__(self) -> None:
        fields = (("text", self.text, False), ("reasoning", self.reasoning, True),
                  ("finish_reason", self.finish_reason, True), ("model", self.model, True), ("batch", self.batch, True))
        for name, value, optional in fields:
            if not (isinstance(value, str) or (optional and value is None)):
                raise ValueError(f"{name} is {kind_of(value)}, not a string")
        if not isinstance(self.usage, Usage):
            raise ValueError(f"usage is {kind_of(self.usage)}, not token counts")
        if isinstance(self.latency, bool) or not isinstance(self.latency, (int, float)) or not 0 <= self.latency < math.inf:
            raise ValueError(f"latency is {kind_of(self.latency)}, not a number of seconds")
        if not isinstance(self.cut, bool):
            raise ValueError(f"cut is {kind_of(self.cut)}, not a boolean")

    def to_record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        if record["batch"] is None:
            del record["batch"]  # records of calls made directly stay as they were
        if not record["cut"]:
            del record["cut"]  # so does every reply within the limit
        return record

    def kept(self) -> Completion:
        """The reply as the harness keeps it: a reasoning block in its text kept as its
        reasoning (`apart`), and a text or reasoning longer than REPLY_LIMIT cut there and
        marked `cut`, so one answer cannot blow up a cache record that every rerun reads
        back. It is scored as it is kept, like any reply."""
        reply = self.apart()
        if len(reply.text) <= REPLY_LIMIT and len(reply.reasoning or "") <= REPLY_LIMIT:
            return reply
        return dataclasses.replace(reply, text=reply.text[:REPLY_LIMIT], cut=True,
                                   reasoning=None if reply.reasoning is None else reply.reasoning[:REPLY_LIMIT])

    def apart(self) -> Completion:
        """The reply with the reasoning block at the start of its text (`evals.reasoning`)
        moved to its reasoning, after a server's own: what graders read. Itself when the
        text holds none, as every reply kept by this version."""
        thought, answer = split_reasoning(self.text)
        if thought is None and answer == self.text:
            return self
        return dataclasses.replace(self, text=answer, reasoning=merged(self.reasoning, thought))

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Completion:
        if not isinstance(record, dict) or not isinstance(record.get("usage"), dict):
            raise ValueError("the response is not an object with a usage object")
        return cls(**{**record, "usage": Usage(**record["usage"])})


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
        return dataclasses.replace(self, **shared, extra=tuple((k, v) for k, v in own.items() if v not in (None, False)))

    @classmethod
    def from_identity(cls, ident: dict[str, Any], **how: Any) -> ProviderSpec:
        """The spec a cache record's or a Batch ledger's `identity()` names (with how to reach it)."""
        return cls(**{k: v for k, v in ident.items() if k in _SPEC_FIELDS}, **how).with_values(**{k: v for k, v in ident.items() if k not in _SPEC_FIELDS})

    def identity(self) -> dict[str, Any]:
        """Who is asked, as a cache record holds it (and a Batch API ledger names it)."""
        return dict(self._identity)

    @functools.cached_property
    def _identity(self) -> dict[str, Any]:
        # Worked out once per spec (it is frozen): every call's record names it, twice per item.
        ident = dataclasses.asdict(self)
        del ident["api_key_env"], ident["responses_api"], ident["device"], ident["recorded"], ident["options"], ident["extra"]
        if not ident["thinking"]:
            del ident["thinking"]
        return {k: v for k, v in {**ident, **dict(self.extra), **dict(self.recorded)}.items() if v is not None}



# The identity fields every provider shares, as ProviderSpec attributes.
_SPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(ProviderSpec)) - {"api_key_env", "responses_api", "device", "recorded", "options", "extra"}

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
    return {"base_url": endpoint.base_url, "default_query": endpoint.query or None, "default_headers": endpoint.headers or None}


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
    are retried (honouring Retry-After), a rejected key ends the run, the rest is final."""
    if status == 429:
        return TransientError(message, kind="rate_limit", status=status, retry_after=retry_after(headers))
    if status in (401, 403):
        return FatalProviderError(f"{message}; check the API key", kind="auth", status=status)
    if status in (408, 409) or status >= 500:  # 529 is Anthropic's "overloaded"
        return TransientError(message, kind="server_error", status=status, retry_after=retry_after(headers))
    return ProviderError(message, kind="bad_request", status=status)


class Unreachable(TransientError):
    """No connection could be made to the endpoint (refused, no such host, no route): nothing
    was sent. `call_with_retries` ends the run early when the endpoint never answered at all."""

    def __init__(self, message: str):
        super().__init__(message, kind="connection")


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
            found = [item["msg"] for item in value if isinstance(item, dict) and isinstance(item.get("msg"), str)]
            if found:
                return "; ".join(found)
    return None


def error_in_body(body: dict[str, Any]) -> ProviderError | None:
    """An HTTP 200 whose body is an error object (LiteLLM answers some failures so; a failed
    Responses API reply carries one too): the API error it says, retried when its code is an
    HTTP status that is (429, 5xx). None when `error` is absent or null."""
    error = body.get("error")
    if error is None or error == {}:
        return None
    message = server_text(error_text(body) or f"an error object of {kind_of(error)}")
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if _is_count(code) and 400 <= code <= 599:
        return status_error(code, f"HTTP 200 carrying an error {code}: {message}", {})
    return ProviderError(f"HTTP 200 carrying an error: {message}", kind="bad_request")


def retry_after(headers) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date) or OpenAI's retry-after-ms."""
    if ms := headers.get("retry-after-ms"):
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None  # unreadable: fall back to our own backoff


# -- reading a reply ----------------------------------------------------------------------
# Providers read the JSON body themselves, not the SDK's models: those are built without
# validation (a null message, a number for the text pass through) or coerce ("12" becomes 12).
# Every field the harness uses is checked here; a reply that is not what the API documents is
# a MalformedReply, retried like a garbled body. A field the API may leave out reads as empty
# (no usage: zero tokens); one present with the wrong type is malformed.


class MalformedReply(TransientError):
    """A 200 reply of the wrong shape. Its message names the field and the type found, never
    the value (which could be anything the server sent)."""

    def __init__(self, what: str):
        super().__init__(f"malformed reply: {what}", kind="malformed_response")


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
