"""Reply parsing finishes on any reply: code extraction, letter extraction, verdict parsing and
the reasoning splitter on the adversarial replies of `tests/support/adversarial_replies.py` at
1 MB and more, checked against their table; at 4 KB in process, tests/unit/test_parsing_linear.py.

This is a hang guard, not a speed test (`bench/parse.py` measures speed). Each reply is parsed in
a child process (tests/support/hang_guard.py), a real exec because only a process of its own can
be stopped mid-parse: one that has spent GUARD_SECONDS of CPU without answering is killed and fails the test,
and the next test starts another. Linear parsers finish well within the guard on a slow machine;
the quadratic ones they replaced took minutes to hours, so they fail whatever the machine."""

from __future__ import annotations

import json
import select
import subprocess
import sys

import pytest

from tests.support.adversarial_replies import REPLIES
from tests.support.hang_guard import guard

MB = 1024 * 1024
# Two replies were quadratic only through copies of the rest of the reply, which are quick
# (4-5 s at 1 MB): at 8 MB they take many minutes.
SIZES = {"answer-leads": 8 * MB, "which-is-paren": 8 * MB}


@pytest.mark.parametrize("reply", REPLIES, ids=[r.name for r in REPLIES])
def test_parsers_finish_adversarial_replies(guard, reply):
    parsed = guard.parse(reply.name, SIZES.get(reply.name, MB))
    assert parsed == {
        "letter": reply.letter,
        "verdict": reply.verdict,
        "code": reply.code,
        "reasoning": reply.reasoning,
    }


def test_the_guard_stops_a_parse_that_hangs(guard):
    """A child that does not answer fails the test in time, and the next request gets a new one."""
    with pytest.raises(pytest.fail.Exception, match="did not finish within 0.5 s of CPU"):
        guard.parse("spin", 60, limit=0.5)
    assert guard.parse("answer-leads", 4096) == {
        "letter": "B",
        "verdict": None,
        "code": False,
        "reasoning": False,
    }
