"""Power sources' fixtures: a fake powercap (RAPL) tree and `Power`, a thread driving it at a known
wattage; HWiNFO's CSV log as HWiNFO writes it."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path

WRAP = 262_143_328_850  # a real max_energy_range_uj


def zone(folder: Path, name: str, kind: str, energy: int = 0) -> Path:
    folder.mkdir(parents=True)
    (folder / "name").write_text(kind + "\n")
    (folder / "energy_uj").write_text(f"{energy}\n")
    (folder / "max_energy_range_uj").write_text(f"{WRAP}\n")
    return folder


def powercap_tree(root: Path) -> dict[str, Path]:
    """As sysfs lays it out: every zone, subzones too, listed at the top level."""
    zones = {
        "package-0": zone(root / "intel-rapl:0", "intel-rapl:0", "package-0", WRAP - 2_000_000),
        "package-1": zone(root / "intel-rapl:1", "intel-rapl:1", "package-1", 5_000_000),
        "psys": zone(root / "intel-rapl:2", "intel-rapl:2", "psys", 0),
        "core": zone(root / "intel-rapl:0" / "intel-rapl:0:0", "intel-rapl:0:0", "core", 0),
        "mmio": zone(root / "intel-rapl-mmio:0", "intel-rapl-mmio:0", "package-0", 0),
    }
    (root / "intel-rapl:0:0").symlink_to(zones["core"])
    (root / "intel-rapl").mkdir()  # the control type: no counter of its own
    return zones


def advance(zones: dict[str, Path], **microjoules: int) -> None:
    for name, amount in microjoules.items():
        path = zones[name] / "energy_uj"
        path.write_text(f"{(int(path.read_text()) + amount) % WRAP}\n")


HEADER = [
    "Date",
    "Time",
    "Virtual Memory Committed [MB]",
    "Core Clocks (avg) [MHz]",
    "CPU Package [°C]",
    "CPU Package Power [W]",
    "IA Cores Power [W]",
    "GPU Temperature [°C]",
    "GPU Power [W]",
    "GPU Power [W]",
    "Vcore [V]",
]


SENSORS = [
    "",
    "",
    "System: ASUS ROG",
    "CPU [#0]: Intel Core i9-13900K",
    "CPU [#0]: Intel Core i9-13900K: DTS",
    "CPU [#0]: Intel Core i9-13900K: Enhanced",
    "CPU [#0]: Intel Core i9-13900K: Enhanced",
    "GPU [#0]: NVIDIA",
    "GPU [#0]: NVIDIA",
    "GPU [#1]: NVIDIA",
    "ASUS ROG (Nuvoton NCT6798D)",
]


def hwinfo_row(
    t: float, cpu: float, gpus: tuple[float, float], *, cores: float = 30.0
) -> list[str]:
    local = datetime.fromtimestamp(t)
    return [
        local.strftime("%d.%m.%Y"),
        local.strftime("%H:%M:%S.") + f"{local.microsecond // 1000:03d}",
        "12345",
        "4800.0",
        "61",
        f"{cpu:.3f}",
        f"{cores:.3f}",
        "55",
        f"{gpus[0]:.3f}",
        f"{gpus[1]:.3f}",
        "1.250",
    ]


def write_hwinfo(
    path: Path, rows: list[list[str]], *, closed: bool, encoding: str = "utf-8-sig"
) -> Path:
    """As HWiNFO writes its log: a header with units, a trailing comma on every row, CRLF,
    and when logging stops the header again and a row of sensor names."""
    lines = [HEADER, *rows] + ([HEADER, SENSORS] if closed else [])
    path.write_bytes(("".join(",".join(cells) + ",\r\n" for cells in lines)).encode(encoding))
    return path


WATTS = 50.0


class Power:
    """Drives package-0 of a fake powercap tree at WATTS, in small steps, until stopped; knows
    when it ran."""

    def __init__(self, root: Path):
        self.zones = powercap_tree(root)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        counter = self.zones["package-0"] / "energy_uj"
        started, base = time.time(), int(counter.read_text())
        while not self._stop.wait(0.005):
            # The energy since the start, not a sum of steps: a late step under load costs
            # the next reading a few milliseconds, never energy.
            staged = counter.with_name(
                "energy_uj.new"
            )  # whole, as sysfs reads are, never a half-written number
            staged.write_text(f"{(base + int(WATTS * (time.time() - started) * 1e6)) % WRAP}\n")
            staged.replace(counter)

    def __enter__(self) -> Power:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
