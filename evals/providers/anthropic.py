"""Anthropic Messages API, with extended thinking under `--thinking`.

Thinking tokens are billed inside `output_tokens` and not reported separately, so
`Usage.reasoning` stays 0 here; the thinking text itself is kept as the reasoning."""

from __future__ import annotations

from typing import Any

import anthropic

from evals.errors import ProviderError, QuotaExhausted, TransientError

from ._base import (Completion, Provider, ProviderSpec, Request, Usage, api_key_from_env, json_list, json_object, json_text,
                    reply_body, status_error, token_count)

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
        self._api_key = api_key_from_env(self.key_variable(spec), required=True)
        self.client = anthropic.Anthropic(api_key=self._api_key, base_url=spec.base_url, max_retries=0)

    @classmethod
    def key_variable(cls, spec: ProviderSpec) -> str | None:
        return spec.api_key_env or "ANTHROPIC_API_KEY"

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

    def complete(self, request: Request, *, timeout: float) -> Completion:
        try:
            raw = self.client.messages.with_raw_response.create(**self._kwargs(request), timeout=timeout)
        except anthropic.AnthropicError as error:
            raise anthropic_error(error) from None
        return message_completion(reply_body(raw.http_response.content))

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


def message_completion(body: dict[str, Any]) -> Completion:
    """A Messages API body. Blocks other than text and thinking (tool use, server tools, types
    newer than this harness) carry no answer and are skipped; a refusal is the text it has
    (often none) with finish reason "refusal"; a reply without usage counts no tokens."""
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
    written = token_count(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens")
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
