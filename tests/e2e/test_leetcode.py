"""Luau LeetCode through the whole harness: the sandbox verdicts of hostile solutions,
per-difficulty summaries, xdist runs agreeing with serial ones, `--jest-url` against a loopback
JestLuaTestServer, references that fail, run away or cannot be metered, and Ctrl-C during a hung
reference. Code extraction is tests/unit/test_leetcode.py.

`pytest` starts warm (tests/support/warm.py); the Ctrl-C run is a real exec in a group of its own,
signalled as a terminal would, since what is tested is that the sandbox's worker processes end
with it. The servers run on threads of the test."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from evals.results import without_timing
from tests.support.harness import (
    PROBLEMS,
    cpu_seconds,
    harness_command,
    harness_env,
    read_result,
    run_harness,
    start,
    wait_for,
)
from tests.support.loopback import Answer, OpenAIServer

HOSTILE = {
    "lc-easy-01-two-sum-indices": (
        "local Solution = {}\nfunction Solution.twoSum() while true do end end\nreturn Solution"
    ),
    "lc-easy-02-balanced-brackets": "local t, s = {}, 'x'\nfor i = 1, 40 do s ..= s; t[i] = s end\nreturn {}",
    "lc-easy-03-alnum-palindrome": (
        "local Solution = {}\nfunction Solution.isPalindrome(s) "
        "return Solution.isPalindrome(s) end\nreturn Solution"
    ),
    "lc-easy-04-stock-single-trade": "os.exit(0)\nreturn {}",
    "lc-easy-05-first-occurrence": (
        "getfenv(0).expect = function() return setmetatable({}, "
        "{__index = function() return function() end end}) end\nreturn {}"
    ),
    "lc-easy-06-merge-sorted-lists": "for i = 1, 200000 do print(string.rep('spam', 64)) end\nreturn {}",
    "lc-easy-07-bit-count-table": "coroutine.yield()\nreturn {}",
}


def responder(request) -> Answer:
    prompt = request.body["messages"][-1]["content"]
    problem = next(p for p in PROBLEMS if p["problem_description"].strip() in prompt)
    if problem["task_id"] in HOSTILE:
        return Answer(f"```luau\n{HOSTILE[problem['task_id']]}\n```")
    code = problem["wrong_solution"] if problem["difficulty"] == "Hard" else problem["solution"]
    return Answer(
        f"Here is my solution.\n\n```luau\n{code}\n```", input_tokens=500, output_tokens=300
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One serial and one xdist run against the same model."""
    tmp = tmp_path_factory.mktemp("leetcode")
    with OpenAIServer(responder) as server:
        args = [
            "--provider=openai",
            "--model=coder",
            f"--base-url={server.url}/v1",
            "-m",
            "leetcode",
            "--luau-timeout=5",
        ]
        serial = run_harness(
            *args, "-n", "0", run_dir=tmp / "a", results_dir=tmp / "ra", timeout=300
        )
        parallel = run_harness(
            *args, "-n", "2", run_dir=tmp / "b", results_dir=tmp / "rb", timeout=300
        )
    return tmp, serial, parallel


def test_hostile_solutions_fail_with_their_reasons_and_the_run_goes_on(runs):
    tmp, serial, _ = runs
    result = read_result(tmp / "ra", "leetcode")
    rows = {r["id"]: r for r in result["results"]}
    assert len(rows) == len(PROBLEMS)
    for task_id in HOSTILE:
        assert rows[task_id]["status"] == "wrong", rows[task_id]
    assert "work budget" in rows["lc-easy-01-two-sum-indices"]["note"]
    assert "memory" in rows["lc-easy-02-balanced-brackets"]["note"]
    assert (
        rows["lc-easy-01-two-sum-indices"]["work"]
        == rows["lc-easy-01-two-sum-indices"]["workBudget"] + 1
    )
    easy_rest = [
        r for r in result["results"] if r["difficulty"] == "easy" and r["id"] not in HOSTILE
    ]
    assert all(r["correct"] for r in easy_rest)
    assert serial.returncode == 0 and "leetcode" in serial.stdout  # wrong answers: no failure


def test_summary_has_overall_and_each_difficulty(runs):
    tmp, _, _ = runs
    summary = read_result(tmp / "ra", "leetcode")["summary"]
    assert set(summary) == {"overall", "easy", "medium", "hard"}
    assert summary["easy"]["correct"] == 10 - len(HOSTILE)
    assert summary["medium"]["correct"] == 10
    assert summary["hard"]["correct"] == 0  # the wrong solutions
    assert summary["overall"]["n"] == 30 and summary["overall"]["correct"] == 13
    config = read_result(tmp / "ra", "leetcode")["config"]
    assert config["workBudget"] == {"factor": 10, "floor": 1_000_000}


