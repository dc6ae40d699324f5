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


def _stdlib_points() -> list[tuple[str, str, str]]:
    import importlib.metadata

    from evals import entry_points

    return sorted(
        (p.name, p.value, p.dist._normalized_name)  # type: ignore[attr-defined]
        for p in importlib.metadata.entry_points(group=entry_points.GROUP)
        if p.dist is not None
    )


@pytest.mark.parametrize("where", ["folders", "zip", "finder"])
def test_the_scan_finds_what_importlib_finds_in_folders_a_zip_and_through_another_finder(
    tmp_path, monkeypatch, where
):
    """The scan reads the folders on the path itself (no `Distribution` made of each); a zip
    archive on the path, or a finder of distributions beside the path's, is read through
    `importlib.metadata`: every way finds the same entry points as it."""
    import importlib.metadata
    import sys
    import zipfile

    from evals import entry_points

    group = "[roblox_evals]\necho = echo_mod\n"
    _dist_info(tmp_path / "a", "Echo.Eval", "0.2", group)
    _dist_info(tmp_path / "a", "other_eval", "1.0", "[console_scripts]\nx = y:z\n")
    if where == "zip":
        with zipfile.ZipFile(tmp_path / "dists.zip", "w") as archive:
            for path in (tmp_path / "a").rglob("*"):
                archive.write(path, path.relative_to(tmp_path / "a"))
        monkeypatch.syspath_prepend(str(tmp_path / "dists.zip"))
    else:
        monkeypatch.syspath_prepend(str(tmp_path / "a"))
    if where == "finder":

        class Finder:  # finds no module; its distributions are the path's own
            @staticmethod
            def find_spec(*_):
                return None

            @staticmethod
            def find_distributions(context=importlib.metadata.DistributionFinder.Context()):
                return iter(())

        monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    monkeypatch.setattr(entry_points, "_found", None)

    found = sorted(entry_points.entry_points_found())
    assert ("echo", "echo_mod", "echo_eval") in found
    assert found == _stdlib_points()
