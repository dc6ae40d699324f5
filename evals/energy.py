"""Energy a run uses: measured from a power source, attributed to evals by time.

Two records, both in the run folder, are joined at the end:

- Spans (`Span`, `SpanLog`): the wall-clock start and end (`time.time()`) of every model
  request or local generation, with its eval and LeetCode band. Each process appends to a
  file of its own, `energy/spans-<pid>-<random>.jsonl`, one line per span, flushed; `read`
  gathers every process's files and skips a line cut short by a kill.
- Energy (`PowerSource.intervals`): how many joules the machine used between two instants.

Sources (`source(name)`):

- `rapl`: Linux powercap counters, `<powercap>/intel-rapl:N/energy_uj` (microjoules,
  cumulative). Only the top-level package zones are read, one per CPU socket (`intel-rapl:N`
  whose `name` is not `psys`): never a subzone `intel-rapl:N:M` (core, uncore, dram lie
  inside their package, so reading both double counts; sysfs lists them at the top level
  too), never `psys` (the whole platform, packages included), never `intel-rapl-mmio:N`
  (the same package counter read through MMIO). Counters wrap at `max_energy_range_uj`: a
  reading lower than the one before by more than half that range wrapped once and gains the
  range; lower by less, the two readings crossed (two samplers reading within microseconds)
  and the step counts 0. `energy_uj` is readable by root only since Linux 5.10.
- `nvml`: each GPU's `nvmlDeviceGetTotalEnergyConsumption` (millijoules since the driver
  loaded, Volta or newer), summed over GPUs, through NVIDIA's own binding `nvidia-ml-py`
  (imported on first use, so this module imports without it or a GPU). A counter that went
  down means the driver was reloaded: that step counts 0. Tests pass their own reader
  (`device_count()`, `total_energy_mj(index)`).
- `hwinfo`: the CSV log HWiNFO writes (`HwinfoSource`): a header row `Date,Time,<sensor>
  [<unit>],...`, one row per sample with the date as dd.mm.yyyy and the time as
  hh:mm:ss.mmm in local time, a trailing comma; cp1252 or UTF-8 (with or without a BOM);
  when logging stops HWiNFO writes the header again and a row of sensor names. Any row
  that is not a sample is skipped, a header row (re)names the columns. The power summed is
  `DEFAULT_COLUMNS` ("CPU Package Power [W]" and "GPU Power [W]", every column of those
  names: a GPU each) or an explicit list of column headers. Not every `[W]` column: HWiNFO
  lists parts of the package (IA cores, GT cores, DRAM, per core) and rails of the GPU
  beside their totals, so summing all counts the same watts several times. Samples become
  intervals by the trapezoid rule (the mean of the two samples' watts times the time
  between them); two samples more than `MAX_GAP` seconds apart (logging paused, sleep)
  make no interval. In the hour repeated when clocks go back, a time earlier than the sample
  before is read as its second occurrence. `check` wants the file's last sample written
  within `LOG_FRESH` seconds and no closing header after it: HWiNFO is logging now.

With `--energy` alone the source is the platform's (`DEFAULT_SOURCE`): `rapl` on Linux and
macOS (where its check says in one line that there is no powercap), `hwinfo` on Windows, whose
log is then `WINDOWS_LOG`, `C:\\hwinfo\\eval.csv`, the original harness's default.

Counter sources sample on a daemon thread (`start(store)`, every `period` seconds; `stop`
takes a last reading) into a JSONL store of cumulative readings, a line per reading,
flushed, so a killed run keeps what it read. Each line names the source, the machine and
boot it was read on (`origin`), its time, each counter's raw value and wrap range, and
joules per unit. `intervals(stores)` merges the readings of every store of the same source
and origin in time order and makes an interval of each two consecutive ones: two sessions
sampling at once are not counted twice, and the gap between two sessions is one interval
at the average power over it (only spans inside it take a share of it).

Attribution (`attribute`): of an interval [a, b] with energy E only the part during which
at least one span is in flight counts: E x (time of [a, b] covered by the union of spans)
/ (b - a). It is shared among evals in proportion to each eval's spans in flight
integrated over [a, b] (its request-seconds), divided by the integral of all spans in
flight; bands share an eval's part the same way (spans without a band take their share
of the eval, but none of a band). Energy while nothing is in flight (idle) goes to nobody,
and so does the part of a span outside every interval (unmeasured). An eval (a band)
appears in the result when an interval covers one of its spans. kWh = J / 3.6e6,
unrounded.
"""

