"""`evaluate` as a maintainer uses it, through the real CLI against loopback providers: resume
by name after any first attempt, everything checked before the first paid request, the gate
and its exit codes, published runs that never change, --force, usage errors once, Ctrl-C, a
reader that stops early, the table it ends with.

`evaluate` and `pytest` start warm (tests/support/warm.py) or are exec'd as they are, each a
process with its own exit status, environment and streams; a real exec is the point for a
`--force` run SIGKILLed as a group, Ctrl-C to a process group and a pipe its reader closes. The
servers run on threads of the test."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from evals import models_file
from tests.support.board import META, entry, evaluate, evaluate_command, model_flags
from tests.support.board import verify as pytest_verify
from tests.support.datasets import MC_RECORDS, write_jsonl
from tests.support.harness import (
    ROOT,
    Student,
    candidate_requests,
    fail_first_mc,
    harness_command,
    harness_env,
    out,
    questions,
    run_cli,
    start,
    wait_for,
)
from tests.support.loopback import OpenAIServer

MC = questions("multiple_choice")


# -- 1. resume by name ---------------------------------------------------------------------------


def test_after_a_refused_first_attempt_a_bare_rerun_resumes_the_planned_identity(
    server, student, tmp_path
):
    data = tmp_path / "data"
    fail_first_mc(server, 4)
    first = evaluate(data, "Gated", *model_flags(server), *META, "--evals=mc")
    assert first.returncode == 1 and "not published" in first.stdout, out(first)

    for extra in ("--status", "--dry-run"):
        again = evaluate(data, "Gated", extra)
        assert again.returncode == 0 and "Traceback" not in out(again), out(again)
        assert "openai-student-1" in again.stdout
    server.clear_faults()
    asked = len(candidate_requests(server, student))

    resumed = evaluate(data, "Gated", "--evals=mc")

    assert resumed.returncode == 0, out(resumed)
    retried = candidate_requests(server, student)[asked:]
    assert sorted(retried) == sorted(
        q["id"] for q in MC[:4]
    )  # only the failed calls, nothing paid twice


def test_a_model_with_nothing_planned_gets_one_line_saying_what_to_pass(tmp_path):
    done = evaluate(tmp_path / "data", "Nobody Yet")
    assert done.returncode == 2 and "Traceback" not in out(done)
    assert done.stderr.strip().splitlines() == [
        "error: nothing is planned for 'Nobody Yet': a new model needs --model and --provider "
        "(and --provider-name, --url, --release-date and prices, or they are looked up)"
    ]


def test_a_corrupt_saved_plan_is_one_line_naming_it_and_the_fix(tmp_path):
    data = tmp_path / "data"
    assert evaluate(data, "Gold", "--provider=reference", "--limit=1", "--evals=mc").returncode == 0
    (plan,) = (data / "plans").glob("*.json")
    plan.write_text('{"format": 1, "name": "Gold", "ev')

    done = evaluate(data, "Gold", "--status")

    assert done.returncode == 1 and "Traceback" not in out(done)
    assert done.stderr.strip().splitlines() == [
        f"error: {plan}: the saved plan of 'Gold' is corrupt; delete it and pass the model's flags again"
    ]


def test_a_smoke_test_is_not_what_a_bare_rerun_resumes(server, tmp_path):
    data = tmp_path / "data"
    smoke = evaluate(data, "Smoke", *model_flags(server), *META, "--limit=2", "--evals=mc")
    assert smoke.returncode == 0 and "models.json left alone" in smoke.stdout, out(smoke)

    plan = evaluate(data, "Smoke", "--dry-run")

    assert "--limit" not in plan.stdout and "limit2" not in plan.stdout, plan.stdout


# -- 2. everything checked before the first paid request ---------------------------------------


@pytest.mark.parametrize(
    "bad, says",
    [
        (["--price-input=1.25"], "--price-input and --price-output go together"),
        (
            ["--price-input=inf", "--price-output=10"],
            "--price-input must be a finite number of USD, 0 or more (got inf)",
        ),
        (
            ["--price-input=1", "--price-output=-2"],
            "--price-output must be a finite number of USD, 0 or more (got -2.0)",
        ),
        (
            ["--energy-period=nan"],
            "--energy-period must be a number of seconds above 0 and at most 86400 (a day) (got nan)",
        ),
        (["--workers=-1"], "--concurrency must be at least 1 (got -1)"),  # its old name
        (["--release-date=2026-13-01"], "releaseDate"),
        (["--release-date=20261101"], "releaseDate"),
        (["--size", str(10**400)], "size"),
        (["--url=ftp://example.com"], "url"),
        (["--effort=high", "--thinking"], "--effort and --thinking exclude each other"),
        (["--route=deepinfra"], "--route is not sent by --provider openai"),
        (["--judge=openai"], "--judge 'openai'"),
    ],
    ids=[
        "one-price",
        "inf-price",
        "negative-price",
        "nan-period",
        "negative-workers",
        "bad-date",
        "undashed-date",
        "huge-size",
        "ftp-url",
        "effort-and-thinking",
        "route-openai",
        "bad-judge",
    ],
)
def test_a_bad_flag_or_metadata_stops_before_any_request_and_writes_nothing(
    server, tmp_path, bad, says
):
    data = tmp_path / "data"
    replaced = {flag.split("=")[0] for flag in bad} | (
        {"--price-output"} if "--price-input" in bad[0] else set()
    )
    meta = [m for m in META if m.split("=")[0] not in replaced]
    for command in (["--dry-run"], []):
        done = evaluate(data, "Checked", *model_flags(server), *meta, *bad, *command)
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in out(done), out(
            done
        )
    assert not server.requests
    assert not (data / "models.json").exists() and not (data / "plans").exists()


def test_a_missing_judge_key_stops_before_any_request(server, tmp_path):
    done = run_cli(
        evaluate_command(
            tmp_path / "data",
            "Keyless",
            *model_flags(server)[:3],
            *META,
            "--judge=anthropic:claude-haiku-4-5",
        ),
        env=harness_env(),
        timeout=120,
    )
    assert (
        done.returncode == 2
        and "--judge anthropic:claude-haiku-4-5" in done.stderr
        and "ANTHROPIC_API_KEY" in done.stderr
    )
    assert not server.requests


# -- 4. the gate and honest exits ----------------------------------------------------------------


def test_replies_without_a_letter_are_wrong_not_errors_and_do_not_block_publishing(tmp_path):
    student = Student()

    def no_letter(request):
        if student.question_of(request.body) in {q["id"] for q in MC[:6]}:
            return "It depends on the game."
        return student(request)

    with OpenAIServer(no_letter) as server:
        done = evaluate(tmp_path / "data", "Terse", *model_flags(server), *META)
    assert done.returncode == 0, out(done)
    mc = json.loads(
        models_file.result_path(
            entry(tmp_path / "data", "Terse"), "multipleChoice", tmp_path / "data" / "results"
        ).read_text()
    )
    assert mc["summary"]["unparseable"] == 6 and mc["publishable"] is True


def test_a_refusal_at_the_gate_exits_1_and_says_what_a_rerun_can_do(server, tmp_path):
    fail_first_mc(server, 4)
    done = evaluate(tmp_path / "data", "Gated", *model_flags(server), *META, "--evals=mc")
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "not published" in line)
    assert (
        "multipleChoice: 4 of 40 answers failed (4 API errors)" in line
        and "rerunning retries the API errors" in line
    )


# -- 5. published results are immutable ----------------------------------------------------------


def test_a_run_published_with_allow_errors_is_reproduced_not_rerun_by_a_bare_evaluate(
    server, tmp_path
):
    data = tmp_path / "data"
    fail_first_mc(server, 4)
    first = evaluate(data, "Allowed", *model_flags(server), *META, "--allow-errors")
    assert first.returncode == 0 and entry(data, "Allowed")["allowErrors"] is True, out(first)
    files = {
        key: models_file.result_path(entry(data, "Allowed"), key, data / "results")
        for key in models_file.RESULT_KEYS
    }
    before = {key: path.read_bytes() for key, path in files.items()}
    server.clear_faults()
    asked = len(server.requests)

    again = evaluate(data, "Allowed")

    assert again.returncode == 0, out(again)
    assert len(server.requests) == asked  # the API errors of a published run are not retried
    assert {key: path.read_bytes() for key, path in files.items()} == before
    assert "published: reproduced offline, not run again" in again.stdout


def test_pytest_on_a_published_identity_asks_nothing_and_never_rewrites_the_file(server, tmp_path):
    data = tmp_path / "data"
    assert evaluate(data, "Fixed", *model_flags(server), *META).returncode == 0
    path = models_file.result_path(entry(data, "Fixed"), "multipleChoice", data / "results")
    before, asked = path.read_bytes(), len(server.requests)
    args = [*model_flags(server), "-m", "multiple_choice"]

    same = run_cli(
        harness_command(*args, run_dir=data / "runs", results_dir=data / "results"),
        env=harness_env(),
        timeout=120,
    )
    (record,) = (data / "runs" / "multiple_choice").glob("*/calls/mc-002/candidate.json")
    cached = json.loads(record.read_text())
    cached["response"]["text"] = (
        "Answer: " + {"A": "B", "B": "C", "C": "D", "D": "A"}[cached["response"]["text"][-1]]
    )
    record.write_text(json.dumps(cached))
    tampered = run_cli(
        harness_command(*args, run_dir=data / "runs", results_dir=data / "results"),
        env=harness_env(),
        timeout=120,
    )

    assert len(server.requests) == asked and path.read_bytes() == before
    assert "reproduces the published result file" in same.stdout, same.stdout[-2000:]
    assert (
        tampered.returncode == 1
        and "DIFF: differs from the published result file" in tampered.stdout
        and "mc-002" in tampered.stdout
    )


def test_force_on_a_published_run_is_refused(server, tmp_path):
    data = tmp_path / "data"
    assert evaluate(data, "Fixed", *model_flags(server), *META).returncode == 0
    done = evaluate(data, "Fixed", "--force", "--evals=mc")
    assert done.returncode == 2 and "is published in models.json and stays as it is" in done.stderr


def test_force_sets_aside_the_result_file_so_an_interrupted_force_publishes_nothing_stale(
    server, student, tmp_path
):
    data = tmp_path / "data"
    first = evaluate(data, "Forced", *model_flags(server), *META, "--evals=mc", "--no-build")
    assert first.returncode == 0, out(first)
    (old,) = (data / "results" / "multiple_choice").glob("*.json")

    server.latency = 0.05
    forced = subprocess.Popen(
        evaluate_command(data, "Forced", "--evals=mc", "--force", "--no-build"),
        cwd=ROOT,
        env=harness_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    asked = len(server.requests)
    wait_for(lambda: len(server.requests) >= asked + 5, "the forced run's fifth request")
    os.killpg(forced.pid, signal.SIGKILL)
    forced.wait()

    assert not old.exists() and list(old.parent.glob(f"{old.name}.replaced-*"))
    done = evaluate(data, "Forced", "--evals=mc", "--status")
    assert "no result file yet" in done.stdout, done.stdout


def test_force_with_a_not_marker_starts_over_only_the_evals_that_run(server, tmp_path):
    runs, results = tmp_path / "runs", tmp_path / "results"
    for extra in ([], ["--force"]):
        done = run_cli(
            harness_command(
                *model_flags(server),
                "-m",
                "not freeform and not leetcode",
                *extra,
                run_dir=runs,
                results_dir=results,
            ),
            env=harness_env(),
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stdout[-2000:]
    assert list((runs / "multiple_choice").glob("*.replaced-*"))
    assert not (runs / "freeform").exists() and not (runs / "leetcode").exists()
    assert "--force: the previous run folder is kept as" in done.stdout


# -- 8. one line per error -------------------------------------------------------------------------


def test_a_usage_error_in_the_evals_prints_once_and_touches_nothing(server, tmp_path):
    data = tmp_path / "data"
    done = evaluate(data, "Misused", *model_flags(server), *META, "--jest-url=ftp://jest")
    text = out(done)
    assert (
        done.returncode == 2 and text.count("--jest-url 'ftp://jest' is not an http(s) URL") == 1
    ), text
    assert "resumes" not in text and not server.requests
    assert entry(data, "Misused") is None


def test_a_data_folder_that_cannot_be_written_is_one_line_before_any_request(server, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data folder would go")
    done = evaluate(blocker / "data", "Homeless", *model_flags(server), *META, "--evals=mc")
    assert done.returncode == 2 and "Traceback" not in out(done), out(done)
    assert done.stderr.count("\n") == 1 and str(blocker) in done.stderr
    assert not server.requests


def test_nothing_finished_leaves_models_json_alone(tmp_path):
    with OpenAIServer(Student()) as server:
        server.fail_when(lambda r: True, 401)
        done = evaluate(tmp_path / "data", "Rejected", *model_flags(server), *META, "--evals=mc")
    assert (
        done.returncode == 1 and "nothing finished so far: models.json left alone" in done.stdout
    ), out(done)
    assert not (tmp_path / "data" / "models.json").exists()


def test_ctrl_c_ends_evaluate_with_one_line_and_no_traceback(tmp_path):
    with OpenAIServer(Student(), latency=0.2) as server:
        process = start(
            evaluate_command(
                tmp_path / "data", "Interrupted", *model_flags(server), *META, "--evals=mc"
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(server.requests) >= 5, "evaluate's fifth request")
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole group
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout[-2000:] + stderr
    assert "Traceback (most recent call last)" not in stdout + stderr
    assert "`evaluate 'Interrupted'` resumes" in stderr


@pytest.mark.parametrize(
    "bad, says",
    [
        (
            ["--luau-timeout=1e308"],
            "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day) (got 1e+308)",
        ),
        (
            ["--luau-timeout=nan"],
            "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day) (got nan)",
        ),
        (
            ["--luau-timeout=inf"],
            "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day) (got inf)",
        ),
        (
            ["--luau-timeout=0"],
            "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day) (got 0.0)",
        ),
        (
            ["--luau-timeout=-5"],
            "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day) (got -5.0)",
        ),
        (
            ["--energy-period=inf"],
            "--energy-period must be a number of seconds above 0 and at most 86400 (a day) (got inf)",
        ),
        (["--processes=0"], "--processes must be at least 1 (got 0)"),
        (["--workers=-1"], "--concurrency must be at least 1 (got -1)"),  # its old name
        (
            ["--price-electricity=nan"],
            "--price-electricity must be a finite number of USD, 0 or more (got nan)",
        ),
    ],
    ids=[
        "luau-timeout-1e308",
        "luau-timeout-nan",
        "luau-timeout-inf",
        "luau-timeout-0",
        "luau-timeout-negative",
        "energy-period-inf",
        "processes-0",
        "workers-negative",
        "electricity-nan",
    ],
)
def test_a_number_no_run_can_use_is_refused_in_one_line_before_anything_runs(tmp_path, bad, says):
    """Handed on to each eval's pytest, 1e308 or nan seconds was a traceback on every leetcode item."""
    done = evaluate(tmp_path / "data", "Checked", "--provider=reference", *bad)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"evaluate: error: {says}\n")
    assert not (tmp_path / "data").exists()


