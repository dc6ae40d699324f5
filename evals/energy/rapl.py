"""`rapl`: Linux powercap counters, `<powercap>/intel-rapl:N/energy_uj` (microjoules,
cumulative). Only the top-level package zones are read, one per CPU socket (`intel-rapl:N`
whose `name` is not `psys`): never a subzone `intel-rapl:N:M` (core, uncore, dram lie inside
their package, so reading both double counts; sysfs lists them at the top level too), never
`psys` (the whole platform, packages included), never `intel-rapl-mmio:N` (the same package
counter read through MMIO). Counters wrap at `max_energy_range_uj` (see `evals.energy._base`).
`energy_uj` is readable by root only since Linux 5.10. The default source with `--energy`
on Linux and macOS (where its check says in one line that there is no powercap)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from evals.errors import UsageError
from evals.flags import HIDDEN, Flag

from ._base import ATTRIBUTION, ENERGY_PERIOD, CounterSource, PowerSource
from ._registry import PowerSourceInfo, register_source

ENERGY_POWERCAP = Flag(
    "--energy-powercap",
    HIDDEN,
    Path,
    Path("/sys/class/powercap"),
    forward=True,
    resume="run",
)


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
            raise UsageError(
                f"RAPL counters are read from Linux's powercap, which {sys.platform} does not have: "
                "choose --energy-source nvml (an NVIDIA GPU) or hwinfo (--energy-log=PATH, HWiNFO's CSV log)"
            )
        if not zones:
            raise UsageError(
                f"no RAPL package zone in {self.powercap} (no intel_rapl driver, or a virtual "
                "machine): choose --energy-source nvml or hwinfo"
            )
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
                    raise UsageError(
                        f"cannot read {zone / file} ({error}): choose --energy-source nvml or hwinfo"
                    ) from error

    def read_one(self, zone: Path) -> tuple[str, int, int | None]:
        return (
            zone.name,
            _read_counter(zone / "energy_uj"),
            _read_counter(zone / "max_energy_range_uj"),
        )

    @property
    def method(self) -> str:
        return f"RAPL package counters (powercap energy_uj) read every {self.period:g} s; {ATTRIBUTION}"


def _rapl(
    *, powercap: Path = Path("/sys/class/powercap"), period: float = 1.0, clock: Callable[[], float]
) -> PowerSource:
    return RaplSource(Path(powercap), period, clock)


register_source(
    "rapl",
    PowerSourceInfo(_rapl, (("powercap", ENERGY_POWERCAP), ("period", ENERGY_PERIOD)), position=20),
)
