"""Providers behind one interface: `make_provider(spec)` and `Provider.complete(request)`."""

from __future__ import annotations

import importlib

from evals.errors import UsageError

from ._base import Completion, Provider, ProviderSpec, Request, Usage, api_key_from_env, is_openrouter
from ._retry import RetryPolicy, Throttle, call_with_retries, redact

__all__ = [
    "PROVIDERS",
    "Completion",
    "Provider",
    "ProviderSpec",
    "Request",
    "RetryPolicy",
    "Throttle",
    "Usage",
    "api_key_from_env",
    "call_with_retries",
    "is_openrouter",
    "make_provider",
    "redact",
]

# name -> "module:Class", imported on first use so that an offline run never loads an SDK.
PROVIDERS = {
    "openai": "evals.providers.openai:OpenAIProvider",
    "anthropic": "evals.providers.anthropic:AnthropicProvider",
    "live": "evals.providers.live:LiveProvider",
    "reference": "evals.providers.reference:ReferenceProvider",
}
PLANNED = {"local": "the local checkpoint provider is not implemented yet; use --provider live against a vLLM or llama.cpp server for now"}


def make_provider(spec: ProviderSpec) -> Provider:
    if spec.provider in PLANNED:
        raise UsageError(f"--provider {spec.provider}: {PLANNED[spec.provider]}")
    if spec.provider not in PROVIDERS:
        raise UsageError(f"--provider {spec.provider!r} is unknown; choose one of {', '.join(PROVIDERS)}")
    module, cls = PROVIDERS[spec.provider].split(":")
    return getattr(importlib.import_module(module), cls)(spec)
