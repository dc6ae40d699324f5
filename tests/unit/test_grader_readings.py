"""Readings pinned to versions, the library (`evals.grading.readings`): a table, what drifts,
the lines that say so. The `pinned_readings` fixture as an eval's own suite meets it, git
history included, is tests/e2e/test_grader_readings.py."""

from __future__ import annotations

import pytest

from evals.grading.readings import drift, history, problems, table


def test_a_table_names_its_versions_and_the_digest_of_its_readings():
    first = table({"letters": "3"}, {"a": "A", "b": None})
    assert first["versions"] == {"letters": "3"}
    assert first["digest"] == table({"letters": "3"}, {"b": None, "a": "A"})["digest"]
    assert first["digest"] != table({"letters": "3"}, {"a": "B", "b": None})["digest"]


def test_drift_compares_the_cases_both_hold_under_the_same_versions():
    before = table({"p": "1"}, {"a": "A", "b": "B"})
    assert drift(table({"p": "1"}, {"a": "A", "b": "B", "c": "C"}), before) == []  # a case added
    assert drift(table({"p": "1"}, {"a": "A"}), before) == []  # a case removed
    assert drift(table({"p": "1"}, {"a": "X", "b": "B"}), before) == ["a"]
    assert drift(table({"p": "2"}, {"a": "X", "b": "B"}), before) == []  # the version moved


def test_problems_name_the_cases_their_readings_and_the_commit():
    before = table({"p": "1"}, {f"c{i}": "A" for i in range(8)})
    now = table({"p": "1"}, {f"c{i}": "B" for i in range(8)})
    (stored,) = problems("test_p", now, before, [])
    assert stored.startswith("test_p: 8 cases ('c0': 'A' then, 'B' now;")
    assert "and 3 more" in stored and "moves its part's version" in stored
    (committed,) = problems("test_p", now, None, [("0123456789abcdef", before)])
    assert "at commit 0123456789ab under the same versions (p 1)" in committed
    assert problems("test_p", now, now, [("0123", now)]) == []


def test_history_outside_a_git_checkout_is_empty(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{}")
    assert history(path) == []
