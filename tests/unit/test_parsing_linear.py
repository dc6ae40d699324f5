"""Reply parsing on the adversarial replies of `tests/support/adversarial_replies.py` (unclosed
fences, thousands of "Answer:" leads, runs of parentheses, markup, blank space, reasoning tags,
...) at 4 KB, in this process: code extraction, letter extraction, verdict parsing and the
reasoning splitter make of each what its table says. That they finish at 1 MB, under a hang
guard, is tests/e2e/test_parsing_linear.py."""

from __future__ import annotations

import json
import select
import sys

import pytest

from tests.support.adversarial_replies import REPLIES, parse_all


@pytest.mark.parametrize("reply", REPLIES, ids=[r.name for r in REPLIES])
def test_small_replies_parse_the_same(reply):
    """At 4 KB, in this process: what the table says holds whatever the size."""
    assert parse_all(reply.build(4096)) == {
        "letter": reply.letter,
        "verdict": reply.verdict,
        "code": reply.code,
        "reasoning": reply.reasoning,
    }
