"""`--epochs K`, in process: more epochs make another run and one epoch is the run without the
flag, leetcode's unbiased pass@1 and pass@K per band, and one-epoch summaries as before. Whole
runs are tests/e2e/test_epochs.py."""

from __future__ import annotations

from evals import stats
from evals.identity import from_values
from evals.plan import plan
from evals.results import summarize
from evals.tasks import TASKS


def test_more_epochs_is_another_run_and_one_epoch_is_the_run_without_the_flag():
    mc = TASKS["multiple_choice"]
    names = {
        k: plan(mc, from_values({"provider": "reference", "epochs": k})).config.run_name
        for k in (None, 1, 2, 3)
    }
    assert names[None] == names[1]
    assert len({names[None], names[2], names[3]}) == 3
    assert "epochs2" in names[2]


def _rows(by_problem: dict[str, list[bool]], difficulty: str = "easy") -> list[dict]:
    return [
        {
            "id": pid,
            "epoch": e,
            "difficulty": difficulty,
            "status": "correct" if ok else "wrong",
            "correct": ok,
            "usage": {},
        }
        for pid, results in by_problem.items()
        for e, ok in enumerate(results, 1)
    ]


def test_leetcode_reports_unbiased_pass_at_1_and_pass_at_k_per_band():
    easy = {"e1": [True, True, True, True], "e2": [False, False, True, False]}
    hard = {"h1": [False] * 4, "h2": [True, False, False, False]}
    summary = summarize(TASKS["leetcode"], _rows(easy) + _rows(hard, "hard"))

    assert summary["overall"]["passAt"] == {"1": round((1 + 0.25 + 0 + 0.25) / 4, 4), "4": 0.75}
    assert summary["easy"]["passAt"] == {"1": 0.625, "4": 1.0}
    assert summary["hard"]["passAt"] == {"1": 0.125, "4": 0.5}
    assert summary["medium"]["n"] == 0 and "passAt" not in summary["medium"]
    assert summary["overall"]["accuracy"] == round(
        6 / 16, 4
    )  # pass@1 with K answers each is their mean


def test_one_epoch_summaries_are_as_before():
    rows = [{"id": f"q{i}", "status": "correct", "correct": i < 3, "usage": {}} for i in range(4)]
    summary = summarize(TASKS["multiple_choice"], rows)
    assert "epochs" not in summary and "questions" not in summary
    assert summary["ci95"] == [round(x, 4) for x in stats.wilson(3, 4)]
    assert "passAt" not in summarize(TASKS["leetcode"], _rows({"p": [True]}))["overall"]
