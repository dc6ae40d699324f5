"""A pytest plugin for `bench/cpu.py --breakdown`: where the session's CPU time goes, per item.

Loaded with `-p _cpu_probe` (bench/ on PYTHONPATH). It wraps a few of the harness's functions
and adds up the CPU time of the thread that runs them (`time.thread_time`: the kernel's time
for that thread, so what the GIL's hand-offs cost is counted where they happen), then writes
{"items": N, "session": s, "main thread": s, "<part>": s, ...} to $CPU_PROBE at the end of
the session (the process running the items: -n 0)."""

from __future__ import annotations

import collections
import json
import os
import threading
import time

from evals import cache, run
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


_timed(run.EvalRun, "_prefetch_one", "prefetch threads: all")
_timed(openai_provider.OpenAIProvider, "complete", "prefetch threads: the SDK's request")
_timed(cache.RunCache, "lookup", "cache: lookups")
if hasattr(cache, "RecordLock"):
    _timed(cache.RecordLock, "acquire", "cache: locks")
else:  # the harness before cd6e8cb took filelock's FileLock
    import filelock

    _timed(filelock.BaseFileLock, "acquire", "cache: locks")
_timed(cache.RunCache, "store", "cache: stores")
_timed(run.EvalRun, "answer", "main thread: the harness's part of an item")

_started: dict[str, float] = {}


def pytest_collection_finish(session) -> None:
    _started.update(process=time.process_time(), main=time.thread_time())


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workerinput") or not os.environ.get("CPU_PROBE") or not _started:
        return
    figures = {"items": session.testscollected, "session": time.process_time() - _started["process"],
               "main thread": time.thread_time() - _started["main"], **_spent}
    with open(os.environ["CPU_PROBE"], "w") as out:
        json.dump(figures, out)
