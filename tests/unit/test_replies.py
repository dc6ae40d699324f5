"""An item's calls through `EvalRun` and its run cache, in process, against loopback servers and
the real SDKs: a bad reply is the item's API error, and what is written carries no key."""

from __future__ import annotations

from evals.scrub import Scrub


def test_scrub_redacts_the_longest_key_first_and_leaves_placeholders_and_clean_text_alone():
    scrub = Scrub(["fake-short-12345", "fake-short-12345-and-more", "EMPTY", ""])

    assert scrub("a fake-short-12345-and-more b fake-short-12345") == "a <redacted> b <redacted>"
    assert scrub({"EMPTY": ["local EMPTY = {}", 3, None]}) == {"EMPTY": ["local EMPTY = {}", 3, None]}
    assert scrub("cut \ud83d here, whole 😀 there") == "cut \\ud83d here, whole 😀 there"
    assert scrub(scrub("cut \ud83d")) == scrub("cut \ud83d")
