"""The registry of evals: every `Task` an installed package registers (`register_task`), read
by everything that is a list of evals (pytest markers, `evaluate --evals`, dataset detection,
models.json's resultFiles, the result-file schema, the board's columns). The modules the
`roblox_evals` entry points name are imported on the first question (`evals.entry_points.load`)."""

from __future__ import annotations

from typing import TypeVar

from evals import entry_points
from evals.errors import UsageError

from ._base import Task

TaskT = TypeVar("TaskT", bound=Task)

_tasks: dict[str, Task] = {}


def register_task(cls: type[TaskT]) -> type[TaskT]:
    """Class decorator: register an eval (a `Task` subclass), by its `name`. Its name, tag and
    resultFiles key must be new (another package's is a clash, `ExtensionError`); a second
    registration of the same class is ignored (a module imported twice, as __main__ and by name)."""
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise UsageError(f"register_task takes a Task subclass (got {cls!r})")
    task = cls()
    for attr in ("name", "tag", "key"):
        if not isinstance(value := getattr(task, attr, None), str) or not value.strip():
            raise UsageError(
                f"the eval {cls.__qualname__} ({cls.__module__}) has {value!r} for its {attr}, not a word"
            )
    for existing in _tasks.values():
        if (
            type(existing).__qualname__ == cls.__qualname__
            and type(existing).__module__ == cls.__module__
        ):
            return cls
        for attr, what in (("name", ""), ("tag", "tag "), ("key", "resultFiles key ")):
            if getattr(existing, attr) == getattr(task, attr):
                also = f" (evals {existing.name!r} and {task.name!r})" if attr != "name" else ""
                raise entry_points.clash(
                    f"the eval {what}{getattr(task, attr)!r}{also}",
                    type(existing).__module__,
                    cls.__module__,
                )
    entry_points.registered(cls.__module__)
    _tasks[task.name] = task
    ordered = sorted(_tasks.values(), key=lambda t: (t.position, t.name))
    _tasks.clear()
    _tasks.update((t.name, t) for t in ordered)
    return cls


def tasks() -> dict[str, Task]:
    """Every registered eval by name, in the order of their `position` (then name)."""
    entry_points.load()
    return _tasks


def _known() -> dict[str, Task]:
    """The evals registered so far, loading nothing (`entry_points.Registry`)."""
    return _tasks


def task_tags() -> dict[str, str]:
    """Each eval's tag -> its name (`Task.tag` -> `Task.name`)."""
    return {task.tag: task.name for task in tasks().values()}


def on_board() -> dict[str, Task]:
    """The evals on the leaderboard, by name: every published model has one result file each."""
    return {name: task for name, task in tasks().items() if task.on_board}


def builtin(name: str) -> bool:
    """Whether the harness itself registers the eval: its items have a test function of their
    own in tests_evals/, a third party's come from the generic one there."""
    return entry_points.harness_module(type(tasks()[name]).__module__)


def on_board_keys() -> dict[str, str]:
    """The board evals' resultFiles keys -> their names (`Task.key` -> `Task.name`)."""
    return {task.key: task.name for task in on_board().values()}


def kilowatt_hour_keys() -> tuple[str, ...]:
    """A models.json entry's kilowattHour keys: every board eval's, in the board's order."""
    return tuple(
        dict.fromkeys(key for task in on_board().values() for key in task.kilowatt_hour_keys())
    )
