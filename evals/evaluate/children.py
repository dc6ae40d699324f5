"""The run phase's processes: each eval its own `pytest`, one after another or all at once
(--parallel: each line prefixed by its eval), pytest's header printed once. Imported only by a
command that runs: --status and --dry-run return before it."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from evals.publish import WRITTEN_NOTES

PYTEST_USAGE_ERROR = 4


def run_children(
    commands: dict[str, list[str]], *, parallel: bool, cwd: Path, written: Path
) -> dict[str, int]:
    """Each eval's command run in `cwd`: its pytest exit status by tag. One after another, an
    eval after a usage error is not started (it would print the same error). Each notes the
    result files it writes in the folder `written` (`evals.publish.written_notes`)."""
    env = _child_env(written)
    return _run_parallel(commands, cwd, env) if parallel else _run_serial(commands, cwd, env)


def _child_env(written: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
        WRITTEN_NOTES: str(written),
    }


def _quiet_after_first(commands: dict[str, list[str]]) -> dict[str, list[str]]:
    """pytest's header (platform, rootdir, plugins) once, from the first eval: the same for all."""
    return {
        tag: command if i == 0 else [*command, "--no-header"]
        for i, (tag, command) in enumerate(commands.items())
    }


def _run_serial(commands: dict[str, list[str]], cwd: Path, env: dict[str, str]) -> dict[str, int]:
    codes = {}
    for tag, command in _quiet_after_first(commands).items():
        print(f"\n===== {tag}", flush=True)
        codes[tag] = subprocess.run(command, cwd=cwd, env=env, check=False).returncode
        if codes[tag] == PYTEST_USAGE_ERROR:
            break  # the next eval would print the same error
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
