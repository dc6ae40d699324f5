"""The run phase's processes: each eval its own `pytest`, one after another or all at once
(--parallel: each line prefixed by its eval), pytest's header printed once. Imported only by a
command that runs: --status and --dry-run return before it."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.budget import CAPPED, PRICES_ENV, SPENT_ENV
from evals.publish import WRITTEN_NOTES
from evals.results import TokenPrices

PYTEST_USAGE_ERROR = 4


@dataclass(frozen=True)
class Spending:
    """What the evals may spend (--max-cost) at the model's `prices`, `spent(tag)`: what an
    eval that ran spent (its result file's tokens at the prices), and `before`: what the evals
    an earlier `evaluate` finished spent, which the cap counts too."""

    prices: TokenPrices | None
    cap: float | None = None
    spent: Callable[[str], float] = lambda tag: 0.0
    before: float = 0.0


def run_children(
    commands: dict[str, list[str]],
    *,
    parallel: bool,
    cwd: Path,
    written: Path,
    spending: Spending = Spending(None),
) -> dict[str, int]:
    """Each eval's command run in `cwd`: its pytest exit status by tag. One after another, an
    eval after a usage error or the cap is not started (it would print the same error, or spend
    past the cap), and each counts what those before it spent; all at once, each its share. Each
    notes the result files it writes in the folder `written` (`evals.publish.written_notes`)."""
    env = _child_env(written, spending.prices)
    if parallel:
        share = spending.cap / len(commands) if spending.cap is not None and commands else None
        return _run_parallel(
            {tag: _capped(command, share) for tag, command in commands.items()}, cwd, env
        )
    return _run_serial(commands, cwd, env, spending)


def _capped(command: list[str], cap: float | None) -> list[str]:
    return command if cap is None else [*command, f"--max-cost={cap!r}"]


def _child_env(written: Path, prices: TokenPrices | None) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
        WRITTEN_NOTES: str(written),
        # the progress line's and the cap's prices: the result files record none
        **({PRICES_ENV: f"{prices.input!r},{prices.output!r}"} if prices else {}),
    }


def _quiet_after_first(commands: dict[str, list[str]]) -> dict[str, list[str]]:
    """pytest's header (platform, rootdir, plugins) once, from the first eval: the same for all."""
    return {
        tag: command if i == 0 else [*command, "--no-header"]
        for i, (tag, command) in enumerate(commands.items())
    }


def _run_serial(
    commands: dict[str, list[str]], cwd: Path, env: dict[str, str], spending: Spending
) -> dict[str, int]:
    codes: dict[str, int] = {}
    for tag, command in _quiet_after_first(commands).items():
        spent = spending.before + sum(spending.spent(done) for done in codes)
        if spending.cap is not None and spent >= spending.cap:
            codes[tag] = CAPPED  # not started: the cap is spent, and raising it resumes
            break
        print(f"\n===== {tag}", flush=True)
        codes[tag] = subprocess.run(
            _capped(command, spending.cap),
            cwd=cwd,
            env={**env, SPENT_ENV: repr(spent)},  # the cap counts the evals before it
            check=False,
        ).returncode
        if codes[tag] in (PYTEST_USAGE_ERROR, CAPPED):
            break  # the next eval would print the same error, or spend past the cap
    return codes


def _run_parallel(commands: dict[str, list[str]], cwd: Path, env: dict[str, str]) -> dict[str, int]:
    """Every eval at once; each output line is prefixed with its eval's tag."""
    printing = threading.Lock()

    def pump(tag: str, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None  # a pipe (PIPE below)
        for line in process.stdout:
            with printing:
                print(f"[{tag}] {line}", end="", flush=True)

    processes = {
        tag: subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            encoding="utf-8",
            errors="replace",
        )  # as _child_env has them write, whatever the locale
        for tag, command in _quiet_after_first(commands).items()
    }
    pumps = [threading.Thread(target=pump, args=item, daemon=True) for item in processes.items()]
    for thread in pumps:
        thread.start()
    try:
        codes = {tag: process.wait() for tag, process in processes.items()}
    except KeyboardInterrupt:
        for process in processes.values():
            process.terminate()
        raise
    for thread in pumps:
        thread.join()
    return codes
