"""Reply parsing finishes on any reply: code extraction, letter extraction, verdict parsing and
the reasoning splitter on the adversarial replies of `tests/support/adversarial_replies.py` (unclosed
fences, thousands of "Answer:" leads, runs of parentheses, markup, blank space and newlines,
reasoning tags, ...) at 1 MB.

This is a hang guard, not a speed test. Each reply is parsed in a child process, and a
parse that has not answered after GUARD_SECONDS fails the test; the child is killed and the
next test starts another. Linear parsing of a 1 MB reply takes well under a second on a slow,
busy machine (the two 8 MB ones below, a few seconds): the guard is 10 to 100 times that.
The quadratic parsers they replace took minutes to hours on them (a 112 KB reply of unclosed
fences took 66 s), so they fail whatever the machine. How fast parsing is, is measured by
`bench/parse.py`.

The child answers with what the parsers made of the reply, checked against the table."""

from __future__ import annotations

import json
import select
import subprocess
import sys

import pytest

from tests.support.adversarial_replies import REPLIES, parse_all


@pytest.mark.parametrize("reply", REPLIES, ids=[r.name for r in REPLIES])
def test_small_replies_parse_the_same(reply):
    """At 4 KB, in this process: what the table says holds whatever the size."""
    assert parse_all(reply.build(4096)) == {"letter": reply.letter, "verdict": reply.verdict, "code": reply.code, "reasoning": reply.reasoning}


