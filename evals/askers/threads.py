"""The `Asker` that asks on background threads of this process (`EvalRun.prefetch`), so model
latency overlaps even though pytest runs one item at a time per process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol


class PrefetchingRun(Protocol):
    """What of a run (`evals.run.EvalRun`, which imports this module) the threads use."""

    concurrency: int

    def prefetch(
        self, samples: Sequence[Any], *, threads: int, done: Callable[[Any], None] | None = None
    ) -> Any: ...

    def stop(self) -> None: ...


class Threads:
    """Asks on background threads of this process (`EvalRun.prefetch`); also the asker of a
    run nothing asks ahead for (verify): then `start` is never called."""

    def __init__(self) -> None:
        self._runs: list[PrefetchingRun] = []

    def start(self, runs: Sequence[tuple[PrefetchingRun, Sequence[Any]]]) -> None:
        for run, samples in runs:
            self._runs.append(run)
            run.prefetch(samples, threads=run.concurrency)

    def wait(self, run: PrefetchingRun, item_id: str) -> None:
        pass  # a call a thread is making is waited for by its record (`EvalRun._asking`)

    def waiting(self, run: PrefetchingRun, key: tuple[str, str]) -> Any:
        return None

    def stop(self) -> str | None:
        for run in self._runs:
            run.stop()
        return None
