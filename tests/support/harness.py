"""Running the harness as a user does, `pytest ...` or `evaluate ...` in a child process, against
loopback servers; waiting on what such a process printed or wrote, never on a clock.

A test that signals its child starts it with `start`: in a session of its own (a signal to the
group reaches its helpers, as a terminal's Ctrl-C does) and with SIGINT's default action,
whatever this process was started with. Under `nohup`, `&` in a script or many CI runners
SIGINT is ignored, and an ignored signal stays ignored across exec: the child would never see
the Ctrl-C the test sends."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support import ROOT, warm
from tests.support.loopback import Answer, last_user_text

DATA = ROOT / "data" / "robloxqa"
API_KEY = "fake-loopback-key-for-tests"
# A models.json entry with every field right and no result files yet.
GOOD = {
    "name": "M",
    "provider": "P",
    "url": "https://p",
    "releaseDate": "2026-01-02",
    "size": None,
    "price": {"input": 1, "output": 2},
}


def questions(name: str, split: str = "test") -> list[dict]:
    rows = [
        json.loads(line)
        for line in (DATA / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return [r for r in rows if r["split"] == split]


def harness_env(**extra: str) -> dict[str, str]:
    # As from a shell: no API key of the test process's, no warning it said (`models_file.WARNED`).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k != "ROBLOX_EVALS_WARNED"
    }
    # Lookups that a test does not point at a loopback server go nowhere, never to the internet.
    offline = {
        "OPENROUTER_API_BASE": "http://127.0.0.1:9/api/v1",
        "HF_ENDPOINT": "http://127.0.0.1:9",
    }
    return {**env, **offline, "OPENAI_API_KEY": API_KEY, "PYTHONUNBUFFERED": "1", **extra}


def harness_command(*args: str, run_dir: Path, results_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        f"--run-dir={run_dir}",
        f"--results-dir={results_dir}",
        *args,
    ]


def run_cli(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str = ROOT,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """`command` run to its end, its output captured as text: `python -m pytest` and `python -m
    evals.evaluate` warm (tests/support/warm.py: forked, their imports done once), anything
    else, or a command whose interpreter would start differently, exec'd as it is."""
    env = env or harness_env()
    if module := warm.warm_module(command, env):
        return warm.run(command, module, env=env, cwd=cwd, timeout=timeout, text=True)
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def run_harness(
    *args: str,
    run_dir: Path,
    results_dir: Path,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    return run_cli(
        harness_command(*args, run_dir=run_dir, results_dir=results_dir), env=env, timeout=timeout
    )


@contextmanager
def default_sigint():
    """Children started inside this block take SIGINT's default action: a handler, unlike an
    ignored disposition, is reset by exec. Only the main thread may set a handler; the tests
    that signal their children run there."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def start(command: list[str], *, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """`command` in a process group of its own with SIGINT's default action, from the root."""
    kwargs.setdefault("cwd", ROOT)
    with default_sigint():
        return subprocess.Popen(command, env=env or harness_env(), start_new_session=True, **kwargs)


def wait_for(
    condition: Callable[[], object], what: str, *, timeout: float = 120, every: float = 0.02
) -> None:
    """Until `condition()` holds. The bound is generous (a loaded machine is slow, never wrong);
    running out, it says what was being waited for."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}; it never happened")
        time.sleep(every)


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system) process `pid` has spent, where /proc tells it (Linux):
    a wait on how far a process got that a loaded machine slows down but never fools."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def result_files(results_dir: Path, eval_name: str) -> list[Path]:
    return sorted((results_dir / eval_name).glob("*.json"))


def read_result(results_dir: Path, eval_name: str) -> dict:
    (path,) = result_files(results_dir, eval_name)
    return json.loads(path.read_text())


class Student:
    """A responder playing a model that knows most answers, and judges that grade it.

    Multiple choice: right except on every fifth question (answers the next letter).
    LeetCode: the reference solution, except on hard problems (their wrong solution).
    Freeform: answers the reference verbatim except on every fourth question. Judges read
    the candidate reply out of the judge prompt; judge-c is sloppy on every seventh item and
    writes no verdict line."""

    def __init__(self):
        self.mc = {q["question"]: (i, q) for i, q in enumerate(questions("multiple_choice"))}
        self.ff = {q["question"]: (i, q) for i, q in enumerate(questions("freeform"))}
        self.lc = [
            json.loads(line)
            for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()
        ]

    def __call__(self, request) -> Answer:
        body = request.body
        prompt = last_user_text(body)  # Chat Completions, Responses and Messages bodies alike
        if "VERDICT: CORRECT" in prompt:
            return Answer(self.verdict(body["model"], prompt), input_tokens=200, output_tokens=20)
        for problem in self.lc:
            if problem["problem_description"].strip() in prompt:
                code = (
                    problem["wrong_solution"]
                    if problem["difficulty"] == "Hard"
                    else problem["solution"]
                )
                return Answer(f"```luau\n{code}\n```", input_tokens=400, output_tokens=250)
        for text, (i, q) in self.mc.items():
            if text in prompt:
                letter = q["answer"] if i % 5 else "ABCD"[("ABCD".index(q["answer"]) + 1) % 4]
                return Answer(
                    f"Reasoning about it.\n\nAnswer: {letter}", input_tokens=120, output_tokens=30
                )
        for text, (i, q) in self.ff.items():
            if text in prompt:
                return Answer(
                    q["answer"] if i % 4 else "I am not sure.", input_tokens=80, output_tokens=40
                )
        return Answer("I do not know this question.")

    def verdict(self, judge: str, prompt: str) -> str:
        reference = re.search(
            r"Reference answer \(correct by definition\):\n(.*?)\n\nCandidate answer:\n(.*?)\n\nDecide",
            prompt,
            re.S,
        )
        same = reference.group(1).strip() == reference.group(2).strip()
        i = next(i for text, (i, q) in self.ff.items() if text in prompt)
        if judge == "judge-c" and i % 7 == 0:
            return "Looks fine to me."
        return f"Compared.\nVERDICT: {'CORRECT' if same else 'INCORRECT'}"

    def question_of(self, body: dict | None) -> str | None:
        """The bundled question id a candidate request asks about, if any. A request cut off
        by a killed client has no body."""
        if not isinstance(body, dict) or not body.get("messages"):
            return None
        prompt = body["messages"][-1]["content"]
        if "VERDICT: CORRECT" in prompt:
            return None
        for text, (_, q) in {**self.mc, **self.ff}.items():
            if text in prompt:
                return q["id"]
        return next(
            (p["task_id"] for p in self.lc if p["problem_description"].strip() in prompt), None
        )


STYLES = [  # a judge's reply for a verdict: one of each kind that parse_verdict reads (tests/{unit,e2e}/test_judges.py)
    lambda v: f"VERDICT: {v}\nCompared with the reference answer.",
    lambda v: json.dumps({"reasoning": "Compared with the reference answer.", "verdict": v}),
    lambda v: f"Compared with the reference answer.\nFinal verdict: {v}",
    lambda v: f"Compared with the reference answer.\nVERDICT - {v}",
    lambda v: f"Compared with the reference answer.\nVERDICT：{v}",
    lambda v: (
        f"Compared with the reference answer.\nVERDICT: {v} {'✅' if v == 'CORRECT' else '❌'}"
    ),
    lambda v: f"Compared with the reference answer.\nVERDICT: {v}. That settles it.",
    lambda v: f"Compared with the reference answer.\n```\nVERDICT: {v}\n```",
    lambda v: (
        f"<think>Draft: VERDICT: {'INCORRECT' if v == 'CORRECT' else 'CORRECT'}\nOn "
        f"reflection, no.</think>\nVERDICT: {v}"
    ),
]


class OwnWayJudges(Student):
    """The Student, graded by judges who each answer in one of STYLES, another per item and judge."""

    def verdict(self, judge: str, prompt: str) -> str:
        same = super().verdict("judge-a", prompt).endswith("VERDICT: CORRECT")
        i = next(i for text, (i, q) in self.ff.items() if text in prompt)
        return STYLES[(3 * i + "abc".index(judge[-1])) % len(STYLES)](
            "CORRECT" if same else "INCORRECT"
        )


def candidate_requests(server, student) -> list[str]:
    return [q for r in server.requests if (q := student.question_of(r.body))]


def fail_first_mc(server, n: int, status: int = 400):
    failing = [q["question"] for q in MC[:n]]
    server.fail_when(
        lambda r: any(text in r.body["messages"][-1]["content"] for text in failing), status
    )


def out(done: subprocess.CompletedProcess) -> str:
    return done.stdout[-4000:] + done.stderr[-3000:]


def bundled(name: str, split: str = "test") -> list[str]:
    path = ROOT / "data" / "robloxqa" / f"{name}.jsonl"
    return [
        r["id"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and (r := json.loads(line))["split"] == split
    ]


EVALS = str(ROOT / "tests_evals")


USAGE_ERROR = 4


API_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "MY_EVAL_KEY")


def usage_error(result: pytest.RunResult) -> str:
    """The one ERROR: line of a usage error, after checking that nothing else happened."""
    out, err = "\n".join(result.outlines), "\n".join(result.errlines)
    assert "Traceback" not in out + err and "INTERNALERROR" not in out + err, out + err
    assert result.ret == USAGE_ERROR, out + err
    lines = [line for line in result.errlines if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), err
    assert not [line for line in result.outlines if "::" in line or "collected" in line], out
    return lines[0]


PROBLEMS = [
    json.loads(line)
    for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()
]


def mc_file(path: Path, ids: list[str]) -> Path:
    rows = [
        {"id": i, "question": f"Question number {n}?", "choices": ["yes", "no"], "answer": "A"}
        for n, i in enumerate(ids)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


MC = questions("multiple_choice")
