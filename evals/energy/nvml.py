"""`nvml`: each GPU's `nvmlDeviceGetTotalEnergyConsumption` (millijoules since the driver
loaded, Volta or newer), summed over GPUs, through NVIDIA's own binding `nvidia-ml-py`
(imported on first use, so this module imports without it or a GPU). A counter that went
down means the driver was reloaded: that step counts 0. Tests pass their own reader
(`device_count()`, `total_energy_mj(index)`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from evals.errors import UsageError

from ._base import ATTRIBUTION, ENERGY_PERIOD, CounterSource, PowerSource
from ._registry import PowerSourceInfo, register_source


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
            raise UsageError(
                f"NVML is not available ({str(error) or type(error).__name__}): install the NVIDIA "
                "driver, or choose --energy-source rapl or hwinfo"
            ) from error
        if count == 0:
            raise UsageError("NVML sees no GPU: choose --energy-source rapl or hwinfo")
        for index in range(count):
            try:
                self.reader.total_energy_mj(index)
            except Exception as error:
                raise UsageError(
                    f"GPU {index} does not report its total energy "
                    f"({str(error) or type(error).__name__}; Volta or newer needed): "
                    "choose --energy-source rapl or hwinfo"
                ) from error

    def found(self) -> list[int]:
        return list(range(self.reader.device_count()))

    def read_one(self, index: int) -> tuple[str, int, int | None]:
        return f"gpu{index}", int(self.reader.total_energy_mj(index)), None

    @property
    def method(self) -> str:
        return (
            f"NVML total energy counters of every GPU read every {self.period:g} s; {ATTRIBUTION}"
        )


def _nvml(
    *, nvml: NvmlReader | None = None, period: float = 1.0, clock: Callable[[], float]
) -> PowerSource:
    return NvmlSource(nvml if nvml is not None else Pynvml(), period, clock)


register_source("nvml", PowerSourceInfo(_nvml, (("period", ENERGY_PERIOD),), position=30))
