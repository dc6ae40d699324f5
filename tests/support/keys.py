"""The fake API keys every provider's tests run with."""

from __future__ import annotations

import pytest

KEY = "fake-provider-test-key"


@pytest.fixture(autouse=True)
def api_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
