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
at its top (its SDK, torch, pydantic at first use).

What the installed packages cannot agree on stops every command in one line, `ExtensionError`,
naming the packages (distribution and version) and the fix: two of them claiming one name (an
eval's name, tag or resultFiles key, a provider's, a power source's, an entry point's; a
built-in's claimed by a third party too), or a broken entry point (its module fails to import
or raises, the object it names is missing, it registers something invalid). pytest, `evaluate`
and `build` print it and exit 2; a later question of a registry raises it again."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.metadata
import os
import pathlib
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from evals.errors import ExtensionError, UsageError

GROUP = "roblox_evals"
DISTRIBUTION = "roblox_evals"  # the harness's own (normalized), whose extensions are the built-ins

T = TypeVar("T")
Point = tuple[str, str, str | None]  # an entry point: (name, value, distribution)


_own_modules: set[str] = set()  # the modules the harness's own entry points name
_found: list[Point] | None = None  # `entry_points_found`, once scanned
# "unloaded", then "loading", then "loaded" (or "failed", `_failure` raised again); "partial"
# in an asking child, which imports only what its run uses (`load_named`)
_state = "unloaded"
_failure: ExtensionError | None = None
_loading = (
    threading.RLock()
)  # reentrant: a module that asks a registry while it registers sees what is there
_current: Point | None = None  # the entry point `load` is importing now
_registered_by: dict[
    str, Point | None
] = {}  # a module that registered something -> the entry point then imported


def register_in(
    table: dict[str, tuple[str, Any]], kind: str, name: str, info: Any, info_type: type
) -> Any:
    """Put `info` in a registry's `table` under `name`, beside the module that registers it
    (the caller of the registry's `register_*`), in the order of `info.position` (then name).
    The same name again from the same module (imported again) replaces it; from another
    module, it is a clash (`ExtensionError`) naming both packages."""
    module = sys._getframe(2).f_globals.get("__name__", "?")  # the module that calls register_*
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{module} registers a {kind} whose name is {name!r}, not a word")
    if not isinstance(info, info_type):
        raise UsageError(
            f"{module} registers the {kind} {name!r} with a {type(info).__name__}, not a {info_type.__name__}"
        )
    if name in table and table[name][0] != module:
        raise clash(f"the {kind} {name!r}", table[name][0], module)
    registered(module)
    table[name] = (module, info)
    ordered = sorted(table.items(), key=lambda item: (item[1][1].position, item[0]))
    table.clear()
    table.update(ordered)
    return info


def registered(module: str) -> None:
    """Note that `module` registered something, while `load` imported the entry point it did:
    the package a clash names."""
    _registered_by.setdefault(module, _current)


def _point_of(module: str, registering: bool) -> Point | None:
    """The entry point that put `module`'s extensions here: the one `load` imports now (for the
    module `registering` now), the one it imported when `module` registered, else the one that
    names `module` or a package above it."""
    if registering and _current is not None:
        return _current
    if _registered_by.get(module) is not None:
        return _registered_by[module]
    for point in entry_points_found():
        named = point[1].partition(":")[0].strip()
        if module == named or module.startswith(named + "."):
            return point
    return None


def _named(owner: str) -> str:
    """The distribution `owner` (as a point names it: its folder's normalized name,
    "echo_eval") as its METADATA spells it ("echo-eval"), read only for a message."""
    try:
        return importlib.metadata.distribution(owner).name or owner
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return owner


def _distribution(owner: str | None) -> str | None:
    """`owner` with its version ("echo-eval 0.1.0"), as importlib.metadata finds it."""
    if owner is None:
        return None
    try:
        return f"{_named(owner)} {importlib.metadata.version(owner)}"
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return owner


def _package(module: str, registering: bool = False) -> tuple[str | None, str]:
    """The distribution that put `module` here, and how a message names the two."""
    point = _point_of(module, registering)
    if point is None or point[2] is None:
        return None, f"the module {module} (of no installed package)"
    return point[
        2
    ], f"{_distribution(point[2])} ({'built in: ' if point[2] == DISTRIBUTION else ''}{module})"


def clash(what: str, held_by: str, claimed_by: str) -> ExtensionError:
    """The one line for the module `claimed_by` registering `what` ("the eval 'x'") that the
    module `held_by` has registered already: both packages, and which to uninstall."""
    (first, held), (second, claimed) = _package(held_by), _package(claimed_by, registering=True)
    if first is not None and first == second:
        return ExtensionError(
            f"{_distribution(first)} registers {what} twice ({held_by} and {claimed_by}); fix the package"
        )
    return ExtensionError(
        f"two installed packages register {what}: {held} and {claimed}; {_fix(first, second)}"
    )


