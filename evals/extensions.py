"""The registries of the harness's extension points: evals (`Task`s), providers and power
sources. Nothing outside an extension's own module names it; everything that is a list of
them (pytest markers, `evaluate --evals`, dataset detection, models.json's resultFiles, the
result-file schema, the board's columns) is read from here.

The built-in extensions register exactly as a third party's do: through the entry-point group
`roblox_evals` (see pyproject.toml). An entry point names a module; importing it registers
what it defines with the decorators below:

    # pyproject.toml of a package of yours
    [project.entry-points.roblox_evals]
    echo = "echo_eval"

    # echo_eval/__init__.py
    from evals.extensions import register_task
    from evals.tasks import Task

    @register_task
    class Echo(Task): ...

Providers register with `register_provider(name, ProviderInfo(...))` and power sources with
`register_source(name, PowerSourceInfo(...))`, at the top of their own modules (see
docs/writing-an-eval.md and docs/writing-a-provider.md).

The groups are loaded on the first question asked of a registry (not at import), so that a
command that never asks pays nothing, and a module an entry point names should import little
at its top (its SDK, torch, pydantic at first use)."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, TypeVar

from evals.errors import UsageError
from evals.words import NUMBERS, either, in_words  # noqa: F401 (once here)

if TYPE_CHECKING:
    from evals.energy import PowerSourceInfo
    from evals.providers import ProviderInfo
    from evals.tasks import Task

GROUP = "roblox_evals"
DISTRIBUTION = "roblox-evals"  # the harness's own, whose extensions are the built-ins

T = TypeVar("T")
TaskT = TypeVar("TaskT", bound="Task")

_tasks: dict[str, Task] = {}
_own_modules: set[str] = set()  # the modules the harness's own entry points name
_providers: dict[str, tuple[str, ProviderInfo]] = {}  # name -> (the registering module, what it is)
_sources: dict[str, tuple[str, PowerSourceInfo]] = {}
_state = "unloaded"  # then "loading", then "loaded"
_loading = threading.RLock()  # reentrant: a module that asks a registry while it registers sees what is there


def register_task(cls: type[TaskT]) -> type[TaskT]:
    """Class decorator: register an eval (a `Task` subclass), by its `name`. Its name, tag and
    resultFiles key must be new; a second registration of the same class is ignored (a module
    imported twice, as __main__ and by name)."""
    task = cls()
    for existing in _tasks.values():
        if type(existing).__qualname__ == cls.__qualname__ and type(existing).__module__ == cls.__module__:
            return cls
        for attr in ("name", "tag", "key"):
            if getattr(existing, attr) == getattr(task, attr):
                raise UsageError(f"eval {task.name!r} ({cls.__module__}): its {attr} {getattr(task, attr)!r} is {existing.name!r}'s already")
    _tasks[task.name] = task
    ordered = sorted(_tasks.values(), key=lambda t: (t.position, t.name))
    _tasks.clear()
    _tasks.update((t.name, t) for t in ordered)
    return cls


def tasks() -> dict[str, Task]:
    """Every registered eval by name, in the order of their `position` (then name)."""
    load()
    return _tasks


def task_tags() -> dict[str, str]:
    """Each eval's tag -> its name ("ff" -> "freeform")."""
    return {task.tag: task.name for task in tasks().values()}


def on_board() -> dict[str, Task]:
    """The evals on the leaderboard, by name: every published model has one result file each."""
    return {name: task for name, task in tasks().items() if task.on_board}


def builtin(name: str) -> bool:
    """Whether the harness itself registers the eval: its items have a test function of their
    own in tests_evals/, a third party's come from the generic one there."""
    module = type(tasks()[name]).__module__
    return any(module == own or module.startswith(own + ".") for own in _own_modules)


def on_board_keys() -> dict[str, str]:
    """The board evals' resultFiles keys -> their names ("multipleChoice" -> "multiple_choice")."""
    return {task.key: task.name for task in on_board().values()}


def kilowatt_hour_keys() -> tuple[str, ...]:
    """A models.json entry's kilowattHour keys: every board eval's, in the board's order."""
    return tuple(dict.fromkeys(key for task in on_board().values() for key in task.kilowatt_hour_keys()))


def register_provider(name: str, info: ProviderInfo) -> ProviderInfo:
    """Register a provider (`--provider NAME`) by what it is and takes (`ProviderInfo`), from
    the module that defines it; the module must not import its SDK at its top. Registering a
    name again from the same module (imported again) replaces it; from another, it is refused."""
    return _register(_providers, "provider", name, info)


def providers() -> dict[str, ProviderInfo]:
    """Every registered provider by name, in the order of their `position` (then name)."""
    load()
    return {name: info for name, (_, info) in _providers.items()}


def provider_ahead(name: str, found: list[tuple[str, str, str | None]] | None = None) -> ProviderInfo | None:
    """The provider `name` as its own entry point (the one of that name; from `found`, else
    the installed ones) registers it, without loading the others: for the process that will
    ask the model, which imports the SDK first (`evals.fetcher`). None when no entry point of
    that name registers it."""
    if name not in _providers:
        for _, value, _ in [point for point in (entry_points_found() if found is None else found) if point[0] == name]:
            with contextlib.suppress(Exception):  # a broken one is reported by load(), in one line
                importlib.import_module(value.partition(":")[0].strip())
    found_info = _providers.get(name)
    return found_info[1] if found_info else None


def register_source(name: str, info: PowerSourceInfo) -> PowerSourceInfo:
    """Register a power source (`--energy-source NAME`), as `register_provider` does a provider."""
    return _register(_sources, "power source", name, info)


def sources() -> dict[str, PowerSourceInfo]:
    """Every registered power source by name, in the order of their `position` (then name)."""
    load()
    return {name: info for name, (_, info) in _sources.items()}


def _register(table: dict[str, tuple[str, Any]], kind: str, name: str, info: Any) -> Any:
    module = sys._getframe(2).f_globals.get("__name__", "?")  # the module that calls register_*
    if name in table and table[name][0] != module:
        raise UsageError(f"{kind} {name!r} ({module}): the name is {table[name][0]}'s already")
    table[name] = (module, info)
    ordered = sorted(table.items(), key=lambda item: (item[1][1].position, item[0]))
    table.clear()
    table.update(ordered)
    return info


def entry_points_found() -> list[tuple[str, str, str | None]]:
    """The group's entry points in the order `load` imports them: (name, value, distribution),
    the harness's own first (a third party's eval may build on them), the same value once."""
    found = sorted(entry_points(group=GROUP), key=lambda ep: (ep.dist is None or ep.dist.name != DISTRIBUTION, ep.name))
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
    constants that used to be dicts: `TASKS["leetcode"]` keeps working."""

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
