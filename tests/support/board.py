"""The leaderboard's commands as a maintainer runs them, in a child process: `evaluate` a model
into a data folder, verify it offline (`-p tests.support.no_network`), and read its entry back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals import models_file
from tests.support.harness import ROOT, Student, harness_env, run_cli
from tests.support.loopback import OpenAIServer

NAME = "Student 1"


META = [
    "--provider-name=Loopback Labs",
    "--url=https://example.com/student",
    "--release-date=2026-11-01",
    "--price-input=1.25",
    "--price-output=10",
]


def evaluate_command(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "evals.evaluate", *args, f"--data-dir={data}"]


def evaluate(data: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_cli(evaluate_command(data, *args), timeout=timeout)


def verify(data: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "tests.support.no_network",
        "--verify-published",
        f"--results-dir={data / 'results'}",
        f"--run-dir={data / 'runs'}",
        *args,
    ]
    return run_cli(command, timeout=300)


def model_flags(server) -> list[str]:
    return [
        "--provider=openai",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        f"--judge=live:judge-a@{server.url}/v1",
        f"--judge=live:judge-b@{server.url}/v1",
    ]


def entry(data: Path, name: str = NAME) -> dict | None:
    return models_file.find_entry(
        models_file.load_models(data / "models.json", results=data / "results"), name
    )


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A new model evaluated (killed once mid-way, then resumed) and published."""
    data = tmp_path_factory.mktemp("board") / "data"
    student = Student()
    with OpenAIServer(student, latency=0.05) as server:
        first = subprocess.Popen(
            evaluate_command(data, NAME, *model_flags(server), *META, "--evals=mc"),
            cwd=ROOT,
            env=harness_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        cached = data / "runs"
        # Killed once answers are cached, whatever the machine's load (requests alone can all be in flight).
        while (
            len(server.requests) < 10
            or not any(cached.glob("multiple_choice/*/calls/*/candidate.json"))
        ) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        finished = {
            p.parent.name for p in (data / "runs").glob("multiple_choice/*/calls/*/candidate.json")
        }
        # A request the killed run sent may still be read from its socket by a server thread
        # after the kill (under load, a while after): counted as the resume's, it would look
        # asked twice. The count is taken once the server has gone quiet.
        killed_at = _quiet_count(server)
        done = evaluate(data, NAME, *model_flags(server), *META)
        asked = [q for r in server.requests[killed_at:] if (q := student.question_of(r.body))]
    return data, done, finished, asked


def _quiet_count(server, quiet: float = 1.0, limit: float = 30.0) -> int:
    """The server's request count once it has not changed for `quiet` seconds."""
    count, since, deadline = len(server.requests), time.monotonic(), time.monotonic() + limit
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(0.05)
        if len(server.requests) != count:
            count, since = len(server.requests), time.monotonic()
    return count