# -- 9. as the original ----------------------------------------------------------------------------


def test_workers_is_requests_in_flight_per_eval(server, tmp_path):
    done = evaluate(
        tmp_path / "data",
        "Workers",
        *model_flags(server),
        *META,
        "--workers=3",
        "--processes=2",
        "--dry-run",
    )
    assert done.returncode == 0, out(done)
    lines = [
        line for line in done.stdout.splitlines() if line.strip().startswith(("ff:", "mc:", "lc:"))
    ]
    assert len(lines) == 3 and all(
        "--concurrency=3" in line and "-n 2" in line for line in lines
    ), done.stdout


@pytest.mark.parametrize(
    "given",
    [
        ["--concurrency=3", "--processes=2"],
        ["--concurrency", "3", "-n", "2"],
        ["--workers=3", "--numprocesses=2"],
    ],
    ids=["pytest-names", "pytest-short", "old-names"],
)
def test_one_name_for_each_option_in_both_commands_the_old_ones_kept(tmp_path, given):
    """`evaluate --concurrency 16` was a 20-line usage dump: pytest's names work in evaluate."""
    done = evaluate(tmp_path / "data", "Named", "--provider=reference", *given, "--dry-run")
    assert done.returncode == 0, out(done)
    lines = [
        line for line in done.stdout.splitlines() if line.strip().startswith(("ff:", "mc:", "lc:"))
    ]
    assert lines and all("--concurrency=3" in line and "-n 2" in line for line in lines), (
        done.stdout
    )


