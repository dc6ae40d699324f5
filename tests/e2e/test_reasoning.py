"""A reply's reasoning is never graded: a block of it at the start of its text, like a server's
`reasoning_content`, is kept in the record as the reasoning, and the letter extractor, the judges
and the LeetCode code extraction read only the answer after it; a run published by the code
before this rule verifies as a regrade and regrades to the answers. The splitter's table is
tests/unit/test_reasoning.py.

`pytest` starts warm (tests/support/warm.py) against servers on threads of the test; the older
commit's `evaluate` is a real exec of its own code (`git archive`, PYTHONPATH), and today's
`evaluate --verify` and `--regrade` are exec'd after it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evals.reasoning import split
from evals.tasks import TASKS
from tests.support.board import META
from tests.support.harness import (
    PROBLEMS,
    Student,
    harness_env,
    read_result,
    run_cli,
    run_harness,
)
from tests.support.loopback import Answer, OpenAIServer, last_user_text
from tests.support.old_code import extract

# -- multiple choice ------------------------------------------------------------------------------

FRAME = ["RenderStepped", "Stepped", "Heartbeat", "PreSimulation"]
STORAGE = ["ReplicatedStorage", "ServerStorage", "StarterPlayerScripts", "Workspace"]
WAIT = ["wait()", "task.wait()", "delay()", "spawn()"]
QUESTIONS = {"frame": (FRAME, "C"), "storage": (STORAGE, "B"), "wait": (WAIT, "B")}

# id: (question kind, reply, the server's reasoning_content, the letter read). The first three
# are the issue's: a draft letter in the block beat a final answer that names the option by its
# text or as "Heartbeat (C)". Every one read the draft's letter (or, the unclosed one, its only
# letter) before.
MC = {
    "heartbeat-paren": (
        "frame",
        "<think>Stepped runs before physics, so the answer is A.</think>\nThe event is Heartbeat (C).",
        None,
        "C",
    ),
    "by-text": (
        "storage",
        "<think>I'll go with D, Workspace.</think>\n\nThe correct choice is ServerStorage.",
        None,
        "B",
    ),
    "by-text-after-a-doubt": (
        "wait",
        "<think>The answer is A. Hmm, wait() is throttled.</think>\nUse task.wait(): it does not throttle.",
        None,
        "B",
    ),
    "thinking-tag-bold": (
        "frame",
        "<thinking>Answer: A</thinking>\n**Heartbeat (C)** fires after physics.",
        None,
        "C",
    ),
    "reasoning-tag": (
        "storage",
        "<reasoning>So the answer is D.</reasoning>\nFinal: ServerStorage",
        None,
        "B",
    ),
    "template-opened": (
        "wait",
        "A is tempting.\nAnswer: A\n</think>\n\nIt is task.wait(), option B.",
        None,
        "B",
    ),
    "two-blocks-and-a-stray-close": (
        "storage",
        "<think>Answer: D</think>\n<think>Answer: A</think></think>\n"
        "ServerStorage (B) is the one clients cannot read.",
        None,
        "B",
    ),
    "upper-case": ("wait", "<THINK>I'd pick A</THINK>\nI pick **task.wait()**.", None, "B"),
    "unclosed": ("wait", "<think>The answer is B, task.wait()", None, None),
    "field-and-block": (
        "frame",
        "<think>Answer: A</think>\nHeartbeat (C) it is.",
        "The answer is D, says the first draft.",
        "C",
    ),
    "field-only": ("frame", "The event is Heartbeat (C).", "The answer is A... no.", "C"),
}


def _mc_file(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"mc-{id}",
            "split": "test",
            "question": f"Question {id}: {kind}?",
            "choices": QUESTIONS[kind][0],
            "answer": QUESTIONS[kind][1],
        }
        for id, (kind, *_) in MC.items()
    ]
    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _mc_reply(request) -> Answer:
    prompt = last_user_text(request.body)
    id = next(id for id, (kind, *_) in MC.items() if f"Question {id}: {kind}?" in prompt)
    _, text, field, _ = MC[id]
    return Answer(text, reasoning=field)


def _records(run_dir: Path, eval_name: str, role: str = "candidate") -> dict[str, dict]:
    return {
        path.parent.name: json.loads(path.read_text())
        for path in (run_dir / eval_name).glob(f"*/calls/*/{role}.json")
    }


def test_multiple_choice_reads_the_answer_after_the_reasoning(tmp_path):
    with OpenAIServer(_mc_reply) as server:  # sends a reasoning as reasoning_content, as vLLM does
        done = run_harness(
            "tests_evals",
            "--provider=live",
            "--model=thinker",
            f"--base-url={server.url}/v1",
            f"--dataset={_mc_file(tmp_path)}",
            "-m",
            "multiple_choice",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    result = read_result(tmp_path / "results", "multiple_choice")
    rows = {r["id"].removeprefix("mc-"): r for r in result["results"]}
    assert {id: rows[id]["answer"] for id in MC} == {id: letter for id, (*_, letter) in MC.items()}
    assert rows["unclosed"]["status"] == "unparseable"
    assert result["graders"]["letters"] == "3"
    records = _records(tmp_path / "runs", "multiple_choice")
    for id, (_, text, field, _) in MC.items():
        response = records[f"mc-{id}"]["response"]
        thought, answer = split(text)
        assert response["text"] == answer and "<think" not in response["text"].lower(), (
            id
        )  # kept as the reasoning
        assert response["reasoning"] == "\n\n".join(filter(None, (field, thought))), id
    assert records["mc-unclosed"]["response"]["text"] == ""


# -- freeform: the judges see the answer, never the thoughts ----------------------------------------

FF = {  # id: (the reply, the reference)
    "think": ("<think>Maybe a BindableEvent? DRAFT-1</think>\nA RemoteEvent.", "A RemoteEvent."),
    "template-opened": (
        "It could be Workspace. DRAFT-2\n</think>\nServerStorage.",
        "ServerStorage.",
    ),
    "thinking": ("<thinking>task.wait or wait? DRAFT-3</thinking>\n\ntask.wait()", "task.wait()"),
    "unclosed": ("<reasoning>Heartbeat, I think. DRAFT-4", "Heartbeat."),
}


def _ff_file(tmp_path: Path) -> Path:
    rows = [
        {"id": f"ff-{id}", "split": "test", "question": f"Freeform {id}?", "answer": reference}
        for id, (_, reference) in FF.items()
    ]
    path = tmp_path / "ff.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _ff_reply(request) -> Answer:
    prompt = last_user_text(request.body)
    if (
        "VERDICT: CORRECT" in prompt
    ):  # a judge: correct when the candidate answer is the reference, word for word
        reference = prompt.split("Reference answer (correct by definition):\n")[1].split(
            "\n\nCandidate answer:\n"
        )
        same = reference[0].strip() == reference[1].split("\n\nDecide")[0].strip()
        # its own thoughts first, with the other verdict in them: the verdict after them counts
        return Answer(
            f"<think>VERDICT: {'INCORRECT' if same else 'CORRECT'}</think>\nCompared.\nVERDICT: "
            f"{'CORRECT' if same else 'INCORRECT'}"
        )
    return Answer(next(reply for id, (reply, _) in FF.items() if f"Freeform {id}?" in prompt))


def test_the_judges_are_shown_the_answer_without_the_reasoning(tmp_path):
    with OpenAIServer(_ff_reply) as server:
        url = f"{server.url}/v1"
        done = run_harness(
            "tests_evals",
            "--provider=live",
            "--model=thinker",
            f"--base-url={url}",
            f"--judge=live:judge-a@{url}",
            f"--judge=live:judge-b@{url}",
            f"--dataset={_ff_file(tmp_path)}",
            "-m",
            "freeform",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        judged = [
            last_user_text(r.body)
            for r in server.requests
            if "VERDICT: CORRECT" in last_user_text(r.body)
        ]
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    assert (
        len(judged) == 2 * 3
    )  # two judges, three answers: the unclosed block is no answer, judged by nobody
    assert not [
        prompt
        for prompt in judged
        if "DRAFT" in prompt or "think>" in prompt or "reasoning>" in prompt
    ]
    result = read_result(tmp_path / "results", "freeform")
    rows = {r["id"].removeprefix("ff-"): r for r in result["results"]}
    assert {id: rows[id]["status"] for id in FF} == {
        "think": "correct",
        "template-opened": "correct",
        "thinking": "correct",
        "unclosed": "wrong",
    }
    assert rows["unclosed"]["note"] == "empty reply"
    assert result["graders"]["verdicts"] == "3"
    judges = _records(tmp_path / "runs", "freeform", "judge-0")
    assert all(r["response"]["reasoning"] == "VERDICT: INCORRECT" for r in judges.values())


# -- LeetCode: a draft in the thinking is not the solution --------------------------------------------


def _lc_replies() -> dict[str, str]:
    """By problem: each problem's wrong solution drafted in the thinking, its solution after it
    (bare code, so before this rule the draft's fenced block was taken); the last one's
    solution only in an unclosed block."""
    a, b, c, d = PROBLEMS[:4]
    return {
        a[
            "task_id"
        ]: f"<think>A first try:\n```luau\n{a['wrong_solution']}\n```\nNo, off by one.</think>\n{a['solution']}\n",
        b["task_id"]: f"Draft:\n```lua\n{b['wrong_solution']}\n```\n</think>\n\n{b['solution']}\n",
        c[
            "task_id"
        ]: f"<thinking>\n```luau\n{c['wrong_solution']}\n```\n</thinking>\n{c['solution']}\n",
        d["task_id"]: f"<think>This passes:\n```luau\n{d['solution']}\n```\n",
    }


def test_leetcode_grades_the_code_after_the_reasoning(tmp_path):
    replies = _lc_replies()
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS[:4]), encoding="utf-8")

    def reply(request) -> Answer:
        prompt = last_user_text(request.body)
        return Answer(
            next(
                text
                for p in PROBLEMS[:4]
                if p["problem_description"].strip() in prompt
                for text in [replies[p["task_id"]]]
            )
        )

    with OpenAIServer(reply) as server:
        done = run_harness(
            "tests_evals",
            "--provider=live",
            "--model=coder",
            f"--base-url={server.url}/v1",
            f"--dataset={path}",
            "-m",
            "leetcode",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
            timeout=300,
        )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    result = read_result(tmp_path / "results", "leetcode")
    rows = {r["id"]: r for r in result["results"]}
    a, b, c, d = (p["task_id"] for p in PROBLEMS[:4])
    assert [rows[t]["status"] for t in (a, b, c)] == ["correct"] * 3, [rows[t] for t in (a, b, c)]
    assert (rows[d]["status"], rows[d]["note"]) == ("wrong", "no code in the reply")
    assert result["graders"]["code"] == "3"


# -- a run published before this rule -----------------------------------------------------------------

OLD = (
    "b9b4a3d"  # the code before it: for `live`, the block stayed in the text it recorded and graded
)
NAME = "Thinker 1"


class Thinker(Student):
    """Right answers (the multiple-choice letter, the LeetCode solution, the freeform
    reference), each after a draft in a `<think>` block that gets it wrong; the Student's
    judges, who compare the candidate answer they are shown with the reference word for word."""

    def __call__(self, request) -> Answer:
        prompt = last_user_text(request.body)
        if "VERDICT: CORRECT" in prompt:
            return super().__call__(request)
        for problem in self.lc:
            if problem["problem_description"].strip() in prompt:
                return Answer(
                    f"<think>\n```luau\n{problem['wrong_solution']}\n```\n</think>\n{problem['solution']}\n"
                )
        for text, (_, q) in self.mc.items():
            if text in prompt:
                wrong = "ABCD"[("ABCD".index(q["answer"]) + 1) % 4]
                return Answer(
                    f"<think>The answer is {wrong}.</think>\n{q['answer']}\n\nIt is the only choice that fits."
                )
        for text, (_, q) in self.ff.items():
            if text in prompt:
                return Answer(f"<think>Not sure at first.</think>\n{q['answer']}")
        return Answer("I do not know this question.")


def test_a_run_published_before_verifies_as_a_regrade_and_regrades_to_the_answers(tmp_path):
    """Published by the code before this rule, whose records hold the block in their text:
    today's verify reads them without it, a regrade (asking nothing) scores the answers."""
    old = extract(OLD, tmp_path / "old")
    data = tmp_path / "data"
    with OpenAIServer(Thinker()) as server:
        url = f"{server.url}/v1"
        flags = [
            "--provider=live",
            "--model=thinker",
            f"--base-url={url}",
            f"--judge=live:judge-a@{url}",
            f"--judge=live:judge-b@{url}",
        ]
        done = subprocess.run(
            [sys.executable, "-m", "evals.evaluate", NAME, *flags, *META, f"--data-dir={data}"],
            cwd=old,
            env=harness_env(PYTHONPATH=str(old)),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0 and f"published {NAME!r}" in done.stdout, (
            done.stdout[-3000:] + done.stderr[-2000:]
        )
        asked = len(server.requests)

        verified = run_cli(
            [sys.executable, "-m", "evals.evaluate", "--verify", f"--data-dir={data}"],
            env=harness_env(),
            timeout=600,
        )
        regraded = run_cli(
            [sys.executable, "-m", "evals.evaluate", "--regrade", NAME, f"--data-dir={data}"],
            env=harness_env(),
            timeout=600,
        )
        assert (
            len(server.requests) == asked
        )  # nothing asked again: read from the records as they are

    assert (verified.returncode, verified.stderr) == (0, ""), verified.stdout + verified.stderr
    lines = verified.stdout.splitlines()
    for key, task, part in (
        ("multipleChoice", "multiple_choice", "letters"),
        ("leetcode", "leetcode", "code"),
    ):
        (line,) = [line for line in lines if f"[{key}]" in line]
        assert (
            line.startswith(f"REGRADE {NAME} [{key}] ")
            and f"{part} 1 -> {TASKS[task].graders[part]}" in line
        ), line
    # The judges of a record that holds the block in its text are asked as they were (about the
    # whole text): so verify, which asks no model, reproduces the published verdicts.
    (line,) = [line for line in lines if "[freeform]" in line]
    assert line.startswith(f"ok {NAME} [freeform] "), line
    assert lines[-1].startswith("1 of 3 runs reproduce; 2 regrades available"), lines[-1]

    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    summaries = {
        task: read_result(data / "results", task)["summary"]
        for task in ("multiple_choice", "leetcode")
    }
    assert summaries["multiple_choice"]["accuracy"] == 1.0, summaries
    assert summaries["leetcode"]["overall"]["accuracy"] == 1.0, summaries
