"""The evals. `Task` and its helpers are the interface an eval implements (`_base.py`); the
registry of evals is beside it (`_registry.py`: `register_task`, `tasks()`); the built-in
evals are modules beside them, each registering itself, and `TASKS` / `TAGS` are read-only
views of the registry."""

from evals.entry_points import Registry

from ._base import (
    GRADED_WITH,
    SYSTEM_PROMPT,
    Attempt,
    Column,
    Scoring,
    Shown,
    Task,
    graded_with,
    question_of,
    recorded_values,
    row_identity,
)
from . import _registry
from ._registry import (
    builtin,
    kilowatt_hour_keys,
    on_board,
    on_board_keys,
    register_task,
    task_tags,
    tasks,
)

__all__ = [
    "GRADED_WITH",
    "SYSTEM_PROMPT",
    "TASKS",
    "TAGS",
    "Attempt",
    "Column",
    "Scoring",
    "Shown",
    "Task",
    "builtin",
    "graded_with",
    "kilowatt_hour_keys",
    "on_board",
    "on_board_keys",
    "question_of",
    "recorded_values",
    "register_task",
    "row_identity",
    "task_tags",
    "tasks",
]

TASKS: Registry[Task] = Registry(tasks, _registry._known)  # name -> Task
TAGS: Registry[str] = Registry(task_tags)  # tag -> name
