"""run_tests_isolated: same results as in-process, plus a hard stop and crash survival, the
memory limit in the worker, Ctrl-C left to the caller, and no worker outliving its caller.

The sandbox's worker processes are the point: real ones are started, crashed (SIGSEGV), signalled
(SIGINT) and outlived, and callers run in `python -c` processes of their own. The tests taking
`start_method` run twice: with the platform's start method (forkserver here) and with spawn,
Windows' only one (EVALS_START_METHOD=spawn), so Linux runs the Windows path. The whole file
under EVALS_START_METHOD=spawn runs only the spawn half of those, and skips the forkserver's own
tests."""

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from evals.luau import run_tests, run_tests_isolated
from evals.luau.isolated import START_METHOD, start_method, stop_idle_workers
from tests.support import ROOT
from tests.support.luau.specs import (
    BACKTRACKING,
    DOUBLER,
    DOUBLER_SPEC,
    solution,
    workers,
)

FORCED = os.environ.get(START_METHOD)  # the whole run's, if one is forced
forkserver_only = pytest.mark.skipif(
    start_method() != "forkserver", reason="the forkserver's own behaviour; this run uses spawn"
)


@pytest.fixture(params=["spawn"] if FORCED == "spawn" else ["default", "spawn"])
def start_method_(request, monkeypatch):
    """The start method the test's workers use; workers of another are not reused."""
    stop_idle_workers()
    if request.param == "spawn":
        monkeypatch.setenv(START_METHOD, "spawn")
    yield start_method()
    stop_idle_workers()


def without_elapsed(run) -> dict:
    result = run.to_dict()
    del result["elapsed"]
    return result


def test_isolated_results_match_in_process_results(start_method_):
    failing = solution("function Solution.double(x) print(x) return x end")
    for source in (DOUBLER, failing):
        assert without_elapsed(run_tests_isolated(source, DOUBLER_SPEC)) == without_elapsed(
            run_tests(source, DOUBLER_SPEC)
        )


def test_a_hung_c_call_is_killed_at_the_timeout(start_method_):
    started = time.perf_counter()
    run = run_tests_isolated(BACKTRACKING, DOUBLER_SPEC, timeout=0.3)
    assert run.status == "error" and run.reason == "timed out after 0.3 s"
    assert (
        time.perf_counter() - started < 30
    )  # not killed, the call would run on: a bound only a hang reaches
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed


def test_a_crashed_worker_becomes_a_run_with_the_signal(start_method_):
    assert run_tests_isolated(
        DOUBLER, DOUBLER_SPEC
    ).passed  # a worker is up: a spawned one takes a while

    def crash_the_worker():
        time.sleep(0.3)
        for process in workers():
            os.kill(process.pid, signal.SIGSEGV)

    killer = threading.Thread(target=crash_the_worker)
    killer.start()
    run = run_tests_isolated(BACKTRACKING, DOUBLER_SPEC, timeout=10)
    killer.join()
    assert run.status == "error" and run.reason == "Luau VM crashed (signal 11)"
    assert run.aggregated["testExecError"] == run.reason
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed


@forkserver_only
def test_ctrl_c_is_left_to_the_caller():
    """A Ctrl-C reaches the whole process group: the sandbox's helper processes must neither
    die of it nor print a KeyboardInterrupt traceback; the caller decides."""
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed  # the forkserver and a worker are up
    workers = [p for p in multiprocessing.active_children() if p.name == "luau-test-worker"]
    forkserver = multiprocessing.forkserver._forkserver._forkserver_pid
    assert workers and forkserver
    for pid in (forkserver, *(p.pid for p in workers)):
        os.kill(pid, signal.SIGINT)
    time.sleep(0.5)
    assert all(p.is_alive() for p in workers)
    os.kill(forkserver, 0)  # still there
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed


@forkserver_only
def test_a_caller_that_dies_while_starting_a_worker_leaves_no_traceback():
    """Ctrl-C can end the caller between asking the forkserver for a child and sending it
    what to run (seen in CI: an EOFError traceback from the forked child on the terminal).
    Here the caller vanishes at exactly that point, in a process of its own."""
    script = (
        "import os, time\n"
        "from multiprocessing import forkserver\n"
        "from evals.luau import run_tests_isolated\n"
        "from tests.support.luau.specs import DOUBLER, DOUBLER_SPEC\n"
        "assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed\n"
        "status, data = forkserver._forkserver.connect_to_new_process([])\n"
        "os.close(data)  # the process to run is never sent\n"
        "time.sleep(1.0)  # the forked child reads EOF meanwhile\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_the_memory_limit_holds_in_the_worker(start_method_):
    """The limit is the Luau VM's allocator's, not an rlimit: the same under spawn (Windows)."""
    bomb = solution("function Solution.double(x) local t = {} for i = 1, 1e9 do t[i] = i end end")
    run = run_tests_isolated(bomb, DOUBLER_SPEC, memory_limit=32 * 2**20)
    assert run.status == "error" and run.reason == "memory limit 32 MiB exceeded"
    assert workers()  # the worker survived it, kept for the next run


def _in_a_process(script: str, method: str) -> subprocess.CompletedProcess:
    prelude = (
        "import multiprocessing, os, signal, sys, threading, time\n"
        "from evals.luau import run_tests_isolated\n"
        "from tests.support.luau.specs import DOUBLER, DOUBLER_SPEC\n"
    )
    env = (
        {**os.environ, START_METHOD: method}
        if method == "spawn"
        else {k: v for k, v in os.environ.items() if k != START_METHOD}
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(
    sys.platform == "win32", reason="a console's Ctrl-C cannot be sent to one process there"
)
def test_ctrl_c_while_a_worker_starts_reaches_no_worker(start_method_):
    """A terminal's Ctrl-C reaches every process of the group, a spawned worker too while its
    interpreter starts: it must neither die of it nor print a KeyboardInterrupt traceback."""
    script = (
        "done = threading.Event()\n"
        "def interrupt():\n"
        "    while not done.is_set():\n"
        "        for p in multiprocessing.active_children():\n"
        "            if p.name == 'luau-test-worker':\n"
        "                os.kill(p.pid, signal.SIGINT)\n"
        "        time.sleep(0.002)\n"
        "threading.Thread(target=interrupt).start()\n"
        "try:\n"
        "    print(run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed, "
        "run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed)\n"
        "finally:\n"
        "    done.set()\n"
    )
    done = _in_a_process(script, start_method_)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True True\n", "")


@pytest.mark.skipif(sys.platform == "win32", reason="signals a process by its pid, as POSIX does")
def test_no_worker_outlives_its_caller(start_method_):
    """Workers that passed, timed out (killed) or sat idle: none is left once the caller ends."""
    script = (
        "from tests.support.luau.specs import BACKTRACKING, workers\n"
        "run_tests_isolated(DOUBLER, DOUBLER_SPEC)\n"
        "seen = [p.pid for p in workers()]\n"
        "assert run_tests_isolated(BACKTRACKING, DOUBLER_SPEC, timeout=0.3).reason == 'timed out after 0.3 s'\n"
        "run_tests_isolated(DOUBLER, DOUBLER_SPEC)  # a new worker, left idle\n"
        "seen += [p.pid for p in workers()]\n"
        "print(*seen)\n"
    )
    done = _in_a_process(script, start_method_)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while (left := [pid for pid in pids if _exists(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)  # a daemon worker is ended by its caller's exit; init reaps it
    assert left == []


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