@pytest.mark.parametrize(
    "command, says",
    [
        (
            ["--concurency=16"],
            "evaluate: error: unrecognized argument '--concurency=16' (did you mean '--concurrency'?)",
        ),
        (
            ["--dry-runn"],
            "evaluate: error: unrecognized argument '--dry-runn' (did you mean '--dry-run'?)",
        ),
        (
            ["--provider=opena", "--model=m"],
            "--provider 'opena' is unknown (did you mean 'openai'?); choose one of",
        ),
        (["--provider=refrence"], "--provider 'refrence' is unknown (did you mean 'reference'?)"),
        (
            ["--provider=reference", "--judge=opena:gpt-5-mini"],
            "provider 'opena' is unknown (did you mean 'openai'?)",
        ),
    ],
    ids=["option", "switch", "provider", "reference", "judge"],
)
def test_a_typo_gets_one_line_and_a_did_you_mean(tmp_path, command, says):
    done = evaluate(tmp_path / "data", "Typo", *command)
    assert done.returncode == 2, out(done)
    (line,) = done.stderr.strip().splitlines()  # one line, no usage dump
    assert says in line, line
    assert not (tmp_path / "data").exists()


def test_evaluate_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """`evaluate ... | head -1`: the reader goes away after a line; no "error: : Broken pipe"."""
    command = evaluate_command(
        tmp_path / "data", "Piped", "--provider=reference", "--evals=mc"
    )  # a line, then an eval's run
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=harness_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline()  # like head -1: one line, then gone
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=60)
    assert (
        "Broken pipe" not in stderr
        and "Traceback" not in stderr
        and "Exception ignored" not in stderr
    ), stderr


