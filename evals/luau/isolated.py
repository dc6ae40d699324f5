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

Workers start with the `forkserver` method where the platform has it (Linux,
macOS), else `spawn` (Windows); EVALS_START_METHOD=spawn forces spawn anywhere,
so Linux runs the Windows path. Both run the same code under the same limits:
the time limit is the caller's clock and kill, the memory limit the Luau VM's
allocator (`runner`), so neither needs resource.setrlimit or anything else
POSIX-only. A spawned worker starts a fresh interpreter and imports the
runner (~0.4 s more than a forked one, `bench/luau.py`), once per worker: workers are reused, so it
stays off the per-problem path.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from evals.errors import ReferenceFailed, UsageError

from .result import TestRun
from .runner import MEMORY_LIMIT, OUTPUT_LIMIT, TIMEOUT, run_tests

if sys.platform != "win32":
    from multiprocessing import forkserver, resource_tracker

__all__ = ["ReferenceFailed", "measure_work", "run_tests_isolated", "start_method"]

START_METHOD = "EVALS_START_METHOD"  # spawn or forkserver; unset: forkserver where there is one

# How long past the run's own timeout the worker gets (to build the VM and
# send the result back) before it is killed.
_GRACE = 1.0
_MAX_IDLE_WORKERS = os.cpu_count() or 2


def start_method() -> str:
    """How workers start: $EVALS_START_METHOD, else forkserver where the platform has it."""
    available = multiprocessing.get_all_start_methods()
    chosen = os.environ.get(START_METHOD, "").strip()
    if not chosen:
        return "forkserver" if "forkserver" in available else "spawn"
    if chosen not in ("spawn", "forkserver") or chosen not in available:
        can = " or ".join(m for m in ("spawn", "forkserver") if m in available)
        raise UsageError(
            f"{START_METHOD}={chosen}: the Luau sandbox starts its workers with {can} here; set "
            "one of those or unset it"
        )
    return chosen


def stop_idle_workers() -> None:
    """Stop the workers kept for reuse (a change of start method, a benchmark's cold start)."""
    with _Worker._lock:
        idle, _Worker._idle[:] = list(_Worker._idle), []
    for worker in idle:
        worker.stop()


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
    options = dict(
        work_budget=work_budget,
        timeout=timeout,
        memory_limit=memory_limit,
        output_limit=output_limit,
    )
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
        # Neither method inherits the caller's threads or locks: forkserver forks a
        # clean process started once, spawn starts a new interpreter each time.
        method = start_method()
        if sys.platform == "win32":  # spawn is all there is
            context = multiprocessing.get_context("spawn")
        else:
            context = (
                multiprocessing.get_context("spawn")
                if method == "spawn"
                else multiprocessing.get_context("forkserver")
            )
        self.connection, child_end = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child_end,), name="luau-test-worker", daemon=True
        )
        _start_ignoring_ctrl_c(self.process, method)
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


def _start_ignoring_ctrl_c(process: BaseProcess, method: str) -> None:
    """Ctrl-C is the caller's to handle: no helper process may print a KeyboardInterrupt
    traceback. On POSIX the forkserver, or a spawned worker, is started with SIGINT blocked
    (a Ctrl-C meanwhile waits for the caller, it is not lost; a child inherits the mask), and
    `_serve` ignores SIGINT before it unblocks it, so no worker ever receives one. The
    resource tracker goes first: the standard library launches it with SIGINT blocked too,
    then unblocks it. A Ctrl-C that ends the caller while a forkserver hands a worker its
    target is dealt with in `_forkserver`, the module the forkserver preloads. Windows has no
    signal masks: a spawned worker ignores Ctrl-C from `_serve`'s first line, so only the
    interpreter's start-up, before it, could still print one."""
    if sys.platform == "win32":
        process.start()
    else:
        resource_tracker.ensure_running()
        if method == "forkserver":
            forkserver.set_forkserver_preload([f"{__package__}._forkserver"])
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            if method == "forkserver":
                forkserver.ensure_running()  # the workers it forks need no mask of their own
            else:
                process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if method == "forkserver":
            process.start()


def _serve(connection: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if (
        sys.platform != "win32"
    ):  # a spawned worker starts with SIGINT blocked: ignored now, so let it in
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
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
