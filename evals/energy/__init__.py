"""Energy a run uses: measured from a power source, attributed to evals by time.

Two records, both in the run folder, are joined at the end:

- Spans (`spans.py`: `Span`, `SpanLog`): the wall-clock start and end of every model request
  or local generation, with its eval and band, a file per process.
- Energy (`_base.py`: `PowerSource.intervals`): how many joules the machine used between two
  instants.

`attribution.py` joins them (`attribute`). The sources are extensions, each a module of its
own registered through its own `roblox_evals` entry point (`_registry.py`:
`register_source`, `sources()`), as each provider is: `rapl.py` (Linux powercap counters),
`nvml.py` (NVIDIA's GPU energy counters), `hwinfo.py` (HWiNFO's CSV log). Nothing here
imports one: `source(name)` makes the one registered under that name, and `chosen` the one
the energy flags name. With `--energy` alone the source is the platform's
(`DEFAULT_SOURCE`): `rapl` on Linux and macOS, `hwinfo` on Windows."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from evals.entry_points import Registry
from evals.errors import UsageError
from evals.flags import Flag

from ._base import ATTRIBUTION, ENERGY_PERIOD, CounterSource, Interval, PowerSource
from ._registry import PowerSourceInfo, register_source, sources
from .attribution import JOULES_PER_KWH, attribute
from .spans import Span, SpanLog

__all__ = [
    "ATTRIBUTION",
    "DEFAULT_SOURCE",
    "ENERGY_PERIOD",
    "JOULES_PER_KWH",
    "SOURCES",
    "CounterSource",
    "Interval",
    "PowerSource",
    "PowerSourceInfo",
    "Span",
    "SpanLog",
    "attribute",
    "chosen",
    "options_of",
    "register_source",
    "source",
    "sources",
]

SOURCES = Registry(sources)  # every registered power source, by name
# With --energy and no flag of another source: what the platform has. Windows has no RAPL
# counters to read; the original harness ran there, on HWiNFO's log (`hwinfo.WINDOWS_LOG`).
DEFAULT_SOURCE = "hwinfo" if sys.platform == "win32" else "rapl"


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
    given = list(
        {
            flag.name: flag
            for info in SOURCES.values()
            for flag in info.flags
            if value(flag.dest) is not None and value(flag.dest) != flag.default
        }.values()
    )
    named = value("energy_source")
    if not value("energy"):
        unused = (["--energy-source"] if named else []) + [flag.name for flag in given]
        if unused:
            raise UsageError(
                f"{', '.join(unused)} {'has' if len(unused) == 1 else 'have'} no use without --energy: "
                f"add --energy to measure the energy, or leave {'it' if len(unused) == 1 else 'them'} out"
            )
        return None
    name = named or next(
        (
            name
            for name in (DEFAULT_SOURCE, *SOURCES)
            if all(flag in SOURCES[name].flags for flag in given)
        ),
        None,
    )
    if name is None:
        raise UsageError(
            f"{' and '.join(flag.name for flag in given)} belong to different power sources: name "
            "one with --energy-source"
        )
    if foreign := [flag.name for flag in given if flag not in SOURCES[name].flags]:
        owners = [
            other
            for other, info in SOURCES.items()
            if any(flag.name in foreign for flag in info.flags)
        ]
        raise UsageError(
            f"{', '.join(foreign)} {'is' if len(foreign) == 1 else 'are'} for --energy-source {' or '.join(owners)}, "
            f"not {name}: leave {'it' if len(foreign) == 1 else 'them'} out, or choose that source"
        )
    return source(name, **options_of(name, lambda flag: value(flag.dest)))


def options_of(name: str, value: Callable[[Flag], Any]) -> dict[str, Any]:
    """The keyword options of source `name`, each read from its flag by `value`."""
    return {keyword: value(flag) for keyword, flag in SOURCES[name].options}