# -- 10. every mistake up front: all of them with --dry-run, after the plan -------------------------


def without_keys(*names: str) -> dict[str, str]:
    return {k: v for k, v in harness_env().items() if k not in names}


def evaluate_in(env: dict[str, str], data, *args: str) -> subprocess.CompletedProcess:
    return run_cli(evaluate_command(data, *args), env=env, timeout=300)


DEFAULT_JUDGED = [
    "--provider=openai",
    "--model=student-1",
    *META,
]  # the README's main command: the default judges


def test_every_missing_key_of_the_candidate_and_the_default_judges_is_one_line_before_any_request(
    server, tmp_path
):
    done = evaluate_in(
        harness_env(), tmp_path / "data", "Keyless", *DEFAULT_JUDGED, f"--base-url={server.url}/v1"
    )
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr, out(done)
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "error: two API keys are not set: ANTHROPIC_API_KEY (--judge "
        "anthropic:claude-haiku-4-5), OPENROUTER_API_KEY (--judge live:"
    ), line
    assert line.endswith("or pick judges you have keys for with --judge PROVIDER:MODEL"), line
    assert not server.requests and not (tmp_path / "data" / "plans").exists()


def hwinfo_log(path, age: float):
    from tests.support.power import hwinfo_row, write_hwinfo

    now = time.time() - age
    return write_hwinfo(
        path,
        [hwinfo_row(now - 1, 40.0, (100.0, 20.0)), hwinfo_row(now, 40.0, (100.0, 20.0))],
        closed=False,
    )