from __future__ import annotations

import argparse
import bisect
import codecs
import csv
import json
import os
import re
import secrets
import socket
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Protocol, Sequence, TypeGuard

from evals.errors import StorageError, UsageError
from evals import entry_points
from evals.entry_points import Registry
from evals.flags import Flag, seconds

JOULES_PER_KWH = 3.6e6
ATTRIBUTION = "energy while spans are in flight, shared by requests in flight"
DEFAULT_COLUMNS = ("CPU Package Power [W]", "GPU Power [W]")
LOG_FRESH = 10.0  # seconds: HWiNFO logs every 2 s by default
MAX_GAP = 30.0  # seconds between two HWiNFO samples that still make an interval
TAIL_BYTES = 1 << 16  # what `HwinfoSource.check` reads of the log's end


@dataclass(frozen=True)
class Span:
    """One model request or local generation, wall clock (`time.time()`)."""

    start: float
    end: float
    eval: str
    band: str | None = None  # LeetCode difficulty, or None


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, skipping what is not one: a line cut short by a
    kill or being written now."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    for line in text.split("\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _open_append(path: Path) -> BinaryIO:
    """`path` opened to append lines, after a newline if a killed writer left a line cut
    short, so the next line is not glued to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")
    if handle.tell() > 0:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) != b"\n":
            handle.write(b"\n")
    return handle


def _unwritable(path: Path, error: OSError) -> StorageError:
    return StorageError(f"cannot write {path} ({error.strerror or error}): free space on its disk, or run elsewhere")


def _write_line(handle: BinaryIO, path: Path, record: dict[str, Any]) -> None:
    try:
        handle.write(json.dumps(record, allow_nan=False).encode() + b"\n")
        handle.flush()
    except OSError as error:
        raise _unwritable(path, error) from error


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
            if self._pid != os.getpid() or path is None or handle is None:  # the first span, or the first in a forked child
                self._pid = os.getpid()
                path = self.path = self.folder / f"spans-{self._pid}-{secrets.token_hex(4)}.jsonl"
                try:
                    handle = self._handle = _open_append(path)
                except OSError as error:
                    raise _unwritable(path, error) from error
            _write_line(handle, path, record)

    @contextmanager
    def span(self, eval: str, band: str | None = None, *, clock: Callable[[], float] = time.time) -> Iterator[None]:
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
            for record in _json_lines(path):
                span = _span(record)
                if span is not None:
                    spans.append(span)
        return spans


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _span(record: dict[str, Any]) -> Span | None:
    start, end, name, band = (record.get(key) for key in ("start", "end", "eval", "band"))
    if not (_number(start) and _number(end)) or not isinstance(name, str) or not (band is None or isinstance(band, str)):
        return None
    return Span(float(start), float(end), name, band)


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
            raise UsageError(f"the energy sampling period must be positive, not {period}: give a number of seconds such as 1")
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
            self._handle = _open_append(store)
        except OSError as error:
            raise _unwritable(store, error) from error
        self._store = store
        self.sample()
        self._halt.clear()
        self._thread = threading.Thread(target=self._sample_until_stopped, name=f"energy-{self.name}", daemon=True)
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
            _write_line(self._handle, self._store, record)

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
            for record in _json_lines(Path(store)):
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
    if not (isinstance(t, (int, float)) and isinstance(scale, (int, float)) and isinstance(counters, dict) and isinstance(wrap, dict)):
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


def _read_counter(path: Path) -> int:
    return int(path.read_text().strip())


class RaplSource(CounterSource):
    """The RAPL package counters of Linux powercap (see the module's docstring)."""

    name = "rapl"
    scale = 1e-6  # energy_uj

    def __init__(self, powercap: Path, period: float, clock: Callable[[], float]):
        super().__init__(period, clock)
        self.powercap = powercap

    def found(self) -> list[Path]:
        return self.zones()

    def zones(self) -> list[Path]:
        """The top-level package zones: `intel-rapl:N`, not a subzone, not psys."""
        zones = []
        for zone in sorted(self.powercap.glob("intel-rapl:*")):
            if re.fullmatch(r"intel-rapl:\d+", zone.name):
                try:
                    kind = (zone / "name").read_text().strip()
                except OSError:
                    kind = ""
                if kind != "psys":
                    zones.append(zone)
        return zones

    def check(self) -> None:
        zones = self.zones()
        if not zones and sys.platform != "linux":  # powercap is Linux's
            raise UsageError(f"RAPL counters are read from Linux's powercap, which {sys.platform} does not have: "
                             "choose --energy-source nvml (an NVIDIA GPU) or hwinfo (--energy-log=PATH, HWiNFO's CSV log)")
        if not zones:
            raise UsageError(f"no RAPL package zone in {self.powercap} (no intel_rapl driver, or a virtual machine): choose --energy-source nvml or hwinfo")
        for zone in zones:
            for file in ("energy_uj", "max_energy_range_uj"):
                try:
                    _read_counter(zone / file)
                except PermissionError as error:
                    raise UsageError(
                        f"cannot read {zone / file} (permission denied: root only since Linux 5.10): "
                        f"run as root, or `sudo chmod a+r {self.powercap}/intel-rapl:*/{file}`"
                    ) from error
                except (OSError, ValueError) as error:
                    raise UsageError(f"cannot read {zone / file} ({error}): choose --energy-source nvml or hwinfo") from error

    def read_one(self, zone: Path) -> tuple[str, int, int | None]:
        return zone.name, _read_counter(zone / "energy_uj"), _read_counter(zone / "max_energy_range_uj")

    @property
    def method(self) -> str:
        return f"RAPL package counters (powercap energy_uj) read every {self.period:g} s; {ATTRIBUTION}"


class NvmlReader(Protocol):
    def device_count(self) -> int: ...

    def total_energy_mj(self, index: int) -> int: ...


class Pynvml:
    """The real NVML reader: `nvidia-ml-py`, imported and initialised on first use."""

    def __init__(self) -> None:
        self._nvml: Any = None
        self._handles: dict[int, Any] = {}

    def _library(self) -> Any:
        if self._nvml is None:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
        return self._nvml

    def device_count(self) -> int:
        return self._library().nvmlDeviceGetCount()

    def total_energy_mj(self, index: int) -> int:
        nvml = self._library()
        if index not in self._handles:
            self._handles[index] = nvml.nvmlDeviceGetHandleByIndex(index)
        return nvml.nvmlDeviceGetTotalEnergyConsumption(self._handles[index])


class NvmlSource(CounterSource):
    """The total energy counter of every GPU, read through `reader` (the real one is
    `Pynvml`; tests pass their own)."""

    name = "nvml"
    scale = 1e-3  # millijoules

    def __init__(self, reader: NvmlReader, period: float, clock: Callable[[], float]):
        super().__init__(period, clock)
        self.reader = reader

    def check(self) -> None:
        try:  # whatever NVML raises (no library, no driver) is the same answer here
            count = self.reader.device_count()
        except Exception as error:
            raise UsageError(f"NVML is not available ({error or type(error).__name__}): install the NVIDIA driver, or choose --energy-source rapl or hwinfo") from error
        if count == 0:
            raise UsageError("NVML sees no GPU: choose --energy-source rapl or hwinfo")
        for index in range(count):
            try:
                self.reader.total_energy_mj(index)
            except Exception as error:
                raise UsageError(
                    f"GPU {index} does not report its total energy ({error or type(error).__name__}; Volta or newer needed): "
                    "choose --energy-source rapl or hwinfo"
                ) from error

    def found(self) -> list[int]:
        return list(range(self.reader.device_count()))

    def read_one(self, index: int) -> tuple[str, int, int | None]:
        return f"gpu{index}", int(self.reader.total_energy_mj(index)), None

    @property
    def method(self) -> str:
        return f"NVML total energy counters of every GPU read every {self.period:g} s; {ATTRIBUTION}"


class HwinfoSource(PowerSource):
    """HWiNFO's CSV sensor log: power columns integrated over time."""

    name = "hwinfo"

    def __init__(self, log: Path, columns: Sequence[str] | None, clock: Callable[[], float]):
        self.log = log
        self.columns = tuple(columns) if columns else None
        self.clock = clock

    def check(self) -> None:
        if not self.log.is_file():
            raise UsageError(f"the HWiNFO log {self.log} does not exist: start HWiNFO's sensor logging into that file before the run")
        with open(self.log, "rb") as handle:
            head = handle.readline()
            size = handle.seek(0, os.SEEK_END)
            start = max(len(head), size - TAIL_BYTES)
            handle.seek(start)
            tail = handle.read()
        if start > len(head):  # begin at a line's start
            tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else b""
        log = _hwinfo_samples(_decode(head + tail).splitlines(), self.columns, self.log)
        if not log.samples:
            raise UsageError(f"the HWiNFO log {self.log} has no sample yet: start HWiNFO's sensor logging into that file before the run")
        if log.closed:
            raise UsageError(f"the HWiNFO log {self.log} ends with HWiNFO's closing header, so logging has stopped: start it again into that file")
        age = self.clock() - log.samples[-1][0]
        if age > LOG_FRESH:
            raise UsageError(f"the HWiNFO log {self.log} was last written {age:.0f} s ago, so HWiNFO is not logging into it: start its sensor logging into that file")
        if age < -LOG_FRESH:
            raise UsageError(f"the last sample of the HWiNFO log {self.log} is {-age:.0f} s ahead of this machine's clock: log on this machine, in its time zone")

    def intervals(self, stores: list[Path]) -> list[Interval]:
        """From the log itself (the stores are not used)."""
        samples = _hwinfo_samples(_decode(self.log.read_bytes()).splitlines(), self.columns, self.log).samples
        return [
            Interval(t0, t1, (w0 + w1) / 2 * (t1 - t0))
            for (t0, w0), (t1, w1) in pairwise(samples)
            if 0 < t1 - t0 <= MAX_GAP
        ]

    @property
    def method(self) -> str:
        columns = " + ".join(self.columns) if self.columns else " + ".join(DEFAULT_COLUMNS) + " (those logged)"
        return f"HWiNFO log, {columns}, trapezoid rule; {ATTRIBUTION}"


def _decode(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


@dataclass
class _HwinfoLog:
    samples: list[tuple[float, float]]  # (time, watts summed)
    closed: bool  # a header row after the last sample: logging stopped


def _hwinfo_samples(lines: Iterable[str], columns: tuple[str, ...] | None, log: Path) -> _HwinfoLog:
    wanted: list[int] | None = None
    samples: list[tuple[float, float]] = []
    closed = False
    for row in csv.reader(lines):
        if len(row) < 2:
            continue
        if row[0].strip() == "Date" and row[1].strip() == "Time":
            wanted = _power_columns([cell.strip() for cell in row], columns, log)
            closed = bool(samples)
            continue
        t = _hwinfo_time(row[0], row[1], samples[-1][0] if samples else None)
        if wanted is None or t is None:
            continue
        try:
            watts = sum(float(row[index]) for index in wanted)
        except (IndexError, ValueError):  # a row being written, or a sensor without a value
            continue
        samples.append((t, watts))
        closed = False
    return _HwinfoLog(samples, closed)


def _power_columns(header: list[str], columns: tuple[str, ...] | None, log: Path) -> list[int]:
    """The indexes of the columns summed: every column named in `columns` (all must be
    there), or of `DEFAULT_COLUMNS` (one at least)."""
    if columns:
        missing = [name for name in columns if name not in header]
    else:
        missing = [] if any(name in header for name in DEFAULT_COLUMNS) else list(DEFAULT_COLUMNS)
    if missing:
        power = ", ".join(f'"{name}"' for name in header if name.endswith("[W]")) or "none"
        wanted = " or ".join(f'"{name}"' for name in missing)
        raise UsageError(f"the HWiNFO log {log} has no column {wanted} (its power columns: {power}): name the columns to sum")
    return [index for index, name in enumerate(header) if name in (columns or DEFAULT_COLUMNS)]


def _hwinfo_time(date: str, clock_time: str, previous: float | None) -> float | None:
    """A sample's local date and time as a timestamp, or None if the row is no sample."""
    text = f"{date.strip()} {clock_time.strip()}"
    for form in ("%d.%m.%Y %H:%M:%S.%f", "%d.%m.%Y %H:%M:%S"):
        try:
            local = datetime.strptime(text, form)
            break
        except ValueError:
            continue
    else:
        return None
    t = local.timestamp()
    if previous is not None and t < previous:  # the repeated hour when clocks go back
        t = max(t, local.replace(fold=1).timestamp())
    return t


@dataclass(frozen=True)
class PowerSourceInfo:
    """A power source as `--energy-source NAME` finds it (`register_source`):
    how to make it, and its own how-to-run flags, each given to `make` as a keyword."""

    make: Callable[..., PowerSource]  # (**options, clock) -> the source
    options: tuple[tuple[str, Flag], ...] = ()  # (keyword of `make`, the flag that sets it)
    position: int = 100  # its place in lists of sources (then by name)

    @property
    def flags(self) -> tuple[Flag, ...]:
        return tuple(flag for _, flag in self.options)


_sources: dict[str, tuple[str, PowerSourceInfo]] = {}  # name -> (the registering module, what it is)


def register_source(name: str, info: PowerSourceInfo) -> PowerSourceInfo:
    """Register a power source (`--energy-source NAME`), as `register_provider` does a provider."""
    return entry_points.register_in(_sources, "power source", name, info)


def sources() -> dict[str, PowerSourceInfo]:
    """Every registered power source by name, in the order of their `position` (then name)."""
    entry_points.load()
    return {name: info for name, (_, info) in _sources.items()}


ENERGY_LOG = Flag("--energy-log", "with --energy: the CSV log HWiNFO is writing (--energy-source hwinfo); write --energy-log=PATH", Path,
                  evaluate_help="with --energy: the CSV log HWiNFO is writing (--energy-source hwinfo)", forward=True, resume="run")
ENERGY_POWERCAP = Flag("--energy-powercap", argparse.SUPPRESS, Path, Path("/sys/class/powercap"), forward=True, resume="run")
ENERGY_PERIOD = Flag("--energy-period", "with --energy: seconds between readings of a counter source (default 1)", float, 1.0, forward=True,
                     resume="run", check=seconds)


def _hwinfo(*, log: Path | None = None, columns: Sequence[str] | None = None, clock: Callable[[], float]) -> PowerSource:
    if log is None and sys.platform == "win32":
        log = WINDOWS_LOG
    if log is None:
        raise UsageError("--energy-source hwinfo reads HWiNFO's CSV log: name it with --energy-log PATH")
    return HwinfoSource(Path(log), columns, clock)


def _rapl(*, powercap: Path = Path("/sys/class/powercap"), period: float = 1.0, clock: Callable[[], float]) -> PowerSource:
    return RaplSource(Path(powercap), period, clock)


def _nvml(*, nvml: NvmlReader | None = None, period: float = 1.0, clock: Callable[[], float]) -> PowerSource:
    return NvmlSource(nvml if nvml is not None else Pynvml(), period, clock)


register_source("hwinfo", PowerSourceInfo(_hwinfo, (("log", ENERGY_LOG),), position=10))
register_source("rapl", PowerSourceInfo(_rapl, (("powercap", ENERGY_POWERCAP), ("period", ENERGY_PERIOD)), position=20))
register_source("nvml", PowerSourceInfo(_nvml, (("period", ENERGY_PERIOD),), position=30))
SOURCES = Registry(sources)  # every registered power source, by name
# With --energy and no flag of another source: what the platform has. Windows has no RAPL
# counters to read; the original harness ran there, on HWiNFO's log at WINDOWS_LOG.
DEFAULT_SOURCE = "hwinfo" if sys.platform == "win32" else "rapl"
WINDOWS_LOG = Path(r"C:\hwinfo\eval.csv")  # the original's default --energy-log


def source(name: str, *, clock: Callable[[], float] = time.time, **options: Any) -> PowerSource:
    """The power source `name` (one of `SOURCES`) made with its `options` (those left out or
    None: its defaults): for `rapl` powercap and period, `nvml` period and nvml (a reader for
    tests; the real one is `Pynvml`), `hwinfo` log and columns (the HWiNFO columns to sum,
    default `DEFAULT_COLUMNS`)."""
    if name not in SOURCES:
        raise UsageError(f"unknown --energy-source {name!r}: choose one of {', '.join(SOURCES)}")
    return SOURCES[name].make(clock=clock, **{k: v for k, v in options.items() if v is not None})


def chosen(value: Callable[[str], Any]) -> PowerSource | None:
    """The power source the energy flags name, made (not yet checked), or None without
    --energy; `value(dest)` reads a flag (None or the flag's default: not given). Every
    mistake in them is one UsageError, before anything runs: a source's flag (or
    --energy-source) without --energy, which would be ignored; a flag of one source given to
    another. With no --energy-source, the source whose flags are given is meant (a log path
    means HWiNFO), else rapl."""
    given = list({flag.name: flag for info in SOURCES.values() for flag in info.flags
                  if value(flag.dest) is not None and value(flag.dest) != flag.default}.values())
    named = value("energy_source")
    if not value("energy"):
        unused = (["--energy-source"] if named else []) + [flag.name for flag in given]
        if unused:
            raise UsageError(f"{', '.join(unused)} {'has' if len(unused) == 1 else 'have'} no use without --energy: "
                             f"add --energy to measure the energy, or leave {'it' if len(unused) == 1 else 'them'} out")
        return None
    name = named or next((name for name in (DEFAULT_SOURCE, *SOURCES) if all(flag in SOURCES[name].flags for flag in given)), None)
    if name is None:
        raise UsageError(f"{' and '.join(flag.name for flag in given)} belong to different power sources: name one with --energy-source")
    if foreign := [flag.name for flag in given if flag not in SOURCES[name].flags]:
        owners = [other for other, info in SOURCES.items() if any(flag.name in foreign for flag in info.flags)]
        raise UsageError(f"{', '.join(foreign)} {'is' if len(foreign) == 1 else 'are'} for --energy-source {' or '.join(owners)}, "
                         f"not {name}: leave {'it' if len(foreign) == 1 else 'them'} out, or choose that source")
    return source(name, **options_of(name, lambda flag: value(flag.dest)))


def options_of(name: str, value: Callable[[Flag], Any]) -> dict[str, Any]:
    """The keyword options of source `name`, each read from its flag by `value`."""
    return {keyword: value(flag) for keyword, flag in SOURCES[name].options}


def attribute(spans: list[Span], intervals: list[Interval]) -> dict[str, dict]:
    """{eval: {"kWh": float, "bands": {band: kWh}}}: each interval's energy while spans are
    in flight, shared by request-seconds (see the module's docstring)."""
    segments = _in_flight(spans)
    ends = [end for _, end, _ in segments]
    joules: dict[str, float] = defaultdict(float)
    bands: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for interval in intervals:
        length = interval.end - interval.start
        if not length > 0:
            continue
        covered = 0.0
        weights: dict[tuple[str, str | None], float] = defaultdict(float)
        index = bisect.bisect_right(ends, interval.start)
        while index < len(segments) and segments[index][0] < interval.end:
            start, end, counts = segments[index]
            seconds = min(end, interval.end) - max(start, interval.start)
            covered += seconds
            for key, count in counts:
                weights[key] += count * seconds
            index += 1
        if not covered > 0:
            continue
        per_weight = interval.joules * covered / length / sum(weights.values())
        for (name, band), weight in weights.items():
            joules[name] += per_weight * weight
            if band is not None:
                bands[name][band] += per_weight * weight
    return {
        name: {"kWh": total / JOULES_PER_KWH, "bands": {band: part / JOULES_PER_KWH for band, part in bands[name].items()}}
        for name, total in joules.items()
    }


def _in_flight(spans: list[Span]) -> list[tuple[float, float, tuple[tuple[tuple[str, str | None], int], ...]]]:
    """The time covered by spans, cut where the spans in flight change: (start, end,
    ((eval, band), count) for each pair in flight), in order, never overlapping."""
    events: list[tuple[float, int, tuple[str, str | None]]] = []
    for span in spans:
        if span.end > span.start:
            events += [(span.start, 1, (span.eval, span.band)), (span.end, -1, (span.eval, span.band))]
    events.sort(key=lambda event: event[0])
    segments = []
    counts: dict[tuple[str, str | None], int] = {}  # only those in flight
    followings: list[float | None] = [event[0] for event in events[1:]]
    for (time_, change, key), following in zip(events, [*followings, None]):
        count = counts.get(key, 0) + change
        if count:
            counts[key] = count
        else:
            del counts[key]
        if following != time_ and following is not None and counts:
            segments.append((time_, following, tuple(counts.items())))
    return segments