def harness_module(module: str) -> bool:
    """Whether `module` is (or is inside) a module the harness's own entry points name: a
    built-in extension's (known once `load` has run)."""
    return any(module == own or module.startswith(own + ".") for own in _own_modules)


def entry_points_found() -> list[Point]:
    """The group's entry points in the order `load` imports them: (name, value, distribution),
    the harness's own first (a third party's eval may build on them), the same value once.
    Scanned once per process, as `load` loads once: the scan reads every installed
    distribution's entry points (pytest's start-up asks twice: the asking child's head start,
    then the registries)."""
    global _found
    if _found is None:
        # `importlib.metadata.entry_points(group=...)` parses every distribution's entry points
        # and METADATA (~17 ms here). The same, sooner: the first distribution of each name on
        # the path (as `entry_points` keeps it: its name from its folder's, no METADATA read),
        # and of those only the few whose text holds the group's header parsed (~1.5 ms).
        points: list[Point] = []
        for normalized, found in _distributions():
            text = _entry_points_text(found)
            if text and f"[{GROUP}]" in text:
                # The folder's name, not `dist.name`: that reads METADATA, and imports the
                # email parser to (~3 ms); a message spells it as METADATA does (`_named`).
                dist = (
                    importlib.metadata.PathDistribution(pathlib.Path(found))
                    if isinstance(found, str)
                    else found
                )
                points += [
                    (p.name, p.value, normalized) for p in dist.entry_points.select(group=GROUP)
                ]
        points.sort(key=lambda point: (point[2] != DISTRIBUTION, point[0]))
        # Two distributions naming one module (a package vendoring another's): imported once.
        seen: dict[str, Point] = {}
        for point in points:
            seen.setdefault(point[1], point)
        _found = list(seen.values())
    return list(_found)


def _distributions() -> Iterator[tuple[str, str | importlib.metadata.Distribution]]:
    """The first distribution of each name on `sys.path`, by its normalized name, in the order
    `importlib.metadata.distributions()` finds them, as `entry_points` keeps them: each a
    folder (`_path_folders`), else, where the path holds what only `importlib.metadata` reads,
    its own `Distribution`s."""
    found = _path_folders()
    names: set[str] = set()
    for name, each in _by_importlib() if found is None else found:
        if name not in names:
            names.add(name)
            yield name, each


def _path_folders() -> list[tuple[str, str | importlib.metadata.Distribution]] | None:
    """Every distribution folder on `sys.path` with its normalized name, read off the path's
    listings as `importlib.metadata` reads them (`FastPath`, `Lookup`), without making a
    `Distribution` of every one (~2.5 ms of every start-up, for ~100 of them). None with a path
    that is not a plain folder (a zip, an egg) or another finder of distributions."""
    if any(
        hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder
        for finder in sys.meta_path
    ):
        return None
    found: list[tuple[str, str | importlib.metadata.Distribution]] = []
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.exists(entry):  # a zip archive: its children are read otherwise
                return None
            continue
        if os.path.basename(entry).lower().endswith(".egg"):
            return None
        infos: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                name = re.sub(r"[-_.]+", "_", low.rpartition(".")[0].partition("-")[0])
                infos.setdefault(name, []).append(os.path.join(entry, child))
        found += [(name, folder) for name, folders in infos.items() for folder in folders]
    return found