@pytest.mark.parametrize(
    "energy, says",
    [
        (
            lambda tmp: ["--energy", "--energy-source=hwinfo"],
            "--energy-source hwinfo reads HWiNFO's CSV log: name it with --energy-log PATH",
        ),
        (
            lambda tmp: ["--energy", f"--energy-powercap={tmp / 'no-powercap'}"],
            "--energy: no RAPL package zone in",
        ),
        (
            lambda tmp: ["--energy", f"--energy-log={tmp / 'no-such.csv'}"],
            "--energy: the HWiNFO log",
        ),  # a log named: HWiNFO's, not RAPL
        (
            lambda tmp: ["--energy", f"--energy-log={hwinfo_log(tmp / 'stale.csv', age=3600)}"],
            "s ago, so HWiNFO is not logging into it",
        ),
        (
            lambda tmp: [f"--energy-log={tmp / 'sensors.csv'}"],
            "--energy-log has no use without --energy",
        ),
    ],
    ids=["hwinfo-without-log", "no-rapl-zone", "no-log", "stale-log", "log-without-energy"],
)
def test_dry_run_prints_the_plan_then_every_problem_and_exits_non_zero(tmp_path, energy, says):
    data = tmp_path / "data"
    env = without_keys("OPENAI_API_KEY")
    done = evaluate_in(env, data, "Planned", *DEFAULT_JUDGED, *energy(tmp_path), "--dry-run")

    assert done.returncode == 2 and "Traceback" not in out(done), out(done)
    plan = done.stdout
    for tag, eval_name, asked in (
        (
            "ff",
            "freeform",
            "about 100: 25 to the model + 75 to three judges (0 of 25 items cached)",
        ),
        ("mc", "multiple_choice", "about 40: 40 to the model (0 of 40 items cached)"),
        ("lc", "leetcode", "about 30: 30 to the model (0 of 30 items cached)"),
    ):
        assert f"  {tag}: -m {eval_name} --provider=openai --model=student-1" in plan, plan
        assert (
            f"run folder  {data / 'runs' / eval_name}" in plan
            and f"results     {data / 'results' / eval_name}" in plan
        )
        assert f"requests    {asked}" in plan, plan
    problems = done.stderr.splitlines()
    assert len(problems) == 2, done.stderr
    assert problems[0].startswith(
        "error: three API keys are not set: OPENAI_API_KEY (--provider openai, --judge openai:gpt-5-mini)"
    ), problems[0]
    assert problems[1].startswith("error: ") and says in problems[1], problems[1]
    assert not data.exists()


