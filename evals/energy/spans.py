"""Spans (`Span`, `SpanLog`): the wall-clock start and end (`time.time()`) of every model
request or local generation, with its eval and band: what the engine records
(`evals.run`). Each process appends to a file of its own, `energy/spans-<pid>-<random>.jsonl`,
one line per span, flushed; `read` gathers every process's files and skips a line cut short
by a kill. The energy is a power source's (`evals.energy._base`); `evals.energy.attribution`
joins the two."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from ._jsonl import json_lines, open_append, unwritable, write_line


@dataclass(frozen=True)
class Span:
    """One model request or local generation, wall clock (`time.time()`)."""

    start: float
    end: float
    eval: str
    band: str | None = None  # the sample's band (`Task.bands`), or None


class SpanLog:
    """Spans of one run folder: `<run_folder>/energy/spans-<pid>-<random>.jsonl`, one file
    per process (appended line by line, flushed: no two processes write one file, a forked
    child opens its own), read back across all files."""

    def __init__(self, run_folder: Path):
        self.folder = Path(run_folder) / "energy"
        self.path: Path | None = None
        self._lock = threading.Lock()
        self._handle: BinaryIO | None = None
        self._pid: int | None = None

    def record(self, span: Span) -> None:
        record = {"start": span.start, "end": span.end, "eval": span.eval, "band": span.band}
        with self._lock:
            path, handle = self.path, self._handle
            if (
                self._pid != os.getpid() or path is None or handle is None
            ):  # the first span, or the first in a forked child
                self._pid = os.getpid()
                path = self.path = self.folder / f"spans-{self._pid}-{secrets.token_hex(4)}.jsonl"
                try:
                    handle = self._handle = open_append(path)
                except OSError as error:
                    raise unwritable(path, error) from error
            write_line(handle, path, record)

    @contextmanager
    def span(
        self, eval: str, band: str | None = None, *, clock: Callable[[], float] = time.time
    ) -> Iterator[None]:
        """Record the span of the `with` block, also when it raises."""
        start = clock()
        try:
            yield
        finally:
            self.record(Span(start, clock(), eval, band))

    def close(self) -> None:
        with self._lock:
            if self._handle is not None and self._pid == os.getpid():
                self._handle.close()
            self._handle = self._pid = None

    @staticmethod
    def read(run_folder: Path) -> list[Span]:
        spans = []
        for path in sorted((Path(run_folder) / "energy").glob("spans-*.jsonl")):
            for record in json_lines(path):
                span = _span(record)
                if span is not None:
                    spans.append(span)
        return spans


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _span(record: dict[str, Any]) -> Span | None:
    start, end, name, band = (record.get(key) for key in ("start", "end", "eval", "band"))
    if (
        not (_number(start) and _number(end))
        or not isinstance(name, str)
        or not (band is None or isinstance(band, str))
    ):
        return None
    return Span(float(start), float(end), name, band)
