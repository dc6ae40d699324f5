"""The `live` provider itself (registered by `evals.providers.live`, which imports this module
at the first call): any OpenAI-compatible endpoint (OpenRouter, vLLM, llama.cpp, ...).

It speaks Chat Completions through the official SDK; only the knobs that endpoints spell
differently are translated here: OpenRouter's provider routing and reasoning object, and
the `enable_thinking` template flag that vLLM and llama.cpp servers read."""

from __future__ import annotations

from typing import Any

from ._base import Request, is_openrouter
from ._openai import OpenAIProvider, chat_messages


class LiveProvider(OpenAIProvider):
    def _chat_kwargs(self, request: Request) -> dict[str, Any]:
        kwargs = chat_messages(self.spec.model, request)
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        extra: dict[str, Any] = {}
        if is_openrouter(self.spec.base_url):
            if self.spec.route:
                extra["provider"] = {"order": [self.spec.route], "allow_fallbacks": False}
            if self.spec.effort:
                extra["reasoning"] = {"effort": self.spec.effort}
        elif self.spec.effort:
            kwargs["reasoning_effort"] = self.spec.effort
        if self.spec.thinking:
            extra["chat_template_kwargs"] = {"enable_thinking": True}
        if extra:
            kwargs["extra_body"] = extra
        return kwargs
