"""What a run's identity is made of: each flag's value as sent, and the fields that shape a run,
for the identity tests."""

from __future__ import annotations

# A value for each field a provider sends, beside its default.
SENT = {
    "effort": "high",
    "thinking": True,
    "route": "deepinfra",
    "max_tokens": 321,
    "adapter": "ADAPTER",  # the tiny model's adapter folder (`local_model`)
    "dtype": "bfloat16",
}


# Fields that shape the items, the same for every provider: value, and how the run differs.
SHAPING = {"system_prompt_prefix": "You are terse.", "epochs": 2, "limit": 2, "split": "train"}


IMPLICIT = {"provider", "model", "base_url"}  # base_url: tested below, as the effective endpoint
