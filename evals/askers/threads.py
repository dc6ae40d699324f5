"""The `Asker` that asks on background threads of this process (`EvalRun.prefetch`), so model
latency overlaps even though pytest runs one item at a time per process."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from evals.askers.protocol import GRACE, KEEPING, once


class PrefetchingRun(Protocol):
    """What of a run (`evals.run.EvalRun`, which imports this module) the threads use."""

    concurrency: int
    fatal: Any

    def prefetch(
        self, samples: Sequence[Any], *, threads: int, done: Callable[[Any], None] | None = None
    ) -> list[threading.Thread]: ...

    def stop(self) -> None: ...


class Threads:
    """Asks on background threads of this process (`EvalRun.prefetch`); also the asker of a
    run nothing asks ahead for (verify): then `start` is never called."""

    def __init__(self, say: Callable[[str], None] | None = None) -> None:
        self._runs: list[tuple[PrefetchingRun, list[threading.Thread]]] = []
        self._say = say

    def start(self, runs: Sequence[tuple[PrefetchingRun, Sequence[Any]]]) -> None:
        for run, samples in runs:
            self._runs.append((run, run.prefetch(samples, threads=run.concurrency)))

    def wait(self, run: PrefetchingRun, item_id: str) -> None:
        pass  # a call a thread is making is waited for by its record (`EvalRun._asking`)

    def waiting(self, run: PrefetchingRun, key: tuple[str, str]) -> Any:
        return None

    def stop(self) -> str | None:
        """No new call; those in flight get `GRACE` seconds to be stored (none for a run that
        ended with a fatal error), or until a second Ctrl-C."""
        for run, _ in self._runs:
            run.stop()
        deadline, notice = time.monotonic() + GRACE, once(self._say)
        try:
            for run, threads in self._runs:
                for thread in threads if run.fatal is None else ():
                    thread.join(max(0.0, min(1.0, deadline - time.monotonic())))
                    if thread.is_alive():
                        notice(KEEPING)
                    thread.join(max(0.0, deadline - time.monotonic()))
        except KeyboardInterrupt:
            pass  # the user's "leave them": daemon threads, they end with the process
        return None
