"""Each kind's registry beside its interface (evals/tasks/_registry.py, providers/_registry.py,
energy's), the generic part in evals/entry_points.py, and the names a package written for an
earlier version imports from `evals.extensions` still there: the same objects, so a package
that registers through them registers where the harness reads."""

from __future__ import annotations

import evals.extensions as old
from evals import energy, entry_points, providers, tasks, words

# Every public name evals/extensions.py had when it held the registries itself (d584a3e).
OLD_NAMES = {
    "GROUP": entry_points,
    "DISTRIBUTION": entry_points,
    "Registry": entry_points,
    "entry_points_found": entry_points,
    "load": entry_points,
    "register_task": tasks,
    "tasks": tasks,
    "task_tags": tasks,
    "on_board": tasks,
    "builtin": tasks,
    "on_board_keys": tasks,
    "kilowatt_hour_keys": tasks,
    "register_provider": providers,
    "providers": providers,
    "provider_ahead": providers,
    "register_source": energy,
    "sources": energy,
    "NUMBERS": words,
    "in_words": words,
    "either": words,
}


def test_the_old_names_are_the_registries_own():
    assert {name: getattr(old, name) for name in OLD_NAMES} == {
        name: getattr(module, name) for name, module in OLD_NAMES.items()
    }
    assert sorted(old.__all__) == sorted(OLD_NAMES)


def test_a_registry_read_through_the_old_names_is_the_one_the_harness_reads():
    assert list(old.tasks()) == list(tasks.TASKS) == ["freeform", "multiple_choice", "leetcode"]
    assert list(old.providers()) == list(providers.PROVIDERS)
    assert list(old.sources()) == list(energy.SOURCES) == ["hwinfo", "rapl", "nvml"]
