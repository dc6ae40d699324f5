"""How messages speak: a list in words, and the "did you mean" a typo gets (pytest's
`--provider` and evaluate's options alike; the commands are tests/e2e/test_evaluate.py)."""

from __future__ import annotations

import pytest

from evals.providers import unknown_provider
from evals.words import did_you_mean, either, in_words


def test_a_list_and_a_count_in_words():
    assert either(["mc", "ff", "lc"]) == "mc, ff or lc" and in_words(3) == "three"


@pytest.mark.parametrize(
    "typed, known, says",
    [
        ("opena", ["openai", "anthropic", "live"], " (did you mean 'openai'?)"),
        ("--concurency", ["--concurrency", "--cost"], " (did you mean '--concurrency'?)"),
        ("zzz", ["openai", "anthropic"], ""),  # nothing close: no guess
    ],
)
def test_did_you_mean_names_the_closest_known_word_or_nothing(typed, known, says):
    assert did_you_mean(typed, known) == says


def test_an_unknown_provider_is_one_line_with_the_closest_and_every_choice():
    line = unknown_provider("antropic")
    assert line.startswith(
        "--provider 'antropic' is unknown (did you mean 'anthropic'?); choose one of"
    )
    assert "openai" in line and "\n" not in line
