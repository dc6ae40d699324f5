"""The warm starts the other e2e tests run the CLI through (tests/support/warm.py): a forked
command meets the interpreter a cold exec would, and the commands the harness starts of its own
(a `pytest` per eval from `evaluate`, a run's asking process) are forked warm too.

A probe plugin records what a command's interpreter looks like from inside; each command is
run twice, exec'd as it is (`subprocess`) and forked (`harness.run_cli`), and the two records
compared. The model is a loopback server on a thread of the test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import warm
from tests.support.board import META, NAME, evaluate, model_flags
from tests.support.harness import Student, harness_env, run_cli, wait_for
from tests.support.loopback import OpenAIServer

PROBE = """
import json, os, sys

def stream(s):
    raw = getattr(s.buffer, "raw", s.buffer)
    return [s.encoding, s.errors, s.line_buffering, s.write_through, s.mode, type(s.buffer).__name__,
            type(raw).__name__, getattr(raw, "name", None)]

with open(os.environ["PROBE_OUT"], "w") as out:
    json.dump({"stdin": stream(sys.stdin), "stdout": stream(sys.stdout), "stderr": stream(sys.stderr),
               "argv": sys.argv[1:], "orig_argv": sys.orig_argv[1:], "path0": sys.path[0], "cwd": os.getcwd(),
               "safe_path": sys.flags.safe_path}, out)
"""

STREAM_SETTINGS = {
    "unbuffered": {},  # harness_env's PYTHONUNBUFFERED=1
    "buffered": {"PYTHONUNBUFFERED": None},
    "utf-8": {"PYTHONIOENCODING": "utf-8"},
    "cp1252 with replace": {"PYTHONIOENCODING": "cp1252:replace", "PYTHONUNBUFFERED": None},
    "errors only": {"PYTHONIOENCODING": ":strict"},
}


@pytest.mark.parametrize("settings", STREAM_SETTINGS.values(), ids=STREAM_SETTINGS)
def test_a_forked_command_has_the_streams_arguments_and_path_of_an_exec(tmp_path, settings):
    (tmp_path / "probe_plugin.py").write_text(PROBE)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "probe_plugin",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    records = {}
    for how in ("exec", "fork"):
        env = {
            k: v
            for k, v in harness_env(PROBE_OUT=str(tmp_path / f"{how}.json")).items()
            if settings.get(k, "") is not None
        }
        env.update({k: v for k, v in settings.items() if v is not None})
        forks = warm.forked("pytest")
        if how == "exec":
            done = subprocess.run(
                command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
            )
        else:
            assert warm.warm_module(command, env) == "pytest"
            done = run_cli(command, cwd=tmp_path, env=env)
            wait_for(
                lambda: warm.forked("pytest") == forks + 1,
                "the server's line for the forked command",
            )
        assert done.returncode in (0, 5), (
            done.stdout + done.stderr
        )  # 5: an empty folder has no tests
        records[how] = json.loads((tmp_path / f"{how}.json").read_text())
    assert records["fork"] == records["exec"]


def test_evaluates_pytest_runs_and_their_asking_processes_are_forked_warm(tmp_path):
    with OpenAIServer(Student()) as server:
        pytests, askers = warm.forked("pytest"), warm.forked("evals.askers.processes")
        done = evaluate(tmp_path / "data", NAME, *model_flags(server), *META, "--evals=mc")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "multiple_choice" in done.stdout and "accuracy" in done.stdout, done.stdout[
        -3000:
    ]  # its pytest's lines came through
    wait_for(
        lambda: warm.forked("pytest") == pytests + 1, "the pytest run evaluate started, forked warm"
    )
    wait_for(
        lambda: warm.forked("evals.askers.processes") >= askers + 1,
        "its asking process, forked warm",
    )


def test_a_command_the_harness_starts_with_another_interpreter_is_exec_d(tmp_path):
    """The asking process's path names the harness's root first; told another PYTHONPATH, the
    command would import something else: it is exec'd, not forked from a server that has not."""
    env = harness_env()
    asking = [sys.executable, "-P", "-m", "evals.askers.processes", "[]"]
    assert (
        warm.warm_module(asking, {**env, "PYTHONPATH": warm._FETCHER_PATH})
        == "evals.askers.processes"
    )
    assert warm.warm_module(asking, {**env, "PYTHONPATH": str(tmp_path)}) is None
    assert (
        warm.warm_module([sys.executable, "-m", "evals.askers.processes", "[]"], env) is None
    )  # without -P: another path
    assert (
        warm.warm_module([sys.executable, "-m", "pytest"], {**env, "LC_ALL": "C"}) is None
    )  # another locale
