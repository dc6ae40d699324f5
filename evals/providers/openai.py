"""OpenAI: Chat Completions, or the Responses API with `--responses-api`.

`chat_completion` and `openai_error` are shared with `live`, which speaks the same protocol
to any OpenAI-compatible endpoint."""

from __future__ import annotations

import json
from typing import Any

import openai

from evals.errors import ProviderError, QuotaExhausted, TransientError

from ._base import Completion, Provider, ProviderSpec, Request, Usage, api_key_from_env, status_error


class OpenAIProvider(Provider):
    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        self._api_key = self._key()
        # The SDK's own retries are off: `_retry` retries, honouring Retry-After and the throttle.
        self.client = openai.OpenAI(api_key=self._api_key, base_url=spec.base_url, max_retries=0)

    def _key(self) -> str:
        return api_key_from_env(self.spec.api_key_env or "OPENAI_API_KEY", required=True)

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

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
        response = parsed(lambda: self.client.responses.create(**kwargs, timeout=timeout))
        summaries = [
            part.text
            for item in response.output or []
            if item.type == "reasoning"
            for part in (item.summary or [])
        ]
        usage = response.usage
        finish = response.status
        if response.incomplete_details and response.incomplete_details.reason:
            finish = response.incomplete_details.reason
        return Completion(
            text=response.output_text or "",
            reasoning="\n\n".join(summaries) or None,
            usage=Usage(
                input=usage.input_tokens if usage else 0,
                output=usage.output_tokens if usage else 0,
                reasoning=_detail(usage and usage.output_tokens_details, "reasoning_tokens"),
                cached=_detail(usage and usage.input_tokens_details, "cached_tokens"),
            ),
            finish_reason=finish,
            model=response.model,
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
    response = parsed(lambda: client.chat.completions.create(**kwargs, timeout=timeout))
    if not response.choices:
        raise TransientError("the response has no choices", kind="malformed_response")
    choice = response.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    # OpenRouter calls the reasoning text `reasoning`, vLLM and DeepSeek `reasoning_content`;
    # OpenAI itself never returns it in chat.
    reasoning = extra.get("reasoning") or extra.get("reasoning_content")
    usage = response.usage
    return Completion(
        text=message.content or "",
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        usage=Usage(
            input=usage.prompt_tokens if usage else 0,
            output=usage.completion_tokens if usage else 0,
            reasoning=_detail(usage and usage.completion_tokens_details, "reasoning_tokens"),
            cached=_detail(usage and usage.prompt_tokens_details, "cached_tokens"),
        ),
        finish_reason=choice.finish_reason,
        model=response.model,
    )


def parsed(call):
    """Run an SDK call, turning a garbled 200 body into a retryable error."""
    try:
        return call()
    except (json.JSONDecodeError, openai.APIResponseValidationError) as error:
        raise TransientError(f"the response body is not valid JSON: {error}", kind="malformed_response") from None


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


def _detail(details: Any, name: str) -> int:
    return (getattr(details, name, None) or 0) if details else 0