def test_dry_run_estimates_only_the_requests_left_and_exits_0_with_nothing_wrong(
    server, student, tmp_path
):
    data = tmp_path / "data"
    fail_first_mc(server, 4)
    evaluate(data, "Halfway", *model_flags(server), *META, "--evals=mc")

    done = evaluate(data, "Halfway", "--evals=mc", "--dry-run")

    assert done.returncode == 0 and done.stderr == "", out(done)
    assert "requests    about 4: 4 to the model (36 of 40 items cached)" in done.stdout, done.stdout


def test_energy_mistakes_stop_evaluate_in_one_line_before_anything_runs(server, tmp_path):
    for energy in (["--energy", "--energy-source=hwinfo"], ["--energy-source=nvml"]):
        done = evaluate(tmp_path / "data", "Metered", *model_flags(server), *META, *energy)
        assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1, (
            out(done)
        )
        assert "--energy" in done.stderr and "resumes" not in done.stderr
    assert not server.requests


def test_an_eval_that_pytest_stops_with_an_internal_error_is_not_said_to_resume(server, tmp_path):
    """Resuming helps an interrupted run or one with API errors; an internal error comes back."""
    env = harness_env(PYTEST_ADDOPTS="-p tests.support.internal_error")
    done = evaluate_in(env, tmp_path / "data", "Broken", *model_flags(server), *META, "--evals=mc")
    assert done.returncode == 1, out(done)
    last = done.stderr.splitlines()[-1]
    assert (
        last == "error: mc (pytest exit 3) did not finish (see the log above); mc "
        "stopped at an internal error (above), which a resume would meet again"
    ), last


# -- what evaluate prints and how it exits (issue 19, 13-15) --------------------------------------


def test_evaluate_prints_pytests_header_once_and_ends_with_one_table_of_the_evals(tmp_path):
    done = evaluate(tmp_path / "data", "Gold", "--provider=reference", "--limit=2", "--evals=ff,mc")

    assert done.returncode == 0, out(done)
    for header in ("platform ", "rootdir: ", "plugins: "):
        assert sum(line.startswith(header) for line in done.stdout.splitlines()) == 1, done.stdout
    table = done.stdout.splitlines()[-3:]
    assert table[0].split() == ["eval", "score", "95%", "CI", "errors", "cost", "models.json"], (
        done.stdout
    )
    assert (
        table[1].split()[:3] == ["ff", "100.0%", "34.2%-100.0%"]
        and "0 unparseable verdicts" in table[1]
    )
    assert (
        table[2].split()[:3] == ["mc", "100.0%", "34.2%-100.0%"]
        and "0 API, 0 unparseable" in table[2]
    )
    assert all(row.endswith("not publishable (smoke test or reference run)") for row in table[1:])


def test_the_table_shows_the_cost_what_did_not_finish_and_what_was_published(server, tmp_path):
    data = tmp_path / "data"
    fail_first_mc(server, len(MC), 401)  # the key rejected: the run ends, nothing of it finished
    failed = evaluate(data, "Tabled", *model_flags(server), *META, "--evals=ff,mc")
    assert failed.returncode == 1, out(failed)
    rows = {row.split()[0]: row for row in failed.stdout.splitlines()[-2:]}
    assert (
        rows["ff"].split()[1].endswith("%")
        and "$" in rows["ff"]
        and rows["ff"].endswith("waits for the other evals")
    )
    assert rows["mc"].split()[1:] == ["-", "-", "-", "-", "did", "not", "finish"]

    server.clear_faults()
    done = evaluate(data, "Tabled", "--evals=ff,mc,lc")  # all three: the plan picked ff,mc
    assert done.returncode == 0, out(done)
    table = done.stdout.splitlines()[-4:]
    assert [row.split()[0] for row in table] == ["eval", "ff", "mc", "lc"] and all(
        row.endswith(" published") for row in table[1:]
    ), done.stdout


def test_a_finished_run_asked_again_starts_no_pytest_asks_nothing_and_needs_no_key(
    server, tmp_path
):
    data = tmp_path / "data"
    first = evaluate(data, "Again", *model_flags(server), *META, "--no-build")
    assert first.returncode == 0, out(first)
    files = {path: path.read_bytes() for path in (data / "results").rglob("*.json")}
    asked = len(server.requests)

    keyless = run_cli(
        evaluate_command(data, "Again", "--no-build"),
        env={**harness_env(), "OPENAI_API_KEY": ""},
        timeout=300,
    )

    assert keyless.returncode == 0, out(keyless)
    assert (
        "test session starts" not in keyless.stdout
        and keyless.stdout.count("finished: reproduced offline from its run folder, not run again")
        == 3
    )
    assert len(server.requests) == asked and {path: path.read_bytes() for path in files} == files
    assert [row.split()[0] for row in keyless.stdout.splitlines()[-4:]] == [
        "eval",
        "ff",
        "mc",
        "lc",
    ]

    published = evaluate(data, "Again")  # the same check, then publishing: still no pytest
    assert (
        published.returncode == 0
        and "test session starts" not in published.stdout
        and "published 'Again'" in published.stdout
    ), out(published)


