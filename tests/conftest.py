"""Fixtures every tier shares. What is expensive to build (the tiny model, a published world)
is built once per session, across xdist workers too, and handed out read-only: a test that
writes copies it first."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

from evals.atomic import write_text_atomic
from tests.support.harness import Student
from tests.support.loopback import OpenAIServer

# The tiny models gain nothing from threads, and two xdist workers' torch (and every child's,
# which inherits this) would share two cores, OpenMP spinning while it waits: a local run
# took ~20% less CPU with one thread. Set before anything imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")


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
    from evals.tasks import tasks

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


@pytest.fixture(scope="session")
def cache_home(tmp_path_factory) -> Path:
    """The harness's cache folder (file hashes) for the tests that use it, never the user's."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def own_cache(cache_home, monkeypatch):
    """ROBLOX_EVALS_CACHE pointed at `cache_home`, in this process and the commands it runs."""
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(cache_home))


# -- one worker per shared world ------------------------------------------------------------------
# Under xdist's `load`, the tests of a module that share a module-scoped world (a published
# board, an older commit's board, two runs to compare) are dealt to both workers, and each
# builds the world (~20-30 s each). Here the workers tell the controller which modules those
# are (from each item's fixtures, as they collect) and the scheduler below hands each such
# module to one worker, whole; every other test is dealt as by `load`. (xdist's own
# `--dist loadgroup` renames the items' ids, which pytest 9 no longer lets it do.)
WORLDS = "ROBLOX_EVALS_TESTS_WORLDS"


def pytest_configure(config):
    if config.getoption("numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ[WORLDS] = tempfile.mkdtemp(prefix="worlds-")  # the workers inherit it


def pytest_unconfigure(config):
    if (folder := os.environ.get(WORLDS)) and not os.environ.get("PYTEST_XDIST_WORKER"):
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[WORLDS]


def pytest_collection_finish(session):
    if (folder := os.environ.get(WORLDS)) and (worker := os.environ.get("PYTEST_XDIST_WORKER")):
        modules = sorted(
            {item.nodeid.split("::", 1)[0] for item in session.items if _shares_a_world(item)}
        )
        # Whole before the worker reports its collection, when the controller may read it.
        write_text_atomic(Path(folder, f"{worker}.json"), json.dumps(modules), durable=False)


def _shares_a_world(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return bool(info) and any(
        d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs
    )


def pytest_xdist_make_scheduler(config, log):
    if not (folder := os.environ.get(WORLDS)) or config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Worlds(LoadScopeScheduling):
        """`load`, but a module sharing a world is one unit of work."""

        modules: set[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if (
                self.modules is None
            ):  # asked once every worker has collected, so each has written its list
                self.modules = {
                    m for path in Path(folder).glob("*.json") for m in json.loads(path.read_text())
                }
            module = nodeid.split("::", 1)[0]
            return module if module in self.modules else nodeid

    return Worlds(config, log)
