"""Each kind's registry beside its interface (evals/tasks/_registry.py, providers/_registry.py,
energy's), the generic part in evals/entry_points.py, and the names a package written for an
earlier version imports from `evals.extensions` still there: the same objects, so a package
that registers through them registers where the harness reads."""

from __future__ import annotations

import pytest

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


def _dist_info(folder, name: str, version: str, entry_points: str = "") -> None:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if entry_points:
        (info / "entry_points.txt").write_text(entry_points)


@pytest.mark.parametrize("first_has_the_group", [False, True])
def test_the_scan_keeps_the_first_distribution_of_a_name_on_the_path_as_importlib_does(
    tmp_path, monkeypatch, first_has_the_group
):
    """Two copies of one distribution on the path (a stale install beside a new one): the
    first is the installed one, whether or not it declares the group, as
    `importlib.metadata.entry_points` has it."""
    import importlib.metadata

    from evals import entry_points

    group = "[roblox_evals]\necho = echo_mod\n"
    _dist_info(tmp_path / "a", "echo_eval", "0.2", group if first_has_the_group else "")
    _dist_info(tmp_path / "b", "echo_eval", "0.1", "" if first_has_the_group else group)
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    monkeypatch.setattr(entry_points, "_found", None)

    echo = [p for p in entry_points.entry_points_found() if p[2] == "echo_eval"]
    stdlib = [
        (p.name, p.value, p.dist.name)
        for p in importlib.metadata.entry_points(group=entry_points.GROUP)
        if p.dist is not None and p.dist.name == "echo_eval"
    ]

    assert echo == stdlib == ([("echo", "echo_mod", "echo_eval")] if first_has_the_group else [])


LOAD_NAMED = """
import json, sys
from evals import entry_points
from evals.providers import PROVIDERS
from evals.tasks import TASKS

found = entry_points.entry_points_found()
entry_points.load_named(["openai", "multiple_choice"], found)
seen = {"partial": entry_points.partly_loaded(), "openai": PROVIDERS["openai"].key_env,
        "task": TASKS["multiple_choice"].name, "leetcode loaded": "evals.tasks.leetcode" in sys.modules}
seen["miss"] = PROVIDERS.get("reference") is not None  # registered by a module not imported yet
seen["after miss"] = [entry_points.partly_loaded(), "evals.tasks.leetcode" in sys.modules]
print(json.dumps(seen))
"""
LISTED = """
import json
from evals import entry_points
from evals.tasks import TASKS

entry_points.load_named(["multiple_choice"], entry_points.entry_points_found())
print(json.dumps(list(TASKS)))
"""


def _fresh(script: str) -> object:
    """What `script` prints, run in an interpreter of its own (whose registries are unloaded)."""
    import json
    import subprocess
    import sys

    from tests.support.harness import ROOT, harness_env

    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=harness_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_child_loading_the_extensions_its_run_names_answers_them_and_loads_the_rest_on_a_miss():
    """The asking child imports only the entry points its run names (`load_named`); a question
    by a name they did not register loads every other one first, so it is never refused."""
    assert _fresh(LOAD_NAMED) == {
        "partial": True,
        "openai": "OPENAI_API_KEY",
        "task": "multiple_choice",
        "leetcode loaded": False,
        "miss": True,
        "after miss": [False, True],
    }


def test_after_loading_named_extensions_a_list_of_a_registry_still_holds_every_one():
    assert _fresh(LISTED) == ["freeform", "multiple_choice", "leetcode"]