def test_a_finished_run_is_run_again_when_a_flag_changes_what_its_result_file_says(
    server, tmp_path
):
    data = tmp_path / "data"
    assert (
        evaluate(
            data, "Regraded", *model_flags(server), *META, "--evals=lc", "--no-build"
        ).returncode
        == 0
    )
    asked = len(server.requests)

    again = evaluate(
        data, "Regraded", "--evals=lc", "--no-build", "--luau-timeout=20"
    )  # the grading's limit: graded anew

    assert again.returncode == 0 and "test session starts" in again.stdout, out(again)
    assert len(server.requests) == asked


@pytest.mark.parametrize(
    "why, args, env, code",
    [
        ("a missing key", ["--evals=mc"], {"OPENAI_API_KEY": ""}, 2),
        ("bad metadata", ["--evals=mc", "--release-date=2026-13-01"], {}, 2),
        ("the same in a dry run", ["--evals=mc", "--dry-run"], {"OPENAI_API_KEY": ""}, 2),
        ("refused at the gate", ["--evals=mc"], {"FAIL": "4"}, 1),
        ("published", [], {}, 0),
    ],
)
def test_the_exit_status_tells_a_script_what_happened(server, tmp_path, why, args, env, code):
    if env.pop("FAIL", None):
        fail_first_mc(server, 4)
    done = run_cli(
        evaluate_command(tmp_path / "data", "Scripted", *model_flags(server), *META, *args),
        env={**harness_env(), **env},
        timeout=300,
    )
    assert done.returncode == code, f"{why}: {out(done)}"


# -- the phases: --status and --dry-run stop before the run phase (issue 28.1) ---------------------

# What only a run needs: the pytest children, the publishing step, and what publishing brings.
RUN_PHASE = ("evals.evaluate.children", "evals.evaluate.publishing", "evals.publish")


