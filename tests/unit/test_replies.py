"""What is written carries no key: `Scrub` redacts the longest key first, leaves placeholders and
clean text alone, and escapes a cut surrogate the same on every pass. An item's calls through
`EvalRun` against loopback servers are tests/e2e/test_replies.py."""

from __future__ import annotations

from evals.scrub import Scrub


def test_scrub_redacts_the_longest_key_first_and_leaves_placeholders_and_clean_text_alone():
    scrub = Scrub(["fake-short-12345", "fake-short-12345-and-more", "EMPTY", ""])

    assert scrub("a fake-short-12345-and-more b fake-short-12345") == "a <redacted> b <redacted>"
    assert scrub({"EMPTY": ["local EMPTY = {}", 3, None]}) == {
        "EMPTY": ["local EMPTY = {}", 3, None]
    }
    assert scrub("cut \ud83d here, whole 😀 there") == "cut \\ud83d here, whole 😀 there"
    assert scrub(scrub("cut \ud83d")) == scrub("cut \ud83d")
