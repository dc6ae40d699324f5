"""Every built-in grading part's readings over a corpus of our own, pinned to the part's
version (`evals.grading.readings`, the `pinned_readings` fixture): a reading that changes
while its version stands still fails here, naming the cases, and so does a version that moved
without its snapshot. `uv run pytest tests -m graders` runs these alone; after a grading
change that moved a version, `--snapshot-update` records the new readings in the same commit.

The corpora: the multiple-choice table (tests/support/answer_tables.py, and every letter of a
26-choice question in each shape), the judge replies (tests/support/verdict_tables.py) and the
vote, LeetCode's replies in the shapes models write them and each bundled problem's solutions
in the sandbox (tests/support/code_tables.py), and the summaries of fixed rows."""

from __future__ import annotations

import itertools
import string

import pytest

from evals import results
from evals.grading.judges import majority, parse_verdict, unanimous
from evals.grading.luau_code import extract_code
from evals.grading.readings import digest
from evals.luau import run_tests
from evals.luau.budget import work_budget_for
from evals.reasoning import split
from evals.tasks import TASKS
from tests.support import answer_tables, code_tables, verdict_tables

pytestmark = pytest.mark.graders

LONG = 300  # a reading longer than this is kept as its length and digest


def versions(task: str, *parts: str) -> dict[str, str]:
    graders = results.graders_of(TASKS[task])
    return {part: graders[part] for part in parts}


def test_letters(pinned_readings):
    readings = {}
    for case in answer_tables.CASES:
        (reply, choices, _), case_id = case.values[:3], case.id
        assert case_id not in readings, f"two cases named {case_id!r}"
        readings[case_id] = answer_tables.graded(reply, choices)
    for shape, letter in itertools.product(answer_tables.SHAPES, string.ascii_uppercase):
        reply = answer_tables.shaped(shape, letter)
        readings[f"shape:{shape}:{letter}"] = answer_tables.graded(reply, answer_tables.ALPHABET)
    pinned_readings(versions("multiple_choice", "letters"), readings)


def test_verdicts(pinned_readings):
    readings: dict[str, object] = {}
    for case in verdict_tables.CASES:
        assert case.id not in readings, f"two cases named {case.id!r}"
        readings[case.id] = verdict_tables.graded(case.values[0])
    for count in (1, 2, 3, 4):  # every vote of up to four judges, in order
        for votes in itertools.product((True, False, None), repeat=count):
            listed = list(votes)
            readings[f"vote:{_votes(listed)}"] = [majority(listed), unanimous(listed)]
    pinned_readings(versions("freeform", "verdicts"), readings)


def test_code(pinned_readings):
    readings = {}
    for case, (reply, entry_point, modules) in code_tables.REPLIES.items():
        code = extract_code(split(reply)[1], entry_point)
        named = [name for name, module in modules.items() if code and code.strip() == module]
        readings[case] = named[0] if named else _kept(code)
    pinned_readings(versions("leetcode", "code"), readings)


def test_sandbox(pinned_readings):
    """Each bundled problem's solution, known-wrong solution and starter code, and a few hostile
    programs, run against the problem's tests under the work budget its reference sets."""
    budgets = {}
    for case, (solution, tests) in code_tables.SOLUTIONS.items():
        if case.endswith(":solution"):
            budgets[case.removesuffix(":solution")] = work_budget_for(
                run_tests(solution, tests).work
            )
    readings = {}
    for case, (solution, tests) in code_tables.SOLUTIONS.items():
        budget = budgets.get(case.rsplit(":", 1)[0], work_budget_for(0))
        run = run_tests(solution, tests, work_budget=budget)
        counts = run.aggregated
        readings[case] = {
            "status": run.status,
            "tests": f"{counts['numPassedTests']}/{counts['numTotalTests']}",
            "reason": run.reason,
            "work": run.work,
            "budget": budget,
        }
    pinned_readings(versions("leetcode", "luau", "jest"), readings)


def test_stats(pinned_readings):
    readings = {}
    for task, epochs, rows in _fixed_rows():
        summary = results.summarize(TASKS[task], rows)
        readings[f"{task}:{epochs}"] = results.without_timing(summary)
    pinned_readings({"stats": results.graders_of(TASKS["multiple_choice"])["stats"]}, readings)


def _fixed_rows() -> list[tuple[str, int, list[dict]]]:
    """Rows of every status, one epoch and three, in every band: the same every time."""
    statuses = ["correct", "wrong", "wrong", "correct", "apiError", "correct", "wrong"]
    tables = []
    for task, epochs in itertools.product(("multiple_choice", "freeform", "leetcode"), (1, 3)):
        rows = []
        for i, epoch in itertools.product(range(23), range(1, epochs + 1)):
            status = statuses[(i * 3 + epoch) % len(statuses)]
            row = {
                "id": f"q{i}",
                "status": status,
                "correct": status == "correct",
                "usage": {"input": 100 + i, "output": 10 * epoch, "cached": i % 4},
            }
            if epochs > 1:
                row["epoch"] = epoch
            if task == "leetcode":
                row["difficulty"] = ("easy", "medium", "hard")[i % 3]
                if i == 22:
                    row.update(status="datasetError", correct=False)
            if task == "freeform" and status != "apiError":
                said = "CORRECT" if status == "correct" else "INCORRECT"
                verdicts = [said, None if i % 5 == 0 else said]
                row["verdicts"] = [{"judge": f"j{k}", "verdict": v} for k, v in enumerate(verdicts)]
                row["agreed"] = i % 5 != 0
                row["judgeUsage"] = {"input": 50, "output": 5, "reasoning": i}
            rows.append(row)
        tables.append((task, epochs, rows))
    return tables


def _votes(votes: list[bool | None]) -> str:
    return ",".join({True: "correct", False: "incorrect", None: "unparseable"}[v] for v in votes)


def _kept(reading: str | None) -> str | None:
    if reading is None or len(reading) <= LONG:
        return reading
    return f"{len(reading)} characters, {digest({'code': reading})}"
