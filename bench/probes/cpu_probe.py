"""A probe for `bench/cpu.py --breakdown`: where a run's CPU time goes, per item.

Loaded into pytest's process with `-p bench.probes.cpu_probe`, and into each process asking
the model (`evals.askers.processes`) by the `sitecustomize` that `cpu.py` puts on PYTHONPATH. It wraps
a few of the harness's functions and adds up the CPU time of the thread that runs them
(`time.thread_time`: the kernel's time for that thread, so what the GIL's hand-offs cost is
counted where they happen). pytest's process writes {"items": N, "session": s, "main thread":
s, "<part>": s, ...} to $CPU_PROBE at the end of its session; each asking process writes
{"process": s, "<part>": s, ...} to $CPU_PROBE.<pid> when it ends."""

from __future__ import annotations

import atexit
import collections
import json
import os
import sys
import threading
import time
from typing import NoReturn

from evals import cache, locks, run
from evals.providers import openai as openai_provider

_spent: collections.Counter[str] = collections.Counter()
_depth = threading.local()


def _timed(owner: type, name: str, part: str) -> None:
    """Count `owner.name`'s thread CPU time under `part` (its outermost call only)."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        depth = getattr(_depth, part, 0)
        setattr(_depth, part, depth + 1)
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            setattr(_depth, part, depth)
            if not depth:
                _spent[part] += time.thread_time() - started

    setattr(owner, name, timed)


ASKING = "evals.askers.processes" in sys.orig_argv
where = "asking processes" if ASKING else "pytest's process"
_timed(run.EvalRun, "_prefetch_one", f"{where}: answering ahead (threads)")
_timed(openai_provider.OpenAIProvider, "complete", f"{where}: the SDK's request")
_timed(cache.RunCache, "lookup", f"{where}: cache lookups")
# The lock a call is made under (`evals.locks.record_lock`): the item's folder, made by its
# first lock, on POSIX; a lock file of its own where there is no flock.
for lock in ("FolderLock", "FlockLock", "PortableLock"):
    if hasattr(locks, lock):
        _timed(getattr(locks, lock), "acquire", f"{where}: record locks")
_timed(cache.RunCache, "store", f"{where}: storing records")
_timed(run.EvalRun, "answer", f"{where}: the harness's part of an item")

_started: dict[str, float] = {}


def pytest_collection_finish(session) -> None:
    _started.update(process=time.process_time(), main=time.thread_time())


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workerinput") or not os.environ.get("CPU_PROBE") or not _started:
        return
    figures = {
        "items": session.testscollected,
        "session": time.process_time() - _started["process"],
        "main thread": time.thread_time() - _started["main"],
        **_spent,
    }
    with open(os.environ["CPU_PROBE"], "w") as out:
        json.dump(figures, out)


def _write_asking_figures() -> None:
    with open(f"{os.environ['CPU_PROBE']}.{os.getpid()}", "w") as out:
        json.dump({"process": time.process_time(), **_spent}, out)


_os_exit = os._exit


def _exit_writing_figures(status: int) -> NoReturn:
    _write_asking_figures()
    _os_exit(status)


if ASKING and os.environ.get("CPU_PROBE"):
    # An asking process ends either when its threads are done (atexit) or, when pytest's process
    # closes its stdin first, by os._exit, which skips atexit: the figures are written either way.
    atexit.register(_write_asking_figures)
    os._exit = _exit_writing_figures
