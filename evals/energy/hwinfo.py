"""`hwinfo`: the CSV log HWiNFO writes (`HwinfoSource`): a header row `Date,Time,<sensor>
[<unit>],...`, one row per sample with the date as dd.mm.yyyy and the time as hh:mm:ss.mmm
in local time, a trailing comma; cp1252 or UTF-8 (with or without a BOM); when logging
stops HWiNFO writes the header again and a row of sensor names. Any row that is not a sample
is skipped, a header row (re)names the columns. The power summed is `DEFAULT_COLUMNS` ("CPU
Package Power [W]" and "GPU Power [W]", every column of those names: a GPU each) or an
explicit list of column headers. Not every `[W]` column: HWiNFO lists parts of the package
(IA cores, GT cores, DRAM, per core) and rails of the GPU beside their totals, so summing
all counts the same watts several times. Samples become intervals by the trapezoid rule (the
mean of the two samples' watts times the time between them); two samples more than
`MAX_GAP` seconds apart (logging paused, sleep) make no interval. In the hour repeated when
clocks go back, a time earlier than the sample before is read as its second occurrence.
`check` wants the file's last sample written within `LOG_FRESH` seconds and no closing
header after it: HWiNFO is logging now.

The default source with `--energy` on Windows, whose log is then `WINDOWS_LOG`,
`C:\\hwinfo\\eval.csv`, the original harness's default."""

from __future__ import annotations

import codecs
import csv
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from evals.errors import UsageError
from evals.flags import Flag

from ._base import ATTRIBUTION, Interval, PowerSource
from ._registry import PowerSourceInfo, register_source

DEFAULT_COLUMNS = ("CPU Package Power [W]", "GPU Power [W]")
LOG_FRESH = 10.0  # seconds: HWiNFO logs every 2 s by default
MAX_GAP = 30.0  # seconds between two HWiNFO samples that still make an interval
TAIL_BYTES = 1 << 16  # what `HwinfoSource.check` reads of the log's end
WINDOWS_LOG = Path(r"C:\hwinfo\eval.csv")  # the original's default --energy-log
ENERGY_LOG = Flag(
    "--energy-log",
    "with --energy: the CSV log HWiNFO is writing (--energy-source hwinfo); write --energy-log=PATH",
    Path,
    evaluate_help="with --energy: the CSV log HWiNFO is writing (--energy-source hwinfo)",
    forward=True,
    resume="run",
)


class HwinfoSource(PowerSource):
    """HWiNFO's CSV sensor log: power columns integrated over time."""

    name = "hwinfo"

    def __init__(self, log: Path, columns: Sequence[str] | None, clock: Callable[[], float]):
        self.log = log
        self.columns = tuple(columns) if columns else None
        self.clock = clock

    def check(self) -> None:
        if not self.log.is_file():
            raise UsageError(
                f"the HWiNFO log {self.log} does not exist: start HWiNFO's sensor logging into that file before the run"
            )
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
            raise UsageError(
                f"the HWiNFO log {self.log} has no sample yet: start HWiNFO's sensor logging into "
                "that file before the run"
            )
        if log.closed:
            raise UsageError(
                f"the HWiNFO log {self.log} ends with HWiNFO's closing header, so logging has "
                "stopped: start it again into that file"
            )
        age = self.clock() - log.samples[-1][0]
        if age > LOG_FRESH:
            raise UsageError(
                f"the HWiNFO log {self.log} was last written {age:.0f} s ago, so HWiNFO is not "
                "logging into it: start its sensor logging into that file"
            )
        if age < -LOG_FRESH:
            raise UsageError(
                f"the last sample of the HWiNFO log {self.log} is {-age:.0f} s ahead of this "
                "machine's clock: log on this machine, in its time zone"
            )

    def intervals(self, stores: list[Path]) -> list[Interval]:
        """From the log itself (the stores are not used)."""
        samples = _hwinfo_samples(
            _decode(self.log.read_bytes()).splitlines(), self.columns, self.log
        ).samples
        return [
            Interval(t0, t1, (w0 + w1) / 2 * (t1 - t0))
            for (t0, w0), (t1, w1) in pairwise(samples)
            if 0 < t1 - t0 <= MAX_GAP
        ]

    @property
    def method(self) -> str:
        columns = (
            " + ".join(self.columns)
            if self.columns
            else " + ".join(DEFAULT_COLUMNS) + " (those logged)"
        )
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
        raise UsageError(
            f"the HWiNFO log {log} has no column {wanted} (its power columns: {power}): name the columns to sum"
        )
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


def _hwinfo(
    *, log: Path | None = None, columns: Sequence[str] | None = None, clock: Callable[[], float]
) -> PowerSource:
    if log is None and sys.platform == "win32":
        log = WINDOWS_LOG
    if log is None:
        raise UsageError(
            "--energy-source hwinfo reads HWiNFO's CSV log: name it with --energy-log PATH"
        )
    return HwinfoSource(Path(log), columns, clock)


register_source("hwinfo", PowerSourceInfo(_hwinfo, (("log", ENERGY_LOG),), position=10))
