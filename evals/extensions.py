"""The registries' names where packages written for earlier versions import them:
`from evals.extensions import register_task` (and `register_provider`, `register_source`,
`tasks()`, `providers()` and the rest) keeps working.

Each kind's registry now sits beside its interface, and new code imports from there:
`from evals.tasks import register_task`, `from evals.providers import register_provider`,
`from evals.energy import register_source`. The entry-point group they are loaded through is
`evals.entry_points`. Nothing in the harness imports this module."""

from evals.energy import register_source, sources
from evals.entry_points import DISTRIBUTION, GROUP, Registry, entry_points_found, load
from evals.providers import provider_ahead, providers, register_provider
from evals.tasks import (
    builtin,
    kilowatt_hour_keys,
    on_board,
    on_board_keys,
    register_task,
    task_tags,
    tasks,
)
from evals.words import NUMBERS, either, in_words

__all__ = [
    "DISTRIBUTION",
    "GROUP",
    "NUMBERS",
    "Registry",
    "builtin",
    "either",
    "entry_points_found",
    "in_words",
    "kilowatt_hour_keys",
    "load",
    "on_board",
    "on_board_keys",
    "provider_ahead",
    "providers",
    "register_provider",
    "register_source",
    "register_task",
    "sources",
    "task_tags",
    "tasks",
]
