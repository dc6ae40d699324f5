"""run_tests_isolated: same results as in-process, plus a hard stop and crash survival."""

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from evals.luau import run_tests, run_tests_isolated

from .specs import DOUBLER, DOUBLER_SPEC, solution

ROOT = Path(__file__).resolve().parents[2]

# Backtracks through ~30^30 states inside one C call: no counter runs meanwhile.
BACKTRACKING = solution("function Solution.double(x) return ('a'):rep(30):find(('a*'):rep(30) .. 'b') end")


def without_elapsed(run) -> dict:
    result = run.to_dict()
    del result["elapsed"]
    return result


def test_isolated_results_match_in_process_results():
    failing = solution("function Solution.double(x) print(x) return x end")
    for source in (DOUBLER, failing):
        assert without_elapsed(run_tests_isolated(source, DOUBLER_SPEC)) == without_elapsed(run_tests(source, DOUBLER_SPEC))


def test_a_hung_c_call_is_killed_at_the_timeout():
    started = time.perf_counter()
    run = run_tests_isolated(BACKTRACKING, DOUBLER_SPEC, timeout=0.3)
    assert run.status == "error" and run.reason == "timed out after 0.3 s"
    assert time.perf_counter() - started < 3
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed


def test_a_crashed_worker_becomes_a_run_with_the_signal():
    def crash_the_worker():
        time.sleep(0.3)
        for process in multiprocessing.active_children():
            if process.name == "luau-test-worker":
                os.kill(process.pid, signal.SIGSEGV)

    killer = threading.Thread(target=crash_the_worker)
    killer.start()
    run = run_tests_isolated(BACKTRACKING, DOUBLER_SPEC, timeout=10)
    killer.join()
    assert run.status == "error" and run.reason == "Luau VM crashed (signal 11)"
    assert run.aggregated["testExecError"] == run.reason
    assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed


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


def test_a_caller_that_dies_while_starting_a_worker_leaves_no_traceback():
    """Ctrl-C can end the caller between asking the forkserver for a child and sending it
    what to run (seen in CI: an EOFError traceback from the forked child on the terminal).
    Here the caller vanishes at exactly that point, in a process of its own."""
    script = (
        "import os, time\n"
        "from multiprocessing import forkserver\n"
        "from evals.luau import run_tests_isolated\n"
        "from tests.luau.specs import DOUBLER, DOUBLER_SPEC\n"
        "assert run_tests_isolated(DOUBLER, DOUBLER_SPEC).passed\n"
        "status, data = forkserver._forkserver.connect_to_new_process([])\n"
        "os.close(data)  # the process to run is never sent\n"
        "time.sleep(1.0)  # the forked child reads EOF meanwhile\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
