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


def one_judge(server) -> list[str]:
    """The Student as the candidate, judged by one judge, both on `server`."""
    return model_flags(server)[:4]


def test_one_judge_prints_no_agreement(tmp_path):
    """One judge always agrees with itself: its run says nothing of agreement."""
    with OpenAIServer(OwnWayJudges()) as server:
        done = run_harness(
            *one_judge(server),
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


# -- the judges' cap (--judge-max-tokens) --------------------------------------------------------


def judge_requests(server, since: int = 0) -> list:
    return [r for r in server.requests[since:] if str(r.body.get("model", "")).startswith("judge-")]


def test_a_judges_cap_is_sent_and_is_part_of_the_judges_identity_and_absent_by_default(tmp_path):
    with OpenAIServer(OwnWayJudges()) as server:
        args = [*one_judge(server), "-m", "freeform", "--limit=2"]
        plain = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "r0")
        before = len(server.requests)
        capped = run_harness(
            *args,
            "--judge-max-tokens=64",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "r1",
        )
        uncapped, asked = judge_requests(server)[:2], judge_requests(server, before)

    assert plain.returncode in (0, 1) and capped.returncode in (0, 1), out(capped)
    assert [("max_tokens" in r.body, "max_completion_tokens" in r.body) for r in uncapped] == [
        (False, False)
    ] * 2
    assert len(asked) == 2 and {r.body.get("max_tokens") for r in asked} == {64}, out(capped)
    (judge,) = read_result(tmp_path / "r0", "freeform")["config"]["judges"]
    assert "maxTokens" not in judge  # published runs keep their identity
    (judge,) = read_result(tmp_path / "r1", "freeform")["config"]["judges"]
    assert judge["maxTokens"] == 64
    assert len(list((tmp_path / "runs").glob("freeform/*"))) == 2  # another run, another folder


def test_evaluate_takes_a_judges_cap_and_a_bare_rerun_keeps_it(tmp_path):
    with OpenAIServer(OwnWayJudges()) as server:
        data = tmp_path / "data"
        first = run_cli(
            evaluate_command(
                data,
                "Judged",
                *model_flags(server),
                *META,
                "--evals=ff",
                "--judge-max-tokens=48",
                "--limit=1",
            )
        )
        asked = judge_requests(server)
        plan = run_cli(evaluate_command(data, "Judged", "--dry-run"))
    assert first.returncode == 0, out(first)
    assert len(asked) == 2 and {r.body.get("max_tokens") for r in asked} == {48}, out(first)
    (command,) = [line for line in plan.stdout.splitlines() if line.strip().startswith("ff:")]
    assert "--judge-max-tokens=48" in command, plan.stdout


def test_a_judges_cap_on_a_judge_that_takes_none_is_one_line(tmp_path):
    done = run_harness(
        "--provider=reference",
        "-m",
        "freeform",
        "--judge-max-tokens=64",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert done.returncode == 4, out(done)  # pytest's usage error, as --max-tokens=0's
    assert "--judge-max-tokens is not sent by --judge reference:exact-match" in out(done)
    assert "Traceback" not in out(done)