def test_xdist_and_serial_runs_give_the_same_result_file(runs):
    tmp, _, parallel = runs
    assert parallel.returncode == 0, parallel.stdout[-2000:]
    assert without_timing(read_result(tmp / "ra", "leetcode")) == without_timing(
        read_result(tmp / "rb", "leetcode")
    )


def test_the_reference_provider_passes_every_bundled_problem(tmp_path):
    done = run_harness(
        "--provider=reference",
        "-m",
        "leetcode",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode == 0, done.stdout[-3000:]
    assert read_result(tmp_path / "results", "leetcode")["summary"]["overall"]["accuracy"] == 1.0


def test_jest_url_sends_each_problem_to_a_jest_lua_test_server(tmp_path):
    from tests.support.harness import harness_env
    from tests.support.luau.jest_server import JestServer, run_locally

    with JestServer(api_keys={"jest-key-1"}, default=run_locally()) as server:
        done = run_harness(
            "--provider=reference",
            "-m",
            "leetcode",
            f"--jest-url={server.url}",
            "--limit=5",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
            env=harness_env(JEST_SERVER_API_KEY="jest-key-1"),
        )
        uploads = [r for r in server.requests if r.path == "/test"]

    assert done.returncode == 0, done.stdout[-3000:]
    assert len(uploads) == 5 and all(r.api_key == "jest-key-1" for r in uploads)
    assert read_result(tmp_path / "results", "leetcode")["summary"]["overall"]["correct"] == 5


def test_a_jest_server_that_stays_busy_errors_the_items_and_writes_no_result(tmp_path):
    from tests.support.harness import harness_env
    from tests.support.luau.jest_server import JestServer, http

    # Busy at every attempt, asking for no wait (Retry-After: 0): the six attempts are made at
    # once, where the backoff alone (1+2+4+8+16 s) was most of this test's time; the backoff
    # itself is tests/e2e/luau/test_remote.py's.
    with JestServer(default=http(503, retry_after="0")) as server:
        done = run_harness(
            "--provider=reference",
            "-m",
            "leetcode",
            f"--jest-url={server.url}",
            "--limit=1",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
            env=harness_env(),
            timeout=300,
        )

    assert "1 error" in done.stdout.splitlines()[-1] and "still busy (HTTP 503)" in done.stdout
    assert not (tmp_path / "results" / "leetcode").exists()


def _problems_file(tmp_path, *problems: dict):
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")
    return path


def test_a_reference_failing_its_own_tests_is_a_dataset_error_not_scored(tmp_path):
    broken = {**PROBLEMS[0], "solution": PROBLEMS[0]["wrong_solution"]}
    path = _problems_file(tmp_path, PROBLEMS[1], broken)
    done = run_harness(
        "tests_evals",
        "--provider=reference",
        f"--dataset={path}",
        "-m",
        "leetcode",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode == 1, done.stdout[-3000:]
    assert (
        f"DatasetError: {path}: record 2 ({broken['task_id']}): the reference solution does not pass its own tests "
        "(2 of 9 tests failed); fix the problem's solution or test in the dataset; the item is not scored"
    ) in done.stdout
    assert "Traceback" not in done.stdout
    assert re.fullmatch(
        r"=+ 1 passed(, \d+ deselected)?, 1 error in .* =+", done.stdout.splitlines()[-1]
    )
    result = read_result(tmp_path / "results", "leetcode")
    overall = result["summary"]["overall"]
    assert (overall["n"], overall["correct"], overall["accuracy"], overall["datasetErrors"]) == (
        1,
        1,
        1.0,
        1,
    )
    row = {r["id"]: r for r in result["results"]}[broken["task_id"]]
    assert (row["status"], row["correct"], row["difficulty"]) == ("datasetError", False, "easy")
    assert "datasetErrors 1 (not scored: fix the dataset)" in done.stdout


def test_a_reference_the_instrumenter_cannot_meter_runs_on_the_wall_clock(tmp_path):
    """199 top-level locals compile, but not with the counter's own locals beside them: the
    problem gets no work budget and its answers run unmetered, which each row records."""
    many = "\n".join(f"local v{i} = {{ {i} }}" for i in range(199))
    problem = {
        **PROBLEMS[0],
        "solution": PROBLEMS[0]["solution"].replace(
            "local Solution = {}", "local Solution = {}\n" + many, 1
        ),
    }
    path = _problems_file(tmp_path, problem)
    done = run_harness(
        "tests_evals",
        "--provider=reference",
        f"--dataset={path}",
        "-m",
        "leetcode",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode == 0, done.stdout[-3000:]
    (row,) = read_result(tmp_path / "results", "leetcode")["results"]
    assert (row["status"], row["work"], row["workBudget"]) == ("correct", None, None)
    assert row["unmetered"].startswith("the instrumented solution does not compile (solution:")


# Return annotations that nest as deep as they are long, at depths Luau compiles: a walk that
# recursed once per level would pass Python's recursion limit in the grading process.
DEEP_ANNOTATIONS = {
    "function-types": "(number) -> " * 495 + "number",  # the example
    "generic-function-types": "<T>(T) -> " * 200 + "number",
    "type-packs": "(...number) -> " * 495 + "number",
    "unions-of-function-types": "(number) -> number | " * 150 + "number",
}


def _with_deep_helper(code: str, annotation: str) -> str:
    """`code` with a local function typed by `annotation` before its final `return`: the
    module behaves as before, only its source nests deeper."""
    head, _, tail = code.rpartition("return ")
    return f"{head}local function helper(): {annotation}\n\treturn nil :: any\nend\n\nreturn {tail}"


def test_deeply_nested_correct_code_is_metered_and_correct_not_charged_to_the_model(tmp_path):
    problems = {annotation_kind: PROBLEMS[i] for i, annotation_kind in enumerate(DEEP_ANNOTATIONS)}
    path = _problems_file(tmp_path, *problems.values())

    def deep_reply(request) -> Answer:
        prompt = request.body["messages"][-1]["content"]
        kind, problem = next(
            (k, p) for k, p in problems.items() if p["problem_description"].strip() in prompt
        )
        return Answer(
            f"```luau\n{_with_deep_helper(problem['solution'], DEEP_ANNOTATIONS[kind])}\n```"
        )

    with OpenAIServer(deep_reply) as server:
        done = run_harness(
            "tests_evals",
            "--provider=openai",
            "--model=coder",
            f"--base-url={server.url}/v1",
            f"--dataset={path}",
            "-m",
            "leetcode",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )

    assert done.returncode == 0, done.stdout[-3000:]
    rows = {r["id"]: r for r in read_result(tmp_path / "results", "leetcode")["results"]}
    for kind, problem in problems.items():
        row = rows[problem["task_id"]]
        assert (row["status"], row["note"], row.get("unmetered")) == ("correct", None, None), (
            kind,
            row,
        )
        assert 0 < row["work"] <= row["workBudget"], (kind, row)


def _with_statement(code: str, statement: str) -> str:
    """`code` running `statement` when the module loads, just before its final `return`."""
    head, _, tail = code.rpartition("return ")
    return f"{head}{statement}\n\nreturn {tail}"


# References that never finish, overrun a limit or fail, as a dataset may hold by mistake, and
# the reason each problem's DatasetError gives.
RUNAWAY_REFERENCES = {
    "string.find(string.rep('a', 30), string.rep('.-', 12) .. 'b')": "timed out after 2.0 s",  # minutes in C
    "while true do end": "timed out after 2.0 s",
    # 16 MiB at a time: past the limit within the timeout even on a machine busy with other work
    "local kept = {} for i = 1, math.huge do kept[i] = string.rep('x', 2^24) .. i end": "memory limit 256 MiB exceeded",
    "error('the reference is broken')": "error in solution: solution:16: the reference is broken",
}


def test_a_runaway_reference_is_a_dataset_error_within_the_luau_timeout(tmp_path):
    """References are measured in the sandbox's killable worker with model code's limits: one
    that hangs in C no longer hangs the run, one that loops costs --luau-timeout, not 60 s."""
    problems = [
        {**problem, "solution": _with_statement(problem["solution"], statement)}
        for problem, statement in zip(PROBLEMS, RUNAWAY_REFERENCES)
    ]
    path = _problems_file(tmp_path, *problems, PROBLEMS[5])
    started = time.monotonic()
    done = run_harness(
        "tests_evals",
        "--provider=reference",
        f"--dataset={path}",
        "-m",
        "leetcode",
        "--luau-timeout=2",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        timeout=90,
    )
    took = time.monotonic() - started

    assert done.returncode == 1, done.stdout[-3000:]
    for record, (problem, reason) in enumerate(zip(problems, RUNAWAY_REFERENCES.values()), start=1):
        assert (
            f"DatasetError: {path}: record {record} ({problem['task_id']}): "
            "the reference solution does not pass its own "
            f"tests ({reason}); fix the problem's solution or test in the dataset; the item is not scored"
        ) in done.stdout
    assert "Traceback" not in done.stdout
    assert re.fullmatch(
        r"=+ 1 passed(, \d+ deselected)?, 4 errors in .* =+", done.stdout.splitlines()[-1]
    )
    assert took < 45  # in pytest's own process the pattern ran for minutes, the loop for 60 s


@pytest.mark.parametrize("start_method", ["default", "spawn"])
def test_ctrl_c_ends_a_run_measuring_a_reference_hung_in_a_c_call(tmp_path, start_method):
    """In pytest's own process a long C call held the interpreter: Ctrl-C waited for it. The
    sandbox's workers started with spawn (Windows' way, EVALS_START_METHOD=spawn) end it so too."""
    env = harness_env(EVALS_START_METHOD="spawn") if start_method == "spawn" else harness_env()
    hung = {
        **PROBLEMS[0],
        "solution": _with_statement(PROBLEMS[0]["solution"], next(iter(RUNAWAY_REFERENCES))),
    }
    path = _problems_file(tmp_path, hung)
    command = harness_command(
        "tests_evals",
        "--provider=reference",
        f"--dataset={path}",
        "-m",
        "leetcode",
        "--luau-timeout=600",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    process = start(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # The reference's answer is cached before it is scored; then a sandbox worker runs it.
        wait_for(
            lambda: any((tmp_path / "runs").glob("**/*.json")), "the reference's answer cached"
        )
        wait_for(
            lambda: _spinning_in(process.pid), "a sandbox worker spending CPU in the hung reference"
        )
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole group
        stdout, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 2 and "! interrupted: " in stdout, stdout[-3000:]
    assert "Traceback" not in stdout  # no helper process printed one
    assert _group_ends(process.pid), "a process of the run outlived it"


def _spinning_in(group: int, least: float = 1.5) -> bool:
    """Whether a process of the group other than its leader has spent `least` seconds of CPU:
    the sandbox's worker inside the hung call (starting a worker or the forkserver costs far less)."""
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and int(proc.name) != group
                and os.getpgid(int(proc.name)) == group
                and (cpu_seconds(int(proc.name)) or 0.0) >= least
            ):
                return True
        except OSError:
            continue
    return False


def _group_ends(group: int, within: float = 10.0) -> bool:
    """Whether every process of the group is gone within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_start_method_the_sandbox_cannot_use_is_one_line(tmp_path):
    done = run_harness(
        "tests_evals",
        "--provider=reference",
        "-m",
        "leetcode",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        env=harness_env(EVALS_START_METHOD="fork"),
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "ERROR: EVALS_START_METHOD=fork: the Luau sandbox starts its workers with spawn or forkserver "
        "here; set one of those or unset it"
    )
    assert not (tmp_path / "runs").exists()


def test_verify_rescores_a_run_with_the_luau_timeout_it_was_graded_with(tmp_path):
    """A run made with a non-default --luau-timeout records it in its result file (`gradedWith`),
    and verify rescores with it: a solution that takes seconds is wrong under half a second, and
    stays so when verified. Its seconds go into one C call (a pattern that backtracks), which the
    work meter counts as one step, so only the wall clock stops it."""
    from evals.verify import compare

    slow = _with_statement(
        PROBLEMS[0]["solution"], "string.find(string.rep('a', 19), string.rep('.-', 12) .. 'b')"
    )  # ~7 s here
    runs, results = tmp_path / "runs", tmp_path / "results"
    with OpenAIServer(lambda request: Answer(f"```luau\n{slow}\n```")) as server:
        args = [
            "tests_evals",
            "--provider=openai",
            "--model=coder",
            f"--base-url={server.url}/v1",
            "-m",
            "leetcode",
            "--limit=1",
        ]
        done = run_harness(*args, "--luau-timeout=0.5", run_dir=runs, results_dir=results)
        assert done.returncode == 0 and "1 wrong" in done.stdout, (
            done.stdout[-3000:] + done.stderr[-2000:]
        )
        result = read_result(results, "leetcode")
        assert result["gradedWith"] == {"--luau-timeout": 0.5}
        assert [(row["id"], row["note"]) for row in result["results"]] == [
            (PROBLEMS[0]["task_id"], "timed out after 0.5 s")
        ]
        (file,) = (results / "leetcode").glob("*.json")
    assert compare(file, run_root=runs) == (
        "ok",
        "",
    )  # before the record, verify rescored with 10 s: correct, or timed out after 10.0 s
