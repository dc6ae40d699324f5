"""The registry of power sources: every source an installed package registers
(`register_source(name, PowerSourceInfo(...))`), how to make it and its own flags. The
modules the `roblox_evals` entry points name are imported on the first question
(`evals.entry_points.load`); the built-in rapl, nvml and hwinfo are three of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals import entry_points
from evals.flags import Flag

from ._base import PowerSource


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


_sources: dict[
    str, tuple[str, PowerSourceInfo]
] = {}  # name -> (the registering module, what it is)


def register_source(name: str, info: PowerSourceInfo) -> PowerSourceInfo:
    """Register a power source (`--energy-source NAME`), as `register_provider` does a provider."""
    return entry_points.register_in(_sources, "power source", name, info, PowerSourceInfo)


def sources() -> dict[str, PowerSourceInfo]:
    """Every registered power source by name, in the order of their `position` (then name)."""
    entry_points.load()
    return {name: info for name, (_, info) in _sources.items()}
