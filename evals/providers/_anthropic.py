"""The Anthropic provider itself (registered by `evals.providers.anthropic`, which imports
this module at the first call): the Messages API, with extended thinking under `--thinking`,
and the Message Batches API.

Thinking tokens are billed inside `output_tokens` and not reported separately, so
`Usage.reasoning` stays 0 here; the thinking text itself is kept as the reasoning."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from evals import urls
from evals.errors import BatchUnsupported, ProviderError, QuotaExhausted, TransientError
from evals.providers import key_variable

from . import _wire
from ._batch import BatchAPI, BatchState, RequestOutcome, batch_reply, line_error, not_run
from ._base import (
    Completion,
    Provider,
    ProviderSpec,
    Request,
    Usage,
    api_key_from_env,
    client_options,
    error_in_body,
    error_status,
    error_text,
    json_list,
    json_object,
    json_text,
    reply_body,
    server_text,
    status_error,
    token_count,
)

if TYPE_CHECKING:  # annotations only: the SDK is imported where it is used
    import anthropic


def _adaptive_thinking_models() -> frozenset[str]:
    """Models on which the SDK deprecates a fixed thinking budget in favour of adaptive thinking."""
    try:
        from anthropic._data import MODELS_TO_WARN_WITH_THINKING_ENABLED
    except ImportError:  # an SDK without the list: every model takes a budget
        return frozenset()
    return frozenset(MODELS_TO_WARN_WITH_THINKING_ENABLED)


DEFAULT_MAX_TOKENS = 8192
THINKING_MAX_TOKENS = 32000
THINKING_BUDGET = 16000


class AnthropicProvider(Provider):
    def __init__(self, spec: ProviderSpec):
        import anthropic  # here, not at the top: registering the provider imports this module, not its SDK

        super().__init__(spec)
        variable = key_variable(spec)
        assert variable is not None  # anthropic is registered with its key's variable
        self._api_key = api_key_from_env(variable, required=True)
        self.client = anthropic.Anthropic(
            api_key=self._api_key,
            **client_options(spec),
            max_retries=0,
            http_client=_wire.http_client(anthropic.DefaultHttpxClient),
        )
        self._replies = _wire.Replies()

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self._api_key, *urls.secrets(self.spec.base_url))

    def complete(self, request: Request, *, timeout: float) -> Completion:
        import anthropic

        kwargs = self._kwargs(request)
        try:
            with _wire.deadline(timeout):
                content = self.client.messages.with_raw_response.create(
                    **kwargs, timeout=timeout
                ).http_response.content
                reply = reply_body(content)
                if self._replies.stale(kwargs, content, reply.get("id")):  # see `_wire.Replies`
                    _wire.drop_connection()
                    content = self.client.messages.with_raw_response.create(
                        **kwargs, timeout=timeout
                    ).http_response.content
                    reply = reply_body(content)
        except anthropic.AnthropicError as error:
            raise anthropic_error(error, timeout) from None
        return message_completion(reply)

    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/")

    def batch_api(self) -> AnthropicBatch:
        return AnthropicBatch(self)

    def _kwargs(self, request: Request) -> dict[str, Any]:
        thinking = self.spec.thinking
        max_tokens = request.max_tokens or (THINKING_MAX_TOKENS if thinking else DEFAULT_MAX_TOKENS)
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system:
            kwargs["system"] = request.system
        if thinking and self.spec.model in _adaptive_thinking_models():
            kwargs["thinking"] = {"type": "adaptive"}
        elif thinking:
            kwargs["thinking"] = {
                "type": "enabled",
                "budget_tokens": min(THINKING_BUDGET, max_tokens - 1024),
            }
        if self.spec.effort:
            kwargs["output_config"] = {"effort": self.spec.effort}
        # No temperature: the Messages API of current models takes none (the SDK dropped it),
        # so an Anthropic judge's identity records none either.
        return kwargs


def message_completion(body: dict[str, Any]) -> Completion:
    """A Messages API body. Blocks other than text and thinking (tool use, server tools, types
    newer than this harness) carry no answer and are skipped; a refusal is the text it has
    (often none) with finish reason "refusal"; a reply without usage counts no tokens."""
    if failed := error_in_body(body):  # an error object sent with HTTP 200 (a gateway's)
        raise failed
    text, thinking = [], []
    for i, block in enumerate(json_list(body.get("content"), "content")):
        block = json_object(block, f"content[{i}]")
        if block.get("type") == "text":
            text.append(json_text(block.get("text"), f"content[{i}].text"))
        elif block.get("type") == "thinking":
            thinking.append(json_text(block.get("thinking"), f"content[{i}].thinking"))
        elif block.get("type") == "redacted_thinking":
            thinking.append("[redacted thinking]")
    usage = json_object(body.get("usage"), "usage", optional=True)
    cached = token_count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    written = token_count(
        usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens"
    )
    return Completion(
        text="".join(text),
        reasoning="\n\n".join(thinking) or None,
        usage=Usage(
            # Anthropic's input_tokens leaves out the tokens read from or written to its cache.
            input=token_count(usage.get("input_tokens"), "usage.input_tokens") + cached + written,
            output=token_count(usage.get("output_tokens"), "usage.output_tokens"),
            cached=cached,
        ),
        finish_reason=json_text(body.get("stop_reason"), "stop_reason", optional=True),
        model=json_text(body.get("model"), "model", optional=True),
    )


def anthropic_error(error: anthropic.AnthropicError, timeout: float | None = None) -> ProviderError:
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return TransientError(_wire.timed_out(timeout), kind="timeout")
    if isinstance(error, anthropic.APIConnectionError):
        return _wire.connection_error(error)
    if not isinstance(error, anthropic.APIStatusError):
        return TransientError(f"{type(error).__name__}: {error}", kind="malformed_response")
    status = error.status_code
    said = error_text(error.body)  # Anthropic's {"error": {"message"}}, or a proxy's own shape
    message = f"HTTP {status}: {server_text(said) if said else 'no explanation in the body'}"
    if status == 400 and "credit balance" in message.lower():
        return QuotaExhausted(
            f"{message}; add credit, then rerun to resume", kind="quota", status=status
        )
    return status_error(status, message, error.response.headers)


# -- Message Batches ---------------------------------------------------------------------------


class AnthropicBatch(BatchAPI):
    """Message Batches: the requests go inline in the create call. A batch keeps no name, so
    one that a run killed between the API's answer and the harness's record created cannot
    be recognised: only that instant can submit a request set twice."""

    max_requests = 100_000
    max_bytes = 256_000_000

    def __init__(self, provider: AnthropicProvider):
        self.provider = provider
        self.client = provider.client

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": self.provider._kwargs(request)}

    def submit(
        self, name: str, lines: list[dict[str, Any]], *, since: float, sending: Callable[[], None]
    ) -> BatchState:
        import anthropic

        sending()
        with _translated():
            try:
                raw = self.client.messages.batches.with_raw_response.create(requests=lines)  # type: ignore[arg-type]  # SDK Requests: `line` makes them
            except anthropic.APIStatusError as error:
                # A proxy that speaks Messages but not Message Batches (LiteLLM's) has no such route.
                if error.status_code not in (404, 405, 501):
                    raise
                raise BatchUnsupported(
                    f"--batch: {self.client.base_url} has no Anthropic Message Batches API (HTTP {error.status_code} "
                    "on its /v1/messages/batches); run without --batch"
                ) from None
            return _batch_state(batch_reply(raw.http_response.content))

    def retrieve(self, batch_id: str) -> BatchState:
        with _translated():
            return _batch_state(
                batch_reply(
                    self.client.messages.batches.with_raw_response.retrieve(
                        batch_id
                    ).http_response.content
                )
            )

    def results(self, state: BatchState) -> Iterator[tuple[str, RequestOutcome]]:
        for url in state.results:
            with _translated():
                content = self.client.get(
                    url, cast_to=str, options={"headers": {"Accept": "application/binary"}}
                )
            for text in content.splitlines():
                try:
                    line = json.loads(text)
                except ValueError:
                    continue  # unreadable: its request has no outcome and is resubmitted
                if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                    yield line["custom_id"], _result_outcome(line.get("result"))


def _result_outcome(result: Any) -> RequestOutcome:
    """A result: succeeded (the message), errored (an ErrorResponse whose specific type is
    nested, `error.error.type`; the outer type is always "error"), expired or canceled."""
    try:
        result = json_object(result, "result")
        kind = result.get("type")
        if kind == "succeeded":
            return message_completion(json_object(result.get("message"), "result.message"))
        if kind == "errored":
            response = json_object(result.get("error"), "result.error")
            detail = json_object(response.get("error"), "result.error.error", optional=True)
            error_type, message = detail.get("type"), detail.get("message")
            status = found[0] if (found := error_status(detail)) else 400
            said = message if isinstance(message, str) else "no message"
            return line_error(status, server_text(f"{error_type}: {said}"))
        if kind in ("expired", "canceled"):
            return not_run(kind)
        return ProviderError(f"batch result of unknown type {kind!r}", kind="malformed_response")
    except ProviderError as error:
        return error


def _batch_state(body: dict[str, Any]) -> BatchState:
    counts = json_object(body.get("request_counts"), "request_counts", optional=True)
    count = {
        k: token_count(counts.get(k), f"request_counts.{k}")
        for k in ("processing", "succeeded", "errored", "canceled", "expired")
    }
    status = json_text(body.get("processing_status"), "processing_status")
    url = json_text(body.get("results_url"), "results_url", optional=True)
    return BatchState(
        id=json_text(body.get("id"), "id"),
        status=status,
        ended=status == "ended",
        counts={
            "completed": count["succeeded"],
            "failed": count["errored"] + count["canceled"] + count["expired"],
            "total": sum(count.values()),
        },
        results=(url,) if url else (),
    )


@contextlib.contextmanager
def _translated():
    import anthropic

    try:
        yield
    except anthropic.AnthropicError as error:
        raise anthropic_error(error) from None
