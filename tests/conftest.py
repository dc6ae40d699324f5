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
