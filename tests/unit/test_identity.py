"""The identity is what is sent: for every provider and every identity flag, the loopback
server receives a different request when the flag changes, and the result file records it;
or the flag is refused for that provider with one line. The cases are derived from the one
identity table (`evals.identity.FIELDS`) and the providers' own capabilities, so a new flag
or provider without a case here fails."""

from __future__ import annotations

from evals.identity import FIELDS

pytest_plugins = ["pytester"]



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


def test_every_identity_field_has_a_case_here():
    covered = set(SENT) | set(SHAPING) | IMPLICIT
    assert {f.name for f in FIELDS} <= covered


