"""OpenAI: Chat Completions, or the Responses API with `--responses-api`.

`chat_completion` and `openai_error` are shared with `live`, which speaks the same protocol
to any OpenAI-compatible endpoint."""

from __future__ import annotations

from typing import Any

import openai

from evals.errors import ProviderError, QuotaExhausted, TransientError

from ._base import (Completion, MalformedReply, Provider, ProviderSpec, Request, Usage, api_key_from_env, json_list,
                    json_object, json_text, reply_body, status_error, token_count)


class OpenAIProvider(Provider):
    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        variable = self.key_variable(spec)
        self._secrets = (api_key_from_env(variable, required=True),) if variable else ()
        # The SDK's own retries are off: `_retry` retries, honouring Retry-After and the throttle.
        # A local server usually checks no key, but the SDK insists on a non-empty one.
        self.client = openai.OpenAI(api_key=self._secrets[0] if self._secrets else "EMPTY", base_url=spec.base_url, max_retries=0)

    @classmethod
    def key_variable(cls, spec: ProviderSpec) -> str | None:
        return spec.api_key_env or "OPENAI_API_KEY"

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def complete(self, request: Request, *, timeout: float) -> Completion:
        try:
            if self.spec.responses_api:
                return self._responses(request, timeout)
            return chat_completion(self.client, self._chat_kwargs(request), timeout)
        except openai.OpenAIError as error:
            raise openai_error(error) from None

    def _chat_kwargs(self, request: Request) -> dict[str, Any]:
        kwargs = chat_messages(self.spec.model, request)
        if request.max_tokens:
            kwargs["max_completion_tokens"] = request.max_tokens
        if self.spec.effort:
            kwargs["reasoning_effort"] = self.spec.effort
        return kwargs

    def _responses(self, request: Request, timeout: float) -> Completion:
        kwargs: dict[str, Any] = {"model": self.spec.model, "input": request.prompt}
        if request.system:
            kwargs["instructions"] = request.system
        if request.max_tokens:
            kwargs["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if self.spec.effort:
            kwargs["reasoning"] = {"effort": self.spec.effort, "summary": "auto"}
        body = reply_body(self.client.responses.with_raw_response.create(**kwargs, timeout=timeout).http_response.content)
        return responses_completion(body)


def responses_completion(body: dict[str, Any]) -> Completion:
    """A Responses API body: the text is every output_text part of the message items (as the
    SDK's `output_text`), the reasoning the summaries of the reasoning items. A reply with no
    message item (only reasoning, or a function call) is an empty answer."""
    text, summaries = [], []
    for i, item in enumerate(json_list(body.get("output"), "output")):
        item = json_object(item, f"output[{i}]")
        if item.get("type") == "message":
            for j, part in enumerate(json_list(item.get("content"), f"output[{i}].content")):
                part = json_object(part, f"output[{i}].content[{j}]")
                if part.get("type") == "output_text":
                    text.append(json_text(part.get("text"), f"output[{i}].content[{j}].text"))
        elif item.get("type") == "reasoning":
            for j, part in enumerate(json_list(item.get("summary"), f"output[{i}].summary", optional=True)):
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
        finish_reason=json_text(incomplete.get("reason"), "incomplete_details.reason", optional=True)
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


def chat_completion(client: openai.OpenAI, kwargs: dict[str, Any], timeout: float) -> Completion:
    raw = client.chat.completions.with_raw_response.create(**kwargs, timeout=timeout)
    body = reply_body(raw.http_response.content)
    choices = json_list(body.get("choices"), "choices")
    if not choices:
        raise MalformedReply("the reply has no choices")
    choice = json_object(choices[0], "choices[0]")
    message = json_object(choice.get("message"), "choices[0].message")
    # OpenRouter calls the reasoning text `reasoning`, vLLM and DeepSeek `reasoning_content`;
    # OpenAI itself never returns it in chat.
    reasoning = [json_text(message.get(k), f"choices[0].message.{k}", optional=True) for k in ("reasoning", "reasoning_content")]
    usage = json_object(body.get("usage"), "usage", optional=True)
    return Completion(
        text=json_text(message.get("content"), "choices[0].message.content", optional=True) or "",  # null: a refusal, a tool call
        reasoning=next(filter(None, reasoning), None),
        usage=Usage(
            input=token_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
            output=token_count(usage.get("completion_tokens"), "usage.completion_tokens"),
            reasoning=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
            cached=_detail(usage, "prompt_tokens_details", "cached_tokens"),
        ),
        finish_reason=json_text(choice.get("finish_reason"), "choices[0].finish_reason", optional=True),
        model=json_text(body.get("model"), "model", optional=True),
    )


def openai_error(error: openai.OpenAIError) -> ProviderError:
    if isinstance(error, openai.APITimeoutError):
        return TransientError("the request timed out", kind="timeout")
    if isinstance(error, openai.APIConnectionError):
        return TransientError(f"connection failed: {error}", kind="connection")
    if not isinstance(error, openai.APIStatusError):
        return TransientError(f"{type(error).__name__}: {error}", kind="malformed_response")
    status = error.status_code
    code = getattr(error, "code", None)
    message = f"HTTP {status}: {_message(error)}"
    if code == "insufficient_quota":
        return QuotaExhausted(f"{message}; add credit to the account, then rerun to resume", kind="quota", status=status)
    return status_error(status, message, error.response.headers)


def _message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(error.message)


def _detail(usage: dict[str, Any], details: str, name: str) -> int:
    """A count inside one of usage's detail objects, which older models leave out."""
    return token_count(json_object(usage.get(details), f"usage.{details}", optional=True).get(name), f"usage.{details}.{name}")
