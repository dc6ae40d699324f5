"""Fixtures shared by the whole-run tests: a Student model behind a loopback OpenAI server."""

from __future__ import annotations

import pytest

from tests.harness import Student
from tests.loopback import OpenAIServer


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
