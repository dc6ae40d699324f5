"""Anthropic: the Messages API, with extended thinking under `--thinking`.

This module registers the provider and imports little more: pytest's process imports it
before it starts the child that asks the model (`evals.askers.processes.prestart`). The
provider itself, `AnthropicProvider`, and its Batch API are in `_anthropic.py`, imported at
the first call; their names are re-exported here."""

from __future__ import annotations

from evals.lazy import names_from
from evals.providers import ProviderInfo, register_provider

# The Messages API takes effort as output_config.effort, and no temperature on current models.
register_provider(
    "anthropic",
    ProviderInfo(
        "evals.providers._anthropic:AnthropicProvider",
        frozenset({"base_url", "effort", "thinking", "max_tokens"}),
        ("low", "medium", "high", "xhigh", "max"),
        sampling=False,
        base_url_env="ANTHROPIC_BASE_URL",
        key_env="ANTHROPIC_API_KEY",
        batch_price=0.5,
        sdk=("anthropic",),
        position=20,
    ),
)

_MODULE = dict.fromkeys(
    (
        "AnthropicBatch",
        "AnthropicProvider",
        "anthropic_error",
        "message_completion",
        "DEFAULT_MAX_TOKENS",
        "THINKING_BUDGET",
        "THINKING_MAX_TOKENS",
    ),
    "_anthropic",
)
__getattr__ = names_from(__package__, _MODULE, globals())