def evaluate_seeing_modules(data, seen, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`evaluate ARGS` in an interpreter of its own, never a warm fork (what it imports is the
    point), and the modules it had loaded when it exited."""
    code = (
        "import atexit, runpy, sys\n"
        f"atexit.register(lambda: open({str(seen)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        "runpy.run_module('evals.evaluate', run_name='__main__', alter_sys=True)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args, f"--data-dir={data}"],
        cwd=ROOT,
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, set(seen.read_text().split())


def test_status_and_dry_run_answer_without_importing_the_run_phase(tmp_path):
    data = tmp_path / "data"
    ran, by_run = evaluate_seeing_modules(
        data, tmp_path / "run.txt", "Gold", "--provider=reference", "--limit=2", "--evals=mc"
    )
    assert ran.returncode == 0, out(ran)
    assert set(RUN_PHASE) <= by_run, sorted(
        set(RUN_PHASE) - by_run
    )  # a run imports them: the names are the run phase's

    for mode in ("--status", "--dry-run"):
        done, loaded = evaluate_seeing_modules(
            data, tmp_path / f"{mode}.txt", "Gold", "--evals=mc", mode
        )
        assert done.returncode == 0 and "mc: " in done.stdout, out(done)
        assert not {*RUN_PHASE, "evals.site", "pydantic"} & loaded, (
            mode,
            sorted({*RUN_PHASE, "evals.site", "pydantic"} & loaded),
        )


def test_evaluate_publishes_the_result_files_its_own_runs_wrote_without_rescoring_them(
    tmp_path, monkeypatch, capsys
):
    """Each eval's pytest notes the result file it wrote (`evals.publish.note_written`), so the
    evaluate that started it takes it as finished, as written, without running the graders
    over its run folder again; a file replaced since it was written is rescored. evaluate
    runs in this process, so the rescorings are counted where they happen."""
    from evals import verify
    from evals.evaluate import main
    from tests.support.harness import harness_env

    for name, value in harness_env().items():
        monkeypatch.setenv(name, value)
    rescored: list[str] = []
    rescore = verify._rescore
    monkeypatch.setattr(
        verify,
        "_rescore",
        lambda published, **kw: (
            rescored.append(published["config"]["eval"]) or rescore(published, **kw)
        ),
    )
    data = tmp_path / "data"

    with pytest.raises(SystemExit) as done:
        main(["Gold", "--provider=reference", "--limit=2", "--evals=ff,mc", f"--data-dir={data}"])
    assert done.value.code == 0, capsys.readouterr()
    assert rescored == []
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[-2:]] == ["ff", "mc"]


# -- a dataset of your own: published with its copy, verified without the original (issue 30.1) ---


def own_dataset_flags(server, dataset) -> list[str]:
    return [
        "--provider=live",
        "--model=cm",
        f"--base-url={server.url}/v1",
        f"--judge=live:judge-a@{server.url}/v1",
        f"--judge=live:judge-b@{server.url}/v1",
        f"--dataset=mc={dataset}",
    ]


def test_a_model_evaluated_on_a_dataset_file_of_its_own_is_published_with_a_copy_that_verify_reads(
    server, tmp_path
):
    data = tmp_path / "data"
    own = write_jsonl(tmp_path / "mc3.jsonl", MC_RECORDS)
    digest = hashlib.sha256(own.read_bytes()).hexdigest()[:12]
    flags = own_dataset_flags(server, own)

    planned = evaluate(data, "Custom", *flags, *META, "--dry-run")
    assert planned.returncode == 0, out(planned)
    assert [line.strip() for line in planned.stdout.splitlines() if "dataset " in line] == [
        f"dataset     mc3.jsonl: copied into {data / 'datasets'}/ when published (commit it with "
        "the result files)"
    ], planned.stdout
    assert not (data / "datasets").exists()

    done = evaluate(data, "Custom", *flags, *META)

    assert done.returncode == 0 and "published 'Custom'" in done.stdout, out(done)
    kept = data / "datasets" / digest / "mc3.jsonl"
    assert kept.read_bytes() == own.read_bytes()
    assert f"dataset mc3.jsonl kept as {kept}: commit it with the result files" in done.stdout, out(
        done
    )
    own.unlink()  # the maintainer's copy is gone: the repository's is what verifies

    verified = evaluate(data, "--verify")
    assert verified.returncode == 0 and "all 3 runs reproduce" in verified.stdout, out(verified)
    assert pytest_verify(data).returncode == 0
    regraded = evaluate(data, "--regrade", "--dry-run")
    assert regraded.returncode == 0 and "FAIL" not in regraded.stdout, out(regraded)
    resumed = evaluate(data, "Custom")  # the plan names the deleted file: the copy stands in
    assert resumed.returncode == 0 and "still published 'Custom'" in resumed.stdout, out(resumed)


def test_a_run_published_before_datasets_were_kept_fails_verify_in_one_line_naming_dataset(
    server, tmp_path
):
    """An older commit published the run without its copy: verify says where the file is
    missing, as before, one FAIL line and no traceback; the resume with --dataset publishes it."""
    data = tmp_path / "data"
    own = write_jsonl(tmp_path / "mc3.jsonl", MC_RECORDS)
    flags = own_dataset_flags(server, own)
    assert evaluate(data, "Custom", *flags, *META).returncode == 0
    shutil.rmtree(data / "datasets")

    verified = evaluate(data, "--verify")

    assert verified.returncode == 1 and "Traceback" not in out(verified), out(verified)
    failed = [line for line in verified.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].endswith(
        "the run used the dataset file 'mc3.jsonl', which cannot be found again; pass it with --dataset"
    ), verified.stdout
    resumed = evaluate(data, "Custom", f"--dataset=mc={own}")
    assert resumed.returncode == 0, out(resumed)
    assert (data / "datasets").is_dir()
    assert evaluate(data, "--verify").returncode == 0


def test_the_resume_with_dataset_given_the_files_new_place_publishes(server, tmp_path):
    """The dataset file was moved after its eval ran: the resume given its new place with
    --dataset reproduces that eval from its run folder, runs the others and publishes."""
    data = tmp_path / "data"
    own = write_jsonl(tmp_path / "mc3.jsonl", MC_RECORDS)
    flags = own_dataset_flags(server, own)
    assert evaluate(data, "Custom", *flags, *META, "--evals=mc").returncode == 0
    (tmp_path / "elsewhere").mkdir()
    moved = own.rename(tmp_path / "elsewhere" / own.name)  # its name is part of the run

    resumed = evaluate(
        data, "Custom", f"--dataset=mc={moved}", "--evals=mc,ff,lc"
    )  # all: the plan picked mc

    assert resumed.returncode == 0 and "published 'Custom'" in resumed.stdout, out(resumed)
    assert "mc: finished: reproduced offline from its run folder" in resumed.stdout
    assert evaluate(data, "--verify").returncode == 0
