"""Fixtures every tier shares. What is expensive to build (the tiny model, a published world)
is built once per session, across xdist workers too, and handed out read-only: a test that
writes copies it first (`copy_of`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.harness import Student
from tests.support.loopback import OpenAIServer


@pytest.fixture
def student():
    return Student()


@pytest.fixture
def server(student):
    with OpenAIServer(student) as server:
        yield server


@pytest.fixture(scope="session")
def evals_registered():
    """The registered evals, loaded once before any in-process run (a session fixture is set up
    before `pytester` takes its snapshot of the loaded modules): pytester drops the modules first
    imported during a run, while the registry would keep an eval whose datasets and graders
    were dropped and imported again, no longer the same objects (nor picklable)."""
    from evals.extensions import tasks

    tasks()


@pytest.fixture
def pytester(evals_registered, pytester):
    return pytester


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build) -> Path:
    """`build(folder)` run once per session, whichever xdist worker asks first; the others wait
    on the lock and take the same folder. Under xdist each worker has its own basetemp; their
    parent is the session's."""
    root = tmp_path_factory.getbasetemp()
    if root.name.startswith("popen-gw"):
        root = root.parent
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.write_text("")
    return folder


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> dict[str, Path]:
    """A tiny checkpoint and its LoRA adapter (tests/support/tiny_model.py), read-only."""
    from tests.support.tiny_model import build_adapter, build_checkpoint

    def build(folder: Path) -> None:
        checkpoint = build_checkpoint(folder / "checkpoint")
        build_adapter(checkpoint, folder / "adapter")

    folder = built_once(tmp_path_factory, "tiny-model", build)
    return {"checkpoint": folder / "checkpoint", "adapter": folder / "adapter"}


def copy_of(source: Path, where: Path) -> Path:
    """A private copy of a shared folder, for a test that writes into it."""
    return Path(shutil.copytree(source, where, symlinks=True))
