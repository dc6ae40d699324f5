"""A provider without its API key is a usage error naming the variable, before any request. Each
provider against a loopback server speaking its wire protocol is tests/e2e/test_providers.py."""

from __future__ import annotations

import pytest

from evals.errors import UsageError
from evals.providers import (
    ProviderSpec,
    make_provider,
)
from tests.support.keys import api_keys  # noqa: F401 (autouse: every test runs with the fake keys)


def test_a_missing_api_key_is_a_usage_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        make_provider(ProviderSpec("anthropic", "claude-opus-4-6"))


# -- 200 replies of the wrong shape ---------------------------------------------------------
# Each is a malformed_response: retried like a garbled body, then the item's API error; never
# an AttributeError, a TypeError later in the token totals, or a Completion of the wrong types.


# -- what the wire itself does: deadlines, stale replies, redirects, oversized replies ------
