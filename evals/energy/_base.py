"""What a power source is (`PowerSource`): `check()` before the run, `start(store)` and
`stop()` around it, then `intervals(stores)`: how many joules the machine used between two
instants (`Interval`), and a `method` line for the result files.

Counter sources (`CounterSource`: rapl, nvml) sample on a daemon thread (`start(store)`, every
`period` seconds; `stop` takes a last reading) into a JSONL store of cumulative readings, a
line per reading, flushed, so a killed run keeps what it read. Each line names the source,
the machine and boot it was read on (`origin`), its time, each counter's raw value and wrap
range, and joules per unit. `intervals(stores)` merges the readings of every store of the
same source and origin in time order and makes an interval of each two consecutive ones: two
sessions sampling at once are not counted twice, and the gap between two sessions is one
interval at the average power over it (only spans inside it take a share of it). Counters
wrap at their range: a reading lower than the one before by more than half that range
wrapped once and gains the range; lower by less, the two readings crossed (two samplers
reading within microseconds) or the counter was reset, and the step counts 0."""

from __future__ import annotations

import socket
import threading
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO

from evals.errors import StorageError, UsageError
from evals.flags import Flag, seconds

from ._jsonl import json_lines, open_append, unwritable, write_line

ATTRIBUTION = "energy while spans are in flight, shared by requests in flight"  # the end of every source's `method`
# A counter source's sampling period, the flag of rapl and nvml alike.
ENERGY_PERIOD = Flag(
    "--energy-period",
    "with --energy: seconds between readings of a counter source (default 1)",
    float,
    1.0,
    forward=True,
    resume="run",
    check=seconds,
)


@dataclass(frozen=True)
class Interval:
    """Energy the machine used between two instants."""

    start: float
    end: float
    joules: float


class PowerSource(ABC):
    name: str

    @abstractmethod
    def check(self) -> None:
        """Raise a one-line UsageError if this source cannot measure here."""

    def start(self, store: Path) -> None:
        """Begin sampling into `store` (nothing for a source that logs by itself)."""

    def stop(self) -> None:
        """Take a last reading and stop sampling."""

    @abstractmethod
    def intervals(self, stores: list[Path]) -> list[Interval]:
        """Every measured interval, in order of start."""

    @property
    @abstractmethod
    def method(self) -> str:
        """How the energy was measured and attributed, for a result file."""


class CounterSource(PowerSource):
    """A source of cumulative energy counters, sampled into a store on a daemon thread."""

    scale: float  # joules per counter unit

    def __init__(self, period: float, clock: Callable[[], float]):
        if not period > 0:
            raise UsageError(
                f"the energy sampling period must be positive, not {period}: give a number of seconds such as 1"
            )
        self.period = period
        self.clock = clock
        self.origin = _origin()
        self._store: Path | None = None
        self._handle: BinaryIO | None = None
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: StorageError | None = None
        self._found: list | None = None

    @abstractmethod
    def found(self) -> list:
        """What there is to read here (zones, GPUs), looked up on the first reading."""

    @abstractmethod
    def read_one(self, counter) -> tuple[str, int, int | None]:
        """One counter's name, raw value and wrap range (None if it does not wrap)."""

    def read(self) -> dict[str, tuple[int, int | None]]:
        """Each counter's raw value and wrap range."""
        if self._found is None:
            self._found = self.found()
        return {name: (value, wrap) for name, value, wrap in map(self.read_one, self._found)}

    def start(self, store: Path) -> None:
        try:
            self._handle = open_append(store)
        except OSError as error:
            raise unwritable(store, error) from error
        self._store = store
        self.sample()
        self._halt.clear()
        self._thread = threading.Thread(
            target=self._sample_until_stopped, name=f"energy-{self.name}", daemon=True
        )
        self._thread.start()

    def sample(self) -> None:
        """Read the counters now and append the reading to the store."""
        counters = self.read()
        record = {
            "source": self.name,
            "origin": self.origin,
            "t": self.clock(),
            "scale": self.scale,
            "counters": {name: value for name, (value, _) in counters.items()},
            "wrap": {name: wrap for name, (_, wrap) in counters.items() if wrap is not None},
        }
        assert self._handle is not None and self._store is not None, "start() opens the store"
        with self._lock:
            write_line(self._handle, self._store, record)

    def _sample_unless_unreadable(self) -> None:
        try:
            self.sample()
        except StorageError:
            raise
        except Exception:  # a counter unreadable this once: the next reading spans the gap
            pass

    def _sample_until_stopped(self) -> None:
        while not self._halt.wait(self.period):
            try:
                self._sample_unless_unreadable()
            except StorageError as error:
                self._error = error  # raised by stop()
                return

    def stop(self) -> None:
        if self._thread is None:
            return
        self._halt.set()
        self._thread.join()
        self._thread = None
        try:
            if self._error is None:
                self._sample_unless_unreadable()
        finally:
            if self._handle is not None:
                self._handle.close()
        if self._error is not None:
            raise self._error

    def intervals(self, stores: list[Path]) -> list[Interval]:
        readings: dict[str, list[tuple[float, float, dict, dict]]] = defaultdict(list)
        for store in stores:
            if not Path(store).is_file():
                continue
            for record in json_lines(Path(store)):
                reading = _reading(record)
                if reading is not None and record.get("source") == self.name:
                    readings[str(record.get("origin"))].append(reading)
        intervals = []
        for series in readings.values():
            series.sort(key=lambda reading: reading[0])
            for (t0, _, before, _), (t1, scale, after, wrap) in pairwise(series):
                common = before.keys() & after.keys()
                if t1 > t0 and common:
                    units = sum(_step(before[name], after[name], wrap.get(name)) for name in common)
                    intervals.append(Interval(t0, t1, units * scale))
        return sorted(intervals, key=lambda interval: interval.start)


def _reading(record: dict[str, Any]) -> tuple[float, float, dict[str, int], dict[str, int]] | None:
    t, scale, counters, wrap = (record.get(key) for key in ("t", "scale", "counters", "wrap"))
    if not (
        isinstance(t, (int, float))
        and isinstance(scale, (int, float))
        and isinstance(counters, dict)
        and isinstance(wrap, dict)
    ):
        return None
    if not all(isinstance(value, int) for value in (*counters.values(), *wrap.values())):
        return None
    return float(t), float(scale), counters, wrap


def _step(before: int, after: int, wrap: int | None) -> int:
    """Units counted between two readings of one counter."""
    if after >= before:
        return after - before
    if wrap and before - after > wrap / 2:  # wrapped around once
        return after + wrap - before
    return 0  # the readings crossed, or the counter was reset (an NVIDIA driver reload)


def _origin() -> str:
    """The machine and boot a counter reading belongs to: counters of another machine, or
    of the same one before a reboot, are never subtracted from one another."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()} {boot}".strip()
