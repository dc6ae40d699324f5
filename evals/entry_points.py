"""The `roblox_evals` entry-point group, and what every registry of extensions is made of.

Evals, providers and power sources are extensions: modules that register what they define,
at their top, with their kind's registry, which sits beside the kind's interface (as
inspect_ai keeps `_eval/registry.py` and `model/_registry.py`):

- evals: `evals.tasks.register_task`, `tasks()` (evals/tasks/_registry.py)
- providers: `evals.providers.register_provider`, `providers()` (evals/providers/_registry.py)
- power sources: `evals.energy.register_source`, `sources()` (evals/energy/_registry.py)

This module names none of them. It finds the group's entry points and imports each module
they name (`load`); the module imported registers back into its kind's registry: the
inversion of a plugin registry, which no import statement shows (docs/layers.md). It also
keeps what each registry's table needs (`register_in`) and the read-only view of one
(`Registry`). The old names (`from evals.extensions import register_task`) keep working
through `evals.extensions`.

The built-in extensions register exactly as a third party's do: through the group (see
pyproject.toml). An entry point names a module; importing it registers what it defines:

    # pyproject.toml of a package of yours
    [project.entry-points.roblox_evals]
    echo = "echo_eval"

    # echo_eval/__init__.py
    from evals.tasks import Task, register_task

    @register_task
    class Echo(Task): ...

The group is loaded on the first question asked of a registry (not at import), so that a
command that never asks pays nothing, and a module an entry point names should import little
at its top (its SDK, torch, pydantic at first use)."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from evals.errors import UsageError

GROUP = "roblox_evals"
DISTRIBUTION = "roblox-evals"  # the harness's own, whose extensions are the built-ins

T = TypeVar("T")

_own_modules: set[str] = set()  # the modules the harness's own entry points name
_state = "unloaded"  # then "loading", then "loaded"
_loading = threading.RLock()  # reentrant: a module that asks a registry while it registers sees what is there


def register_in(table: dict[str, tuple[str, Any]], kind: str, name: str, info: Any) -> Any:
    """Put `info` in a registry's `table` under `name`, beside the module that registers it
    (the caller of the registry's `register_*`), in the order of `info.position` (then name).
    The same name again from the same module (imported again) replaces it; from another
    module, it is refused in one line naming both."""
    module = sys._getframe(2).f_globals.get("__name__", "?")  # the module that calls register_*
    if name in table and table[name][0] != module:
        raise UsageError(f"{kind} {name!r} ({module}): the name is {table[name][0]}'s already")
    table[name] = (module, info)
    ordered = sorted(table.items(), key=lambda item: (item[1][1].position, item[0]))
    table.clear()
    table.update(ordered)
    return info


def harness_module(module: str) -> bool:
    """Whether `module` is (or is inside) a module the harness's own entry points name: a
    built-in extension's (known once `load` has run)."""
    return any(module == own or module.startswith(own + ".") for own in _own_modules)


def entry_points_found() -> list[tuple[str, str, str | None]]:
    """The group's entry points in the order `load` imports them: (name, value, distribution),
    the harness's own first (a third party's eval may build on them), the same value once."""
    found = sorted(importlib.metadata.entry_points(group=GROUP),
                   key=lambda ep: (ep.dist is None or ep.dist.name != DISTRIBUTION, ep.name))
    seen: dict[str, tuple[str, str, str | None]] = {}
    for point in found:  # the same distribution twice on the path: once
        seen.setdefault(point.value, (point.name, point.value, point.dist.name if point.dist else None))
    return list(seen.values())


def load(found: list[tuple[str, str, str | None]] | None = None) -> None:
    """Import every module the entry-point group names (once): each registers its extensions.
    A module that fails to import is one line naming the entry point and the package. `found`
    (`entry_points_found()` of another process: the asking child's, from pytest's) spares the
    scan of every installed distribution."""
    global _state
    if _state == "loaded":
        return
    with _loading:  # another thread waits here until every module is loaded
        if _state != "unloaded":
            return
        _state = "loading"
        for name, value, owner in (entry_points_found() if found is None else found):
            module, _, attr = value.partition(":")
            if owner == DISTRIBUTION:
                _own_modules.add(module.strip())
            try:
                loaded = importlib.import_module(module.strip())
                for part in filter(None, attr.strip().split(".")):
                    loaded = getattr(loaded, part)
            except UsageError:
                raise
            except Exception as error:
                raise UsageError(f"the {GROUP} entry point {name!r} of {owner or 'an installed package'} ({value}) failed to load: "
                                 f"{type(error).__name__}: {error}; fix or uninstall it") from None
        _state = "loaded"


class Registry(Mapping[str, T]):
    """A read-only, lazily loaded view of one registry (`tasks()` and the like), for module
    constants that used to be dicts: `TASKS[name]` keeps working."""

    def __init__(self, read: Callable[[], Mapping[str, T]]):
        self._read = read

    def __getitem__(self, name: str) -> T:
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._read()))

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"Registry({list(self)})"
