"""The evals. `Task` and its helpers are the interface an eval implements (`_base.py`); the
built-in evals are modules beside it, each registering itself (`evals.extensions`), and
`TASKS` / `TAGS` are read-only views of the registry."""

from evals.extensions import Registry, task_tags, tasks

from ._base import SYSTEM_PROMPT, Attempt, Column, Scoring, Task, question_of, row_identity

__all__ = ["SYSTEM_PROMPT", "TASKS", "TAGS", "Attempt", "Column", "Scoring", "Task", "question_of", "row_identity"]

TASKS: Registry[Task] = Registry(tasks)  # name -> Task
TAGS: Registry[str] = Registry(task_tags)  # "ff" -> "freeform"