def _entry_points_text(found: str | importlib.metadata.Distribution) -> str | None:
    """A distribution's entry_points.txt (of its folder, as `PathDistribution.read_text`
    reads it), None when it has none."""
    if not isinstance(found, str):
        return found.read_text("entry_points.txt")
    try:
        with open(os.path.join(found, "entry_points.txt"), encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _by_importlib() -> list[tuple[str, str | importlib.metadata.Distribution]]:
    return [
        (
            getattr(dist, "_normalized_name", None)  # PathDistribution's
            or re.sub(r"[-_.]+", "_", dist.name or "").lower(),
            dist,
        )
        for dist in importlib.metadata.distributions()
    ]


def points_named(name: str) -> list[Point]:
    """The group's entry points called `name`. Before the scan of every distribution
    (`entry_points_found`), the harness's own are read first, alone: a head start's question
    (`provider_ahead`, before pytest parses its command line) spared ~4 ms when the name is a
    built-in's; a third party's of the same name is a clash, which `load` reports."""
    if _found is None:
        try:
            own = list(importlib.metadata.distribution(DISTRIBUTION).entry_points)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            own = []
        named: list[Point] = [
            (p.name, p.value, DISTRIBUTION) for p in own if p.group == GROUP and p.name == name
        ]
        if named:
            return named
    return [point for point in entry_points_found() if point[0] == name]


def _same_names(found: list[Point]) -> None:
    """Two packages declaring one entry point name (for different modules): a clash."""
    seen: dict[str, Point] = {}
    for point in found:
        first = seen.setdefault(point[0], point)
        if first[1] != point[1]:
            held, claimed = (
                f"{_distribution(p[2]) or 'an installed package'} ({p[1]})" for p in (first, point)
            )
            raise ExtensionError(
                f"two installed packages declare the {GROUP} entry point {point[0]!r}: {held} and {claimed}; "
                f"{_fix(first[2], point[2])}"
            )


def _fix(first: str | None, second: str | None) -> str:
    """Which package of a clash to uninstall: the third party's, beside the harness."""
    if first == DISTRIBUTION and second:
        return f"uninstall {_named(second)}"
    if second == DISTRIBUTION and first:
        return f"uninstall {_named(first)}"
    return "uninstall one of them"


def load(found: list[Point] | None = None) -> None:
    """Import every module the entry-point group names (once): each registers its extensions.
    A clash or a broken entry point is one line (`ExtensionError`), raised again by every later
    call. `found` (`entry_points_found()` of another process: the asking child's, from
    pytest's) spares the scan of every installed distribution."""
    global _state, _failure, _current
    if _state == "loaded":
        return
    with _loading:  # another thread waits here until every module is loaded
        if _state == "failed" and _failure is not None:
            raise _failure
        if _state not in ("unloaded", "partial"):
            return
        _state = "loading"
        try:
            points = entry_points_found() if found is None else found
            _same_names(points)
            for point in points:  # a module `load_named` imported registers nothing again
                _load_one(point)
        except ExtensionError as error:
            _state, _failure = "failed", error
            raise
        finally:
            _current = None
        _state = "loaded"


def load_named(names: Iterable[str], found: list[Point]) -> None:
    """Import only the modules of the entry points called `names` (of `found`): in the asking
    child, which `found` comes from the parent that loaded every one (so a clash or a broken
    one has been reported there), the ones its run uses. A registry's question by name
    (`Registry[name]`) is then answered from what they registered; any other question, or a
    name they did not register (a third party's entry point named otherwise), loads the rest."""
    global _state, _found, _current
    with _loading:
        if _state not in ("unloaded", "partial"):
            return
        if _found is None:
            _found = list(found)
        wanted = set(names)
        try:
            for point in _found:
                if point[0] in wanted:
                    _load_one(point)
        finally:
            _current = None
        _state = "partial"


def _load_one(point: Point) -> None:
    """Import the module one entry point names (and the object it names in it)."""
    global _current
    name, value, owner = point
    module, _, attr = value.partition(":")
    if owner == DISTRIBUTION:
        _own_modules.add(module.strip())
    _current = point
    try:
        loaded = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            loaded = getattr(loaded, part)
    except ExtensionError:
        raise
    except (Exception, SystemExit) as error:
        package = _distribution(owner) or "an installed package"
        said = " ".join(str(error).split())  # one line, whatever the module raised
        why = (
            f"registers something invalid: {said}"
            if isinstance(error, UsageError)
            else f"failed to load: {type(error).__name__}: {said}"
        )
        fix = _named(owner) if owner else "it"
        raise ExtensionError(
            f"the {GROUP} entry point {name!r} of {package} ({value}) {why}; fix or uninstall {fix}"
        ) from None


class Registry(Mapping[str, T]):
    """A read-only, lazily loaded view of one registry (`tasks()` and the like), for module
    constants that used to be dicts: `TASKS[name]` keeps working. `known` (what is registered
    so far, loading nothing) answers a question by name after `load_named`."""

    def __init__(
        self,
        read: Callable[[], Mapping[str, T]],
        known: Callable[[], Mapping[str, T]] | None = None,
    ):
        self._read = read
        self._known = known

    def __getitem__(self, name: str) -> T:
        if self._known is not None and _state == "partial":
            with _loading:  # not while another thread loads the rest into the same tables
                if _state == "partial" and name in (known := self._known()):
                    return known[name]
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._read()))

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"Registry({list(self)})"
