"""The leaderboard's commands as a maintainer runs them, in a child process: `evaluate` a model
into a data folder, verify it offline (`-p tests.support.no_network`), and read its entry back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evals import registry
from tests.support.harness import run_cli

NAME = "Student 1"


META = ["--provider-name=Loopback Labs", "--url=https://example.com/student", "--release-date=2026-11-01", "--price-input=1.25", "--price-output=10"]


def evaluate_command(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "evals.evaluate", *args, f"--data-dir={data}"]


def evaluate(data: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_cli(evaluate_command(data, *args), timeout=timeout)


def verify(data: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-p", "tests.support.no_network", "--verify-published", f"--results-dir={data / 'results'}", f"--run-dir={data / 'runs'}", *args]
    return run_cli(command, timeout=300)


def model_flags(server) -> list[str]:
    return ["--provider=openai", "--model=student-1", f"--base-url={server.url}/v1", f"--judge=live:judge-a@{server.url}/v1", f"--judge=live:judge-b@{server.url}/v1"]


def entry(data: Path, name: str = NAME) -> dict | None:
    return registry.find_entry(registry.load_models(data / "models.json", results=data / "results"), name)
