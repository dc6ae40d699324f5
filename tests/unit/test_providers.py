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


def test_a_wait_asked_for_is_never_negative_nor_nan():
    """`retry-after-ms: -5000` made a negative wait (time.sleep refused it, and it gave back
    patience), `nan` one that no limit stopped; the Retry-After header's values alike."""
    from evals.providers._base import retry_after

    assert retry_after({"retry-after-ms": "-5000"}) == 0.0
    assert retry_after({"retry-after-ms": "nan"}) is None
    assert retry_after({"retry-after-ms": "nan", "retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "nan"}) is None
    assert retry_after({"retry-after": "-5"}) == 0.0
    assert retry_after({"retry-after": "inf"}) == float("inf")  # past any patience: one line
    assert retry_after({"retry-after-ms": "1500"}) == 1.5


def test_an_error_code_of_other_digits_is_no_status():
    """`"4²9".isdigit()` is true and int() refused it: the error reader crashed."""
    from evals.providers._base import error_status

    assert error_status({"code": "4²9"}) is None
    assert error_status({"code": "٤٢٩"}) is None
    assert error_status({"code": "429"}) == (429, "429")
