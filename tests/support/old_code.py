"""Boards published by the code of an older commit (extracted with `git archive`), for the upgrade tests."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from evals import models_file
from tests.support.board import META, model_flags
from tests.support.harness import ROOT, Student, harness_env
from tests.support.loopback import OpenAIServer

OLD = "905fadf"


NAME = "Student 1"


KEYS = ("freeform", "multipleChoice", "leetcode")


@pytest.fixture(scope="module")
def server():
    with OpenAIServer(Student()) as server:
        yield server


def publish_with_old_code(commit: str, folder: Path, server, *flags: str) -> Path:
    """The data folder of a board on which the code of `commit` (extracted under `folder`)
    published NAME, answered by `server`."""
    old = extract(commit, folder / "tree")
    env = harness_env(PYTHONPATH=str(old))
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import evals.evaluate, plugins; print(evals.evaluate.__file__); print(plugins.__file__)",
        ],
        cwd=old,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(Path(line).is_relative_to(old) for line in where.stdout.split()), (
        where.stdout
    )  # really the old code

    data = folder / "board" / "data"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals.evaluate",
            NAME,
            *model_flags(server),
            *META,
            *flags,
            f"--data-dir={data}",
        ],
        cwd=old,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"published {NAME!r}" in done.stdout
    return data


def extract(commit: str, tree: Path) -> Path:
    """The code of `commit`, extracted into the new folder `tree` (put it first on PYTHONPATH to
    run it), with the entry points its own pyproject.toml declares (`_own_entry_points`): without
    them it would load this checkout's, which may name modules it does not have."""
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    _own_entry_points(tree)
    return tree


def _own_entry_points(tree: Path) -> None:
    """Give the code in `tree` the entry points its own pyproject.toml declares, as installing
    that commit would: a `roblox_evals` dist-info on its PYTHONPATH, which `importlib.metadata`
    finds before (and in place of) this checkout's installed one."""
    project = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = tree / f"roblox_evals-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items()) + "\n"
            for group, points in project.get("entry-points", {}).items()
        )
    )


@pytest.fixture(scope="module")
def old_board(tmp_path_factory, server) -> Path:
    """The data folder of a board on which the code of commit 905fadf published NAME."""
    data = publish_with_old_code(OLD, tmp_path_factory.mktemp("old"), server)
    for key in KEYS:
        result = json.loads(_file(data, key).read_text())
        assert "resultFormat" not in result and "graders" not in result  # format 1
        assert result["config"]["harnessVersion"] == 1
    return data


@pytest.fixture
def board(old_board, tmp_path) -> Path:
    """A copy of the old board (with its site) to work on."""
    target = tmp_path / "data"
    shutil.copytree(old_board, target, ignore=shutil.ignore_patterns("locks"))
    if (old_board.parent / "site").is_dir():
        shutil.copytree(old_board.parent / "site", tmp_path / "site")
    return target


def _entry(data: Path) -> dict:
    return models_file.find_entry(
        models_file.load_models(data / "models.json", results=data / "results"), NAME
    )


def _file(data: Path, key: str) -> Path:
    return models_file.result_path(_entry(data), key, data / "results")
