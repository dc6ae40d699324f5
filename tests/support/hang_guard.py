"""A guard for the parsers' linear-time tests: a parser run in a child process that is killed when it takes too long."""

from __future__ import annotations

import json
import select
import subprocess
import sys

import pytest

from tests.support import ROOT

GUARD_SECONDS = 30.0


class HangGuard:
    """A child Python process that parses generated replies; one that has not answered
    within the limit is killed (and the next request starts a new child)."""

    def __init__(self):
        self.child: subprocess.Popen | None = None

    def parse(self, name: str, size: int, limit: float = GUARD_SECONDS) -> dict:
        if self.child is None:
            self.child = subprocess.Popen(
                [sys.executable, "-m", "tests.support.adversarial_replies", "--serve"],
                cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
        self.child.stdin.write(f"{name} {size}\n")
        self.child.stdin.flush()
        ready, _, _ = select.select([self.child.stdout], [], [], limit)
        if not ready:
            self.close()
            pytest.fail(f"parsing the {size // 1024} KB reply {name!r} did not finish within {limit:g} s: it hangs", pytrace=False)
        line = self.child.stdout.readline()
        if not line:
            code = self.child.wait()
            self.child = None
            pytest.fail(f"the parsing child exited with {code} on {name!r}", pytrace=False)
        return json.loads(line)

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            self.child = None


@pytest.fixture(scope="module")
def guard():
    guard = HangGuard()
    yield guard
    guard.close()
