"""`live`: any OpenAI-compatible endpoint (OpenRouter, vLLM, llama.cpp, ...), through the
official OpenAI SDK.

This module registers the provider and imports little more; the provider itself,
`LiveProvider`, is in `_live.py`, imported at the first call (its name is re-exported here)."""

from __future__ import annotations

from evals.lazy import names_from
from evals.providers import ProviderInfo, register_provider

from .openai import EFFORTS

# Its Batch API is OpenAI's, where the endpoint speaks it (`OpenAIBatch` finds out).
register_provider(
    "live",
    ProviderInfo(
        "evals.providers._live:LiveProvider",
        frozenset({"base_url", "effort", "thinking", "route", "max_tokens"}),
        EFFORTS,
        needs_base_url=True,
        openrouter_key_env="OPENROUTER_API_KEY",
        batch_price=0.5,
        batch_name="live endpoints that speak OpenAI's",
        sdk=("openai",),
        position=30,
    ),
)

__getattr__ = names_from(__package__, {"LiveProvider": "_live"}, globals())
