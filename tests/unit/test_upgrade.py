"""Published results survive upgrades; here the rule (`evals.verify.judge`), case by case: a
format-1 file compares without the new fields, only graded fields changed under a new grader
version is REGRADE, and a different score under the same graders, a field the graders do not
write, or a summary edited alone (unless the statistics changed) is DIFF. Boards published by
older code are tests/e2e/test_upgrade.py."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

import pytest

from evals import models_file

# -- a model published by 905fadf, read by today's code ---------------------------------------------


# -- a grader changes ---------------------------------------------------------------------------


# -- the rule, case by case (evals.verify.judge) ----------------------------------------------------


def _result(
    answers: dict[str, str], *, graders: dict[str, str] | None = None, tokens: int = 30
) -> dict:
    """A multiple-choice result of format 2 (`graders` given) or 1, every gold answer "A"."""
    from evals.results import summarize
    from evals.tasks import TASKS

    rows = [
        {
            "id": i,
            "status": "correct" if a == "A" else "wrong",
            "correct": a == "A",
            "expected": "A",
            "answer": a,
            "usage": {"input": 100, "output": tokens, "reasoning": 0, "cached": 0},
            **({"records": f"digest-{i}"} if graders else {}),
        }
        for i, a in answers.items()
    ]
    result = {
        "config": {"eval": "multiple_choice", "provider": "openai", "model": "m"},
        "summary": summarize(TASKS["multiple_choice"], rows),
        "results": rows,
    }
    return {"resultFormat": 2, **result, "graders": graders} if graders else result


@pytest.fixture
def letters_v2(monkeypatch):
    from evals.tasks import TASKS

    monkeypatch.setattr(type(TASKS["multiple_choice"]), "graders", {"letters": "2"})
    return TASKS["multiple_choice"]


def test_judge_a_format_1_file_compares_without_the_new_fields(letters_v2):
    from evals.verify import judge

    today = _result({"q1": "A", "q2": "B"}, graders={"letters": "2", "stats": "1"})
    old = _result({"q1": "A", "q2": "B"})

    assert (
        judge(letters_v2, old, today).status == "ok"
    )  # same scores: the missing graders and digests are no difference


def test_judge_only_graded_fields_under_a_new_grader_version_is_a_regrade(letters_v2):
    from evals.verify import judge

    verdict = judge(
        letters_v2,
        _result({"q1": "A", "q2": "B"}),
        _result({"q1": "A", "q2": "A"}, graders={"letters": "2", "stats": "1"}),
    )

    assert (verdict.status, verdict.graders, verdict.items) == (
        "REGRADE",
        {"letters": ("1", "2")},
        ["q2"],
    )


def test_judge_same_graders_reading_intact_records_otherwise_is_unversioned_naming_the_parts():
    """The file is as its run wrote it (rows bound to records, its summary its rows'): today's
    graders of the same versions read differently, a harness bug, told apart from an edit."""
    from evals.results import graders_of
    from evals.tasks import TASKS
    from evals.verify import judge

    today = graders_of(TASKS["multiple_choice"])  # published and rescored by the same versions
    verdict = judge(
        TASKS["multiple_choice"],
        _result({"q1": "A", "q2": "B", "q3": "B"}, graders=today),
        _result({"q1": "A", "q2": "A", "q3": "B"}, graders=today),
    )

    assert (verdict.status, verdict.items) == ("UNVERSIONED", ["q2"]), verdict
    assert verdict.detail == (
        "today's graders read the intact records otherwise under the same versions "
        f"(letters {today['letters']}, stats {today['stats']}): 1 item scores differently (q2); "
        "accuracy 33.33% -> 66.67%; a grading change that did not move its part's version "
        "(a harness bug, not the run's): `evaluate --regrade` accepts today's reading"
    )


@pytest.mark.parametrize("edit", ["a row alone", "a format-1 file", "a row without records"])
def test_judge_same_graders_with_a_different_score_is_a_diff_when_the_file_was_edited(edit):
    """A row's score edited without its summary, or a file whose rows no digest binds: DIFF."""
    from evals.results import graders_of
    from evals.tasks import TASKS
    from evals.verify import judge

    today = graders_of(TASKS["multiple_choice"])
    published = _result({"q1": "A", "q2": "B"}, graders=today)
    if edit == "a row alone":
        published["results"][1].update(status="correct", correct=True)
    elif edit == "a format-1 file":
        published = _result({"q1": "A", "q2": "B"})
        published["graders"] = today  # still no digests: nothing binds the rows to records
    else:
        del published["results"][1]["records"]
    rescored = _result({"q1": "A", "q2": "A"}, graders=today)
    if edit == "a row without records":
        del rescored["results"][1]["records"]

    verdict = judge(TASKS["multiple_choice"], published, rescored)

    assert verdict.status == "DIFF" and "results.q2.answer" in verdict.fields, verdict


def test_judge_a_field_the_graders_do_not_write_is_a_diff_even_under_new_graders(letters_v2):
    from evals.verify import judge

    tokens = judge(
        letters_v2,
        _result({"q1": "A", "q2": "B"}),
        _result({"q1": "A", "q2": "A"}, graders={"letters": "2", "stats": "1"}, tokens=31),
    )
    records = _result({"q1": "A", "q2": "A"}, graders={"letters": "2", "stats": "1"})
    records["results"][1]["records"] = "another digest"
    digest = judge(
        letters_v2, _result({"q1": "A", "q2": "B"}, graders={"letters": "1", "stats": "1"}), records
    )

    assert tokens.status == "DIFF" and "summary.tokens.output" in tokens.fields
    assert digest.status == "DIFF" and "results.q2.records" in digest.fields


def test_judge_a_summary_edited_alone_is_a_diff_unless_the_statistics_changed(letters_v2):
    from evals.verify import judge

    edited = _result({"q1": "A", "q2": "B"})
    edited["summary"]["correct"] += 1

    assert (
        judge(
            letters_v2,
            edited,
            _result({"q1": "A", "q2": "B"}, graders={"letters": "2", "stats": "1"}),
        ).status
        == "DIFF"
    )


# -- the judges' verdicts read anew -------------------------------------------------------------------
