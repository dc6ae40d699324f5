"""Freeform judging in a whole run: judges who say their verdicts their own way are read as they
meant them, and the run stays under the gate. Parsing, the vote and the specs are
tests/unit/test_judges.py.

`pytest` starts warm (tests/support/warm.py), a process of its own with its own exit status,
against a candidate and judges on a loopback server on a thread of the test."""

from __future__ import annotations

from evals.tasks import TASKS
from tests.support.board import META, evaluate_command, model_flags
from tests.support.harness import (
    STYLES,
    run_cli,
    OwnWayJudges,
    harness_env,
    out,
    questions,
    read_result,
    run_harness,
)
from tests.support.loopback import OpenAIServer

# Judges who say it their own way (issue 20): each kind as the issue found it, then more of its
# kind, then what must stay unparseable. Three cases of the table above (a verdict first, then
# reasoning; a sentence after the verdict; a dash) were unparseable before and read now.


# -- a whole freeform run, judged by judges who say it their own way --------------------------------


def test_a_freeform_run_reads_verdicts_said_their_own_way_and_stays_under_the_gate(tmp_path):
    with OpenAIServer(OwnWayJudges()) as server:
        judges = [f"--judge=live:judge-{x}@{server.url}/v1" for x in "abc"]
        done = run_harness(
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            *judges,
            "-m",
            "freeform",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
    result = read_result(tmp_path / "results", "freeform")
    rows = result["results"]
    assert len(rows) == len(questions("freeform")) >= len(STYLES), done.stdout[-3000:]
    # every verdict graded as the judge meant it: the Student answers the reference verbatim except on every fourth item
    answered = {q["id"]: i % 4 != 0 for i, q in enumerate(questions("freeform"))}
    for row in rows:
        assert [v["verdict"] for v in row["verdicts"]] == [
            "CORRECT" if answered[row["id"]] else "INCORRECT"
        ] * 3, row
        assert row["agreed"] is True and row["correct"] is answered[row["id"]]
    assert result["summary"]["judgeUnparseable"] == 0 and result["summary"]["judgeAgreement"] == 1.0
    assert result["publishable"] is True and result["notPublishable"] == []
    assert result["graders"]["verdicts"] == TASKS["freeform"].graders["verdicts"]
    assert "judges agreed 100%" in done.stdout, done.stdout[-3000:]


def test_one_judge_prints_no_agreement(tmp_path):
    """One judge always agrees with itself: its run says nothing of agreement."""
    with OpenAIServer(OwnWayJudges()) as server:
        done = run_harness(
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            f"--judge=live:judge-a@{server.url}/v1",
            "-m",
            "freeform",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
    assert "freeform" in done.stdout and "accuracy" in done.stdout, done.stdout[-3000:]
    assert "agreed" not in done.stdout, done.stdout[-3000:]


JUDGE_KEY = "sk-loopback-judge-key"


def test_a_judge_on_your_own_url_is_asked_with_the_key_its_variable_holds(tmp_path):
    """`live:MODEL@URL,key=VAR`: the judge's requests carry VAR's key, not "Bearer EMPTY"; with
    VAR unset the run is one line naming it; the key is in no file."""
    with OpenAIServer(OwnWayJudges()) as server:
        judge = f"--judge=live:judge-a@{server.url}/v1,key=MY_JUDGE_KEY"
        args = ["--provider=openai", "--model=student-1", f"--base-url={server.url}/v1", judge]
        unset = run_harness(
            *args, "-m", "freeform", run_dir=tmp_path / "r0", results_dir=tmp_path / "o0"
        )
        asked_unset = len(server.requests)
        done = run_harness(
            *args,
            "-m",
            "freeform",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
            env=harness_env(MY_JUDGE_KEY=JUDGE_KEY),
        )
        judged = [r for r in server.requests[asked_unset:] if r.body.get("model") == "judge-a"]

    assert unset.returncode != 0 and "MY_JUDGE_KEY" in unset.stdout + unset.stderr, out(unset)
    assert asked_unset == 0  # refused before anything was asked
    assert done.returncode in (0, 1), out(done)  # 1: the model's wrong answers
    assert judged and {r.api_key for r in judged} == {JUDGE_KEY}
    result = read_result(tmp_path / "results", "freeform")
    assert [j["model"] for j in result["config"]["judges"]] == ["judge-a"]
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(JUDGE_KEY in text for text in written)


def test_a_bare_resume_asks_the_judge_with_the_variable_it_was_given(tmp_path):
    with OpenAIServer(OwnWayJudges()) as server:
        judge = f"--judge=live:judge-a@{server.url}/v1,key=MY_JUDGE_KEY"
        env = harness_env(MY_JUDGE_KEY=JUDGE_KEY)
        data = tmp_path / "data"
        first = run_cli(
            evaluate_command(
                data, "Judged", *model_flags(server), *META, "--evals=ff", judge, "--limit=1"
            ),
            env=env,
        )
        assert first.returncode == 0, out(first)
        plan = run_cli(evaluate_command(data, "Judged", "--dry-run"), env=env)
    assert plan.returncode == 0, out(plan)
    (command,) = [line for line in plan.stdout.splitlines() if line.strip().startswith("ff:")]
    assert ",key=MY_JUDGE_KEY" in command and JUDGE_KEY not in plan.stdout
    assert JUDGE_KEY not in "".join(p.read_text() for p in (data / "plans").glob("*.json"))
