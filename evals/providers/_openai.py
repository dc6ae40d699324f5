"""The OpenAI provider itself (registered by `evals.providers.openai`, which imports this
module at the first call): Chat Completions, or the Responses API with `--responses-api`,
and the Batch API. `OpenAIProvider` is shared with `live`, which speaks the same protocol to
any OpenAI-compatible endpoint."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from evals import urls
from evals.errors import (
    BatchUnsupported,
    MalformedReply,
    ProviderError,
    QuotaExhausted,
    TransientError,
)
from evals.providers import key_variable

from . import _wire
from ._batch import (
    FIND_PAGES,
    FIND_SKEW,
    BatchAPI,
    BatchState,
    RequestOutcome,
    batch_reply,
    line_error,
    not_run,
)
from ._base import (
    QUOTA_FIX,
    QUOTA_SPENT,
    Completion,
    Provider,
    ProviderSpec,
    Request,
    Usage,
    api_key_from_env,
    client_options,
    error_in_body,
    error_text,
    json_list,
    json_object,
    json_text,
    reply_body,
    server_text,
    status_error,
    text_parts,
    token_count,
)

if TYPE_CHECKING:  # annotations only: the SDK is imported where it is used
    import openai


class OpenAIProvider(Provider):
    def __init__(self, spec: ProviderSpec):
        import openai  # here, not at the top: registering the provider imports this module, not its SDK

        super().__init__(spec)
        variable = key_variable(spec)
        self._secrets = (api_key_from_env(variable, required=True),) if variable else ()
        # The SDK's own retries are off: `_retry` retries, honouring Retry-After and the throttle.
        # A local server usually checks no key, but the SDK insists on a non-empty one.
        self.client = openai.OpenAI(
            api_key=self._secrets[0] if self._secrets else "EMPTY",
            **client_options(spec),
            max_retries=0,
            http_client=_wire.http_client(openai.DefaultHttpxClient),
        )
        self._replies = _wire.Replies()

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets + urls.secrets(self.spec.base_url)

    def complete(self, request: Request, *, timeout: float) -> Completion:
        # The SDK's request path from `client.post`, which `chat.completions.create` and
        # `responses.create` call after copying their typed parameters into the body: for a
        # body of plain strings and numbers that copy changes nothing and walked the
        # parameters' type annotations for ~1.2 ms of CPU, as much as the rest of the call.
        # The body is the one a Batch API line carries (`request_body`).
        import openai

        path, completion = (
            ("/responses", responses_completion)
            if self.spec.responses_api
            else ("/chat/completions", chat_body_completion)
        )
        body = self.request_body(request)
        try:
            with _wire.deadline(timeout):
                content = self.client.post(
                    path, body=body, cast_to=bytes, options={"timeout": timeout}
                )
                reply = reply_body(content)
                if self._replies.stale(body, content, reply.get("id")):
                    _wire.drop_connection()
                    content = self.client.post(
                        path, body=body, cast_to=bytes, options={"timeout": timeout}
                    )
                    reply = reply_body(content)
        except openai.OpenAIError as error:
            raise openai_error(error, timeout) from None
        return completion(reply)

    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/")

    def batch_api(self) -> OpenAIBatch:
        return OpenAIBatch(self)

    def request_body(self, request: Request) -> dict[str, Any]:
        """The request's JSON body, as `complete` sends it (the SDK's extra_body merged in)."""
        kwargs = (
            self._responses_kwargs(request)
            if self.spec.responses_api
            else self._chat_kwargs(request)
        )
        # Popped before the merge: `{**kwargs, **kwargs.pop(...)}` unpacks kwargs first and so
        # sent an "extra_body" key of its own, which strict servers (transformers serve) 422.
        extra = kwargs.pop("extra_body", {})
        return {**kwargs, **extra}

    def _chat_kwargs(self, request: Request) -> dict[str, Any]:
        kwargs = chat_messages(self.spec.model, request)
        if request.max_tokens:
            kwargs["max_completion_tokens"] = request.max_tokens
        if self.spec.effort:
            kwargs["reasoning_effort"] = self.spec.effort
        return kwargs

    def _responses_kwargs(self, request: Request) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.spec.model, "input": request.prompt}
        if request.system:
            kwargs["instructions"] = request.system
        if request.max_tokens:
            kwargs["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if self.spec.effort:
            kwargs["reasoning"] = {"effort": self.spec.effort, "summary": "auto"}
        # OpenAI's default, said: transformers serve streams a Responses reply when it is absent.
        kwargs["stream"] = False
        return kwargs


def responses_completion(body: dict[str, Any]) -> Completion:
    """A Responses API body: the text is every output_text part of the message items (as the
    SDK's `output_text`), the reasoning the summaries of the reasoning items. A reply with no
    message item (only reasoning, or a function call) is an empty answer; one whose `error` is
    set (a failed response) is that API error."""
    if failed := error_in_body(body):
        raise failed
    text, summaries = [], []
    for i, item in enumerate(json_list(body.get("output"), "output")):
        item = json_object(item, f"output[{i}]")
        if item.get("type") == "message":
            for j, part in enumerate(json_list(item.get("content"), f"output[{i}].content")):
                part = json_object(part, f"output[{i}].content[{j}]")
                if part.get("type") == "output_text":
                    text.append(json_text(part.get("text"), f"output[{i}].content[{j}].text"))
        elif item.get("type") == "reasoning":
            for j, part in enumerate(
                json_list(item.get("summary"), f"output[{i}].summary", optional=True)
            ):
                part = json_object(part, f"output[{i}].summary[{j}]")
                summaries.append(json_text(part.get("text"), f"output[{i}].summary[{j}].text"))
    usage = json_object(body.get("usage"), "usage", optional=True)
    incomplete = json_object(body.get("incomplete_details"), "incomplete_details", optional=True)
    return Completion(
        text="".join(text),
        reasoning="\n\n".join(summaries) or None,
        usage=Usage(
            input=token_count(usage.get("input_tokens"), "usage.input_tokens"),
            output=token_count(usage.get("output_tokens"), "usage.output_tokens"),
            reasoning=_detail(usage, "output_tokens_details", "reasoning_tokens"),
            cached=_detail(usage, "input_tokens_details", "cached_tokens"),
        ),
        finish_reason=json_text(
            incomplete.get("reason"), "incomplete_details.reason", optional=True
        )
        or json_text(body.get("status"), "status", optional=True),
        model=json_text(body.get("model"), "model", optional=True),
    )


def chat_messages(model: str, request: Request) -> dict[str, Any]:
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages.append({"role": "user", "content": request.prompt})
    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.seed is not None:
        kwargs["seed"] = request.seed
    return kwargs


def chat_body_completion(body: dict[str, Any]) -> Completion:
    """A Chat Completions body, checked field by field; one that is an error object (LiteLLM
    sends some failures with HTTP 200) is that API error."""
    if failed := error_in_body(body):
        raise failed
    choices = json_list(body.get("choices"), "choices")
    if not choices:
        raise MalformedReply("the reply has no choices")
    choice = json_object(choices[0], "choices[0]")
    message = json_object(choice.get("message"), "choices[0].message")
    # OpenRouter calls the reasoning text `reasoning`, vLLM and DeepSeek `reasoning_content`;
    # OpenAI itself never returns it in chat.
    reasoning = [
        json_text(message.get(k), f"choices[0].message.{k}", optional=True)
        for k in ("reasoning", "reasoning_content")
    ]
    usage = json_object(body.get("usage"), "usage", optional=True)
    return Completion(
        text=text_parts(
            message.get("content"), "choices[0].message.content"
        ),  # null: a refusal, a tool call
        reasoning=next(filter(None, reasoning), None),
        usage=Usage(
            input=token_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
            output=token_count(usage.get("completion_tokens"), "usage.completion_tokens"),
            reasoning=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
            cached=_detail(usage, "prompt_tokens_details", "cached_tokens"),
        ),
        finish_reason=json_text(
            choice.get("finish_reason"), "choices[0].finish_reason", optional=True
        ),
        model=json_text(body.get("model"), "model", optional=True),
    )


def openai_error(error: openai.OpenAIError, timeout: float | None = None) -> ProviderError:
    import openai

    if isinstance(error, openai.APITimeoutError):
        return TransientError(_wire.timed_out(timeout), kind="timeout")
    if isinstance(error, openai.APIConnectionError):
        return _wire.connection_error(error)
    if not isinstance(error, openai.APIStatusError):
        return TransientError(f"{type(error).__name__}: {error}", kind="malformed_response")
    status = error.status_code
    code = getattr(error, "code", None)
    message = f"HTTP {status}: {_message(error)}"
    if code == QUOTA_SPENT:
        return QuotaExhausted(
            f"{message}; {QUOTA_FIX}",
            kind="quota",
            status=status,
        )
    return status_error(status, message, error.response.headers)


def _message(error: openai.APIStatusError) -> str:
    """The server's explanation, in whatever shape it sent it (the SDK's own message keeps only
    OpenAI's, "Error code: 422" for transformers serve's `{"detail": ...}`)."""
    said = error_text(error.body)
    return server_text(said) if said else "no explanation in the body"


def _detail(usage: dict[str, Any], details: str, name: str) -> int:
    """A count inside one of usage's detail objects, which older models leave out."""
    return token_count(
        json_object(usage.get(details), f"usage.{details}", optional=True).get(name),
        f"usage.{details}.{name}",
    )


