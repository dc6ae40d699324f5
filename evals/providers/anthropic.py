"""Anthropic Messages API, with extended thinking under `--thinking`.

Thinking tokens are billed inside `output_tokens` and not reported separately, so
`Usage.reasoning` stays 0 here; the thinking text itself is kept as the reasoning."""

from __future__ import annotations

from typing import Any

import anthropic

from evals.errors import ProviderError, QuotaExhausted, TransientError

from ._base import Completion, Provider, ProviderSpec, Request, Usage, api_key_from_env, status_error

# Models on which the SDK deprecates a fixed thinking budget in favour of adaptive thinking.
try:
    from anthropic._data import MODELS_TO_WARN_WITH_THINKING_ENABLED as _ADAPTIVE_THINKING_MODELS
except ImportError:  # an SDK without the list: every model takes a budget
    _ADAPTIVE_THINKING_MODELS = frozenset()

DEFAULT_MAX_TOKENS = 8192
THINKING_MAX_TOKENS = 32000
THINKING_BUDGET = 16000


class AnthropicProvider(Provider):
    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        self._api_key = api_key_from_env(spec.api_key_env or "ANTHROPIC_API_KEY", required=True)
        self.client = anthropic.Anthropic(api_key=self._api_key, base_url=spec.base_url, max_retries=0)

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

    def complete(self, request: Request, *, timeout: float) -> Completion:
        try:
            message = self.client.messages.create(**self._kwargs(request), timeout=timeout)
        except anthropic.AnthropicError as error:
            raise anthropic_error(error) from None
        except ValueError as error:  # a garbled body
            raise TransientError(f"the response body is not valid JSON: {error}", kind="malformed_response") from None
        text, thinking = [], []
        for block in message.content:
            if block.type == "text":
                text.append(block.text)
            elif block.type == "thinking":
                thinking.append(block.thinking)
            elif block.type == "redacted_thinking":
                thinking.append("[redacted thinking]")
        usage = message.usage
        cached = usage.cache_read_input_tokens or 0
        return Completion(
            text="".join(text),
            reasoning="\n\n".join(thinking) or None,
            usage=Usage(
                # Anthropic's input_tokens leaves out the tokens read from or written to its cache.
                input=usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0),
                output=usage.output_tokens,
                cached=cached,
            ),
            finish_reason=message.stop_reason,
            model=message.model,
        )

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
        if thinking and self.spec.model in _ADAPTIVE_THINKING_MODELS:
            kwargs["thinking"] = {"type": "adaptive"}
        elif thinking:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": min(THINKING_BUDGET, max_tokens - 1024)}
        if self.spec.effort:
            kwargs["output_config"] = {"effort": self.spec.effort}
        # No temperature: the Messages API of current models takes none (the SDK dropped it),
        # so an Anthropic judge's identity records none either.
        return kwargs


def anthropic_error(error: anthropic.AnthropicError) -> ProviderError:
    if isinstance(error, anthropic.APITimeoutError):
        return TransientError("the request timed out", kind="timeout")
    if isinstance(error, anthropic.APIConnectionError):
        return TransientError(f"connection failed: {error}", kind="connection")
    if not isinstance(error, anthropic.APIStatusError):
        return TransientError(f"{type(error).__name__}: {error}", kind="malformed_response")
    status = error.status_code
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else {}
    message = f"HTTP {status}: {detail.get('message') or error.message}"
    if status == 400 and "credit balance" in message.lower():
        return QuotaExhausted(f"{message}; add credit, then rerun to resume", kind="quota", status=status)
    return status_error(status, message, error.response.headers)
