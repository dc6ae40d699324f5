"""`--epochs K` in whole runs: each item answered K times (its own records, a seed per epoch),
the summary's mean over epochs with an interval clustered by question, a rerun that asks nothing
and reproduces the file, and leetcode's pass@K with one work budget per problem. Summaries alone
are tests/unit/test_epochs.py.

`pytest` starts warm (tests/support/warm.py), a process of its own with its own exit status and
streams, against a loopback server on a thread of the test."""

from __future__ import annotations

import json

import pytest

from evals import stats
from evals.results import without_timing
from evals.verify import differences, rescore
from tests.support.harness import questions, read_result, run_harness
from tests.support.loopback import Answer, OpenAIServer, last_user_text

MC = questions("multiple_choice")


class Moody:
    """Right on question i only for seeds up to i % 4: question 0 never, question 3 always."""

    def __init__(self):
        self.by_text = {q["question"]: (i, q) for i, q in enumerate(MC)}
        self.seeds: list[int | None] = []

    def __call__(self, request) -> Answer:
        prompt = last_user_text(request.body)
        seed = request.body.get("seed")
        self.seeds.append(seed)
        i, q = next(v for text, v in self.by_text.items() if text in prompt)
        right = (seed or 1) <= i % 4
        letter = q["answer"] if right else "ABCD"[("ABCD".index(q["answer"]) + 1) % 4]
        return Answer(f"Answer: {letter}", input_tokens=10, output_tokens=2)


@pytest.fixture
def moody():
    responder = Moody()
    with OpenAIServer(responder) as server:
        yield server, responder


def args(server, *extra):
    return [
        "-m",
        "multiple_choice",
        "--provider=openai",
        "--model=moody-1",
        f"--base-url={server.url}/v1",
        *extra,
    ]


def test_each_epoch_is_asked_with_its_own_seed_and_the_summary_is_their_mean(moody, tmp_path):
    server, responder = moody
    done = run_harness(
        *args(server, "--epochs=3"), run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )

    assert done.returncode == 0, done.stdout[-2000:]  # every item answered, some wrongly
    assert sorted(responder.seeds) == sorted([1, 2, 3] * len(MC))  # K distinct calls per question
    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["config"]["epochs"] == 3
    rows = result["results"]
    assert [(r["id"], r["epoch"]) for r in rows] == [
        (q, e) for q in sorted(q["id"] for q in MC) for e in (1, 2, 3)
    ]
    summary = result["summary"]
    assert (summary["n"], summary["questions"], summary["epochs"]) == (3 * len(MC), len(MC), 3)
    assert summary["accuracy"] == 0.5  # (0 + 1 + 2 + 3) / 12 over every four questions
    low, high = summary["ci95"]
    # The questions differ far more than the epochs of one question: the interval is wider
    # than one that took the 120 answers as 120 independent questions.
    independent = stats.wilson(summary["correct"], summary["n"])
    assert low < independent[0] < 0.5 < independent[1] < high
    # Question 0 is never right: its third epoch is an item of its own, listed among the wrong answers.
    assert (
        "WRONG tests_evals/test_robloxqa.py::test_multiple_choice[mc-001#3] - answered"
        in done.stdout
    ), done.stdout[-3000:]


def test_a_rerun_asks_nothing_and_reproduces_the_file(moody, tmp_path):
    server, responder = moody
    folders = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    run_harness(*args(server, "--epochs=2"), **folders)
    first = read_result(tmp_path / "results", "multiple_choice")
    asked = len(server.requests)

    again = run_harness(*args(server, "--epochs=2"), **folders)

    assert len(server.requests) == asked, again.stdout[-2000:]
    assert without_timing(read_result(tmp_path / "results", "multiple_choice")) == without_timing(
        first
    )
    records = list((tmp_path / "runs" / "multiple_choice").glob("*/calls/*/candidate.json"))
    assert len(records) == 2 * len(MC)  # one record per epoch
    (path,) = (tmp_path / "results" / "multiple_choice").glob("*.json")
    assert (
        differences(
            without_timing(first), without_timing(rescore(path, run_root=tmp_path / "runs"))
        )
        == []
    )  # what verify checks


def test_leetcode_epochs_run_grades_each_answer_and_measures_each_reference_once(tmp_path):
    done = run_harness(
        "-m",
        "leetcode",
        "--provider=reference",
        "--epochs=2",
        "--limit=3",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert done.returncode == 0, done.stdout[-2000:]
    result = read_result(tmp_path / "results", "leetcode")
    assert result["summary"]["overall"]["passAt"] == {"1": 1.0, "2": 1.0}
    assert len(result["results"]) == 6
    (folder,) = (tmp_path / "runs" / "leetcode").iterdir()
    assert (
        len(list((folder / "work").glob("*.json"))) == 3
    )  # one work budget per problem, not per epoch
    assert json.loads(next((folder / "work").glob("*.json")).read_text())["budget"] > 0
