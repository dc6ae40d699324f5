"""run_tests in a reusable child process.

The in-process runner cannot interrupt one long call into C (a string pattern
that backtracks for minutes) and dies with the VM if the VM crashes. Here the
run happens in a worker process: the caller waits at most timeout + a grace
period, then kills the worker; a worker that dies mid-run becomes an "error"
TestRun naming the signal. Workers are reused across calls (one per
concurrent caller), so the cost per run is a round trip over a pipe.

A dataset's reference solution is measured here too (`measure_work`): it is
code the harness did not write either, and one that hangs in a C call would
hang the run where Ctrl-C cannot reach it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from multiprocessing import forkserver, resource_tracker
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from .result import TestRun
from .runner import MEMORY_LIMIT, OUTPUT_LIMIT, TIMEOUT, run_tests

__all__ = ["ReferenceFailed", "measure_work", "run_tests_isolated"]

# How long past the run's own timeout the worker gets (to build the VM and
# send the result back) before it is killed.
_GRACE = 1.0
_MAX_IDLE_WORKERS = os.cpu_count() or 2


class ReferenceFailed(ValueError):
    """A reference solution that does not pass its own tests: the dataset's fault."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the reference solution does not pass its own tests: {reason}")
        self.reason = reason  # the run's reason, e.g. "2 of 9 tests failed"


def measure_work(solution: str, tests: str, *, timeout: float = TIMEOUT) -> int | None:
    """Run a reference solution without a budget, under the limits model code runs under
    (this worker, `timeout`, the memory limit), and return the units of work it used, or None
    when it could not be metered (see `TestRun.unmetered`).

    Raises ReferenceFailed if the reference does not pass its own tests, or does not finish.
    """
    run = run_tests_isolated(solution, tests, timeout=timeout)
    if not run.passed:
        raise ReferenceFailed(run.reason or run.status)
    return run.work


def run_tests_isolated(
    solution: str,
    tests: str,
    *,
    work_budget: int | None = None,
    timeout: float = TIMEOUT,
    memory_limit: int = MEMORY_LIMIT,
    output_limit: int = OUTPUT_LIMIT,
) -> TestRun:
    """Same as run_tests, in a child process that is killed if it overruns or crashes."""
    started = time.perf_counter()
    options = dict(work_budget=work_budget, timeout=timeout, memory_limit=memory_limit, output_limit=output_limit)
    worker = _Worker.checkout()
    try:
        worker.connection.send((solution, tests, options))
        if worker.connection.poll(timeout + _GRACE):
            run = worker.connection.recv()
            worker.checkin()
            return run
        reason = f"timed out after {timeout:.1f} s"
    except (EOFError, OSError):
        reason = worker.crash_reason()
    worker.stop()
    return TestRun.error(reason, elapsed=time.perf_counter() - started)


class _Worker:
    _idle: list[_Worker] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        # forkserver: a clean process that does not inherit the caller's
        # threads or locks, started once and then forked cheaply.
        context = multiprocessing.get_context("forkserver")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_serve, args=(child_end,), name="luau-test-worker", daemon=True)
        _start_ignoring_ctrl_c(self.process)
        child_end.close()

    @classmethod
    def checkout(cls) -> _Worker:
        with cls._lock:
            while cls._idle:
                worker = cls._idle.pop()
                if worker.process.is_alive():
                    return worker
                worker.stop()
        return cls()

    def checkin(self) -> None:
        with self._lock:
            if len(self._idle) < _MAX_IDLE_WORKERS:
                self._idle.append(self)
                return
        self.stop()

    def crash_reason(self) -> str:
        self.process.join(timeout=1.0)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"Luau VM crashed (signal {-code})"
        if code is not None:
            return f"Luau VM crashed (exit code {code})"
        return "Luau VM crashed"

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()


def _start_ignoring_ctrl_c(process: BaseProcess) -> None:
    """Ctrl-C is the caller's to handle: no helper process may print a KeyboardInterrupt
    traceback. The forkserver is launched with SIGINT blocked (a Ctrl-C meanwhile waits for
    the caller, it is not lost), so neither it nor the workers it forks ever receive one;
    `_serve` ignores SIGINT too, for a forkserver launched elsewhere. The resource tracker
    goes first: the standard library launches it with SIGINT blocked too, then unblocks it.
    A Ctrl-C that ends the caller while it hands a worker its target is dealt with in
    `_forkserver`, the module the forkserver preloads."""
    resource_tracker.ensure_running()
    forkserver.set_forkserver_preload([f"{__package__}._forkserver"])
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    process.start()


def _serve(connection: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Nothing reads the worker's stdout; pluau writes a line there per VM.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    while True:
        try:
            solution, tests, options = connection.recv()
        except EOFError:
            return
        # The caller kills this worker at the timeout: an unmetered run needs no clock in the VM.
        connection.send(run_tests(solution, tests, **options, clock_kept_by_caller=True))