# -- the Batch API -----------------------------------------------------------------------------

BATCH_METADATA_KEY = "roblox_evals_submission"


class OpenAIBatch(BatchAPI):
    """OpenAI's Batch API, and any endpoint that speaks it (`live`): the requests go up as a
    JSONL file through the Files API, named after the submission, and the batch carries the
    name in its metadata, so an upload or a batch a killed run left is found, not made again."""

    max_requests = 50_000
    max_bytes = 200_000_000

    def __init__(self, provider: OpenAIProvider):
        self.provider = provider
        self.client = provider.client
        self.endpoint: Literal["/v1/responses", "/v1/chat/completions"] = (
            "/v1/responses" if provider.spec.responses_api else "/v1/chat/completions"
        )
        self.completion = (
            responses_completion if provider.spec.responses_api else chat_body_completion
        )

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        return {
            "custom_id": custom_id,
            "method": "POST",
            "url": self.endpoint,
            "body": self.provider.request_body(request),
        }

    def submit(
        self, name: str, lines: list[dict[str, Any]], *, since: float, sending: Callable[[], None]
    ) -> BatchState:
        with _translated():
            if found := self._find_batch(name, since):
                return found
            file_id = self._find_upload(name, since)
            sending()
            file_id = file_id or self._upload(name, lines)
            raw = self.client.batches.with_raw_response.create(
                input_file_id=file_id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={BATCH_METADATA_KEY: name},
            )
            return _batch_state(batch_reply(raw.http_response.content))

    def find(self, name: str, *, since: float) -> BatchState | None:
        with _translated():
            return self._find_batch(name, since)

    def _find_batch(self, name: str, since: float) -> BatchState | None:
        import openai

        try:
            first = self.client.batches.list(limit=100)
        except openai.APIStatusError as error:
            if error.status_code not in (404, 405, 501):
                raise
            raise BatchUnsupported(
                f"--batch: {self.provider.spec.base_url or self.client.base_url} does not speak "
                f"the OpenAI Batch API (HTTP {error.status_code} "
                "on its /batches); run without --batch"
            ) from None
        for batch in _newest(first, since):
            if (getattr(batch, "metadata", None) or {}).get(BATCH_METADATA_KEY) == name:
                return self.retrieve(batch.id)
        return None

    def _find_upload(self, name: str, since: float) -> str | None:
        for upload in _newest(self.client.files.list(purpose="batch", limit=100), since):
            if upload.filename == f"{name}.jsonl" and getattr(upload, "status", None) != "error":
                return upload.id
        return None

    def _upload(self, name: str, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        raw = self.client.files.with_raw_response.create(
            file=(f"{name}.jsonl", data, "application/jsonl"), purpose="batch"
        )
        return json_text(batch_reply(raw.http_response.content).get("id"), "id")

    def retrieve(self, batch_id: str) -> BatchState:
        with _translated():
            return _batch_state(
                batch_reply(
                    self.client.batches.with_raw_response.retrieve(batch_id).http_response.content
                )
            )

    def results(self, state: BatchState) -> Iterator[tuple[str, RequestOutcome]]:
        for file_id in state.results:
            with _translated():
                content = self.client.files.with_raw_response.content(file_id).http_response.content
            for text in content.decode("utf-8", "replace").splitlines():
                try:
                    line = json.loads(text)
                except ValueError:
                    continue  # a line we cannot read leaves its request without an outcome: resubmitted
                if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                    yield line["custom_id"], self._outcome(line)

    def _outcome(self, line: dict[str, Any]) -> RequestOutcome:
        """A result line. A request the API answered has its HTTP status and body under
        `response` (`error` then null, even for a 400); one the batch never ran has a null
        response and a top-level `error` (batch_expired, batch_cancelled)."""
        try:
            response = json_object(line.get("response"), "response", optional=True)
            if response:
                status, body = (
                    response.get("status_code"),
                    json_object(response.get("body"), "response.body"),
                )
                if status == 200:
                    return self.completion(body)
                detail = json_object(body.get("error"), "response.body.error", optional=True)
                message = detail.get("message")
                return line_error(
                    status if isinstance(status, int) else 500,
                    message if isinstance(message, str) else "no message",
                )
            error = json_object(line.get("error"), "error")
            code = error.get("code") if isinstance(error.get("code"), str) else "unknown"
            if code in ("batch_expired", "batch_cancelled"):
                return not_run(code.removeprefix("batch_"))
            message = error.get("message") if isinstance(error.get("message"), str) else code
            return ProviderError(f"batch error {code}: {message}", kind="bad_request")
        except ProviderError as error:
            return error


def _newest(page: Any, since: float) -> Iterator[Any]:
    """The objects of an SDK list page and the pages after it, one request per page, at most
    FIND_PAGES pages, ending with the page that reaches back past `since` (lists are newest
    first): a lookup costs what the pages cost, not one request per object on a server that
    serves small pages."""
    for pages in range(1, FIND_PAGES + 1):
        items = page.data or []
        yield from items
        times = [
            created
            for item in items
            if isinstance(created := getattr(item, "created_at", None), int | float)
        ]
        if (
            pages == FIND_PAGES
            or any(created < since - FIND_SKEW for created in times)
            or not page.has_next_page()
        ):
            return
        page = page.get_next_page()


def _batch_state(body: dict[str, Any]) -> BatchState:
    counts = json_object(body.get("request_counts"), "request_counts", optional=True)
    errors = json_list(
        json_object(body.get("errors"), "errors", optional=True).get("data"),
        "errors.data",
        optional=True,
    )
    problem = "; ".join(str(e.get("message")) for e in errors if isinstance(e, dict)) or None
    status = json_text(body.get("status"), "status")
    return BatchState(
        id=json_text(body.get("id"), "id"),
        status=status,
        ended=status in ("completed", "failed", "expired", "cancelled"),
        counts={
            k: token_count(counts.get(k), f"request_counts.{k}")
            for k in ("completed", "failed", "total")
        },
        problem=problem,
        results=tuple(
            f
            for f in (body.get("output_file_id"), body.get("error_file_id"))
            if isinstance(f, str) and f
        ),
    )


@contextlib.contextmanager
def _translated():
    import openai

    try:
        yield
    except openai.OpenAIError as error:
        raise openai_error(error) from None
