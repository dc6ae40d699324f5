"""A guard for the parsers' linear-time tests: a parser run in a child process that is killed
when it has spent too long on a reply. Too long is CPU time, not wall time: on a machine kept
busy by another job an 8 MB reply took over 30 s of wall time to parse, linearly."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time

import pytest

from tests.support import ROOT
from tests.support.harness import cpu_seconds

GUARD_SECONDS = 30.0  # of the child's CPU
WALL_SECONDS = 600.0  # where its CPU cannot be read (no /proc), or it waits on nothing


class HangGuard:
    """A child Python process that parses generated replies; one that has spent the limit's
    CPU time without answering is killed (and the next request starts a new child)."""

    def __init__(self):
        self.child: subprocess.Popen | None = None

    def parse(self, name: str, size: int, limit: float = GUARD_SECONDS) -> dict:
        if self.child is None:
            self.child = subprocess.Popen(
                [sys.executable, "-m", "tests.support.adversarial_replies", "--serve"],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        self.child.stdin.write(f"{name} {size}\n")
        self.child.stdin.flush()
        started, spent = time.monotonic(), cpu_seconds(self.child.pid) or 0.0
        ready = False
        while not ready:
            ready = bool(select.select([self.child.stdout], [], [], 0.5)[0])
            used = cpu_seconds(self.child.pid)
            if not ready and (
                (used is not None and used - spent > limit)
                or time.monotonic() - started > WALL_SECONDS
            ):
                break
        if not ready:
            self.close()
            pytest.fail(
                f"parsing the {size // 1024} KB reply {name!r} did not finish within {limit:g} s of CPU: it hangs",
                pytrace=False,
            )
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
