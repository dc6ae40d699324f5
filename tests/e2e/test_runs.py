"""Whole runs of the harness, as a user starts them, against loopback provider servers:
result files, resume, xdist, the error gate, secrets, corrupt caches, --force, fatal errors, a
failed judge call that keeps the candidate's usage, and a file an older commit wrote still
verifying. The writer's refusal of NaN is tests/unit/test_runs.py.

`pytest` starts warm (tests/support/warm.py); the run killed midway is a real exec, SIGKILLed and
resumed, and the older commit's run is a real exec of its own code (`git archive`, PYTHONPATH).
The servers run on threads of the test."""

from __future__ import annotations

import dataclasses
import json
import shutil
import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from evals.results import without_timing
from tests.support.harness import (
    API_KEY,
    ROOT,
    Student,
    harness_command,
    harness_env,
    questions,
    read_result,
    result_files,
    run_harness,
    start,
    wait_for,
)
from tests.support.loopback import OpenAIServer, Reply, set_field
from tests.support.old_code import extract

N_MC = len(questions("multiple_choice"))
N_FF = len(questions("freeform"))


def test_wrong_fails_gates_on_a_perfect_score(server, tmp_path):
    args = [*model_args(server), "-m", "multiple_choice"]
    gated = run_harness(
        *args, "--wrong-fails", run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )
    assert gated.returncode == 1, gated.stdout[-3000:]
    counts = gated.stdout.strip().splitlines()[-1]
    assert " failed" in counts and "wrong" not in counts, counts
    assert "WRONG tests_evals/" in gated.stdout  # listed once, in the wrong answers' section


def test_ctrl_c_ends_a_run_in_one_line_and_the_rerun_says_what_it_read_back(tmp_path):
    """Ctrl-C printed pytest's KeyboardInterrupt banner and a line of threading.py; the rerun
    did not say how much came from the run folder; the requests in flight were dropped, to be
    paid again by the rerun (24 asked, 16 kept): now they get a grace to be stored."""
    with OpenAIServer(Student(), latency=0.3) as server:
        command = harness_command(
            *model_args(server),
            "-m",
            "multiple_choice",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        process = start(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(lambda: len(server.requests) >= 12, "the twelfth request")
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole group
        stdout, _ = process.communicate(timeout=120)
        kept = len(list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json")))
        asked = len(server.requests)
        assert kept == asked, f"{asked} asked before the interrupt, {kept} kept"
        again = run_harness(
            *model_args(server),
            "-m",
            "multiple_choice",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        asked_again = len(server.requests) - asked

    assert process.returncode == 2, stdout[-3000:]
    (line,) = [line for line in stdout.splitlines() if "interrupted" in line]
    assert line.startswith("! interrupted: ") and f"of {N_MC} items answered and kept" in line, line
    assert "the same command resumes" in line
    assert "KeyboardInterrupt" not in stdout and "threading.py" not in stdout, stdout[-3000:]
    assert again.returncode == 0, again.stdout[-3000:]
    assert (
        f"{kept} of {N_MC} answers read back from the run folder, {N_MC - kept} asked now"
        in again.stdout
    )
    assert asked_again == N_MC - kept  # only what was not kept is asked again


def test_a_ctrl_c_waits_for_slow_replies_in_flight_saying_so_once(tmp_path):
    """Replies that take seconds: the wait for them is said in one line, once, however many
    asking children wait (64 in flight: one child a core), and every request asked is kept."""
    with OpenAIServer(Student(), latency=2.0) as server:
        command = harness_command(
            *model_args(server),
            "-m",
            "multiple_choice",
            "--concurrency=64",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        process = start(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(lambda: len(server.requests) >= N_MC, "every item's request")
        os.killpg(process.pid, signal.SIGINT)
        stdout, _ = process.communicate(timeout=120)
        kept = len(list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json")))

    assert process.returncode == 2, stdout[-3000:]
    assert stdout.count("keeping the replies in flight") == 1, stdout[-3000:]
    assert kept == len(server.requests) == N_MC


def test_a_rerun_of_some_items_counts_only_their_answers_as_read_back(tmp_path):
    """A rerun of one item of a finished run said "39 of 1 answers read back": it counted
    every record in the run folder, not those of the items it ran."""
    folders = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    first = run_harness("--provider=reference", "-m", "multiple_choice", **folders)
    one = run_harness("--provider=reference", "-m", "multiple_choice", "-k", "mc-001", **folders)

    assert first.returncode == 0 and one.returncode == 0, one.stdout[-3000:]
    assert "answers read back" not in first.stdout
    assert "1 of 1 answers read back from the run folder, 0 asked now" in one.stdout, one.stdout


def _group_alive(group: int) -> bool:
    """Whether a process of the group `group` still runs (a zombie, which an init that reaps
    nothing may keep, does not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            return True
    return False


def model_args(server, *extra):
    judges = [f"--judge=live:judge-{x}@{server.url}/v1" for x in "abc"]
    return [
        "--provider=openai",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        *judges,
        *extra,
    ]


def test_a_run_writes_one_result_file_per_eval_with_config_summary_and_rows(server, tmp_path):
    """Wrong answers are their own outcome (W, "N wrong"): the run exits 0, as every item was
    answered; --wrong-fails keeps the old meaning (test_wrong_fails_gates_on_a_perfect_score)."""
    done = run_harness(
        *model_args(server, "--price-input=1.25", "--price-output=10"),
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode == 0, done.stdout[-3000:]  # every item answered, some wrongly
    counts = done.stdout.strip().splitlines()[-1]
    assert " wrong" in counts and " passed" in counts and "failed" not in counts, counts
    assert "W" in done.stdout.split("wrong answers")[0]  # the progress shows each as W
    mc = read_result(tmp_path / "results", "multiple_choice")
    assert mc["config"]["model"] == "student-1" and mc["config"]["provider"] == "openai"
    assert mc["summary"]["n"] == N_MC and mc["summary"]["correct"] == N_MC - len(range(0, N_MC, 5))
    assert mc["summary"]["apiErrors"] == 0 and mc["summary"]["unparseable"] == 0
    assert mc["summary"]["tokens"]["input"] == 120 * N_MC
    assert mc["summary"]["cost"] == pytest.approx((120 * N_MC * 1.25 + 30 * N_MC * 10) / 1e6)
    assert [r["id"] for r in mc["results"]] == sorted(q["id"] for q in questions("multiple_choice"))
    assert mc["publishable"] is True

    ff = read_result(tmp_path / "results", "freeform")
    wrong = len(range(0, N_FF, 4))
    assert ff["summary"]["correct"] == N_FF - wrong
    sloppy = len(range(0, N_FF, 7))  # judge-c's verdicts without a verdict line
    assert ff["summary"]["judgeUnparseable"] == sloppy
    assert [j["model"] for j in ff["config"]["judges"]] == ["judge-a", "judge-b", "judge-c"]
    assert ff["summary"]["judgeTokens"]["input"] == 200 * 3 * (N_FF - wrong) + 200 * 3 * wrong
    # the unparseable verdicts are over the 5% gate: not publishable, and the file says why
    assert ff["publishable"] is False and "over the 5% gate" in ff["notPublishable"][0]
    assert "accuracy" in done.stdout and "result file:" in done.stdout
    assert (
        f"{N_MC - len(range(0, N_MC, 5))} passed" not in done.stdout
    )  # mc + ff items both counted
    # Wrong answers: one line each for the first 20, not pytest's per-failure sections.
    assert "= FAILURES =" not in done.stdout and "FAILED tests_evals" not in done.stdout
    assert re.search(r"\d+ passed, \d+ wrong", done.stdout)  # still counted
    wrong = [line for line in done.stdout.splitlines() if line.startswith("WRONG ")]
    assert len(wrong) == 20, done.stdout[-3000:]
    assert any(
        re.fullmatch(
            r"WRONG tests_evals/test_robloxqa.py::test_multiple_choice\[mc-\d+\] - answered [A-D], expected [A-D]",
            line,
        )
        for line in wrong
    )
    assert re.search(
        r"\.\.\. and \d+ more: every answer is a row of its eval's result file", done.stdout
    )


def test_a_rerun_of_a_finished_run_asks_nothing_and_writes_the_same_file(server, student, tmp_path):
    args = model_args(server)
    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    first = without_timing(read_result(tmp_path / "results", "freeform"))
    asked = len(server.requests)

    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert len(server.requests) == asked
    assert without_timing(read_result(tmp_path / "results", "freeform")) == first


def test_xdist_and_serial_runs_write_the_same_result_files(server, tmp_path):
    serial = run_harness(
        *model_args(server), "-n", "0", run_dir=tmp_path / "a", results_dir=tmp_path / "ra"
    )
    parallel = run_harness(
        *model_args(server), "-n", "2", run_dir=tmp_path / "b", results_dir=tmp_path / "rb"
    )

    assert serial.returncode == parallel.returncode == 0
    for name in ("multiple_choice", "freeform"):
        assert without_timing(read_result(tmp_path / "ra", name)) == without_timing(
            read_result(tmp_path / "rb", name)
        )
    assert (
        "xdist does not speed up" not in serial.stdout + parallel.stdout
    )  # LeetCode's grading ran in the workers


def test_n_for_evals_that_only_wait_on_the_model_runs_them_in_one_process_and_says_so(
    server, tmp_path
):
    """Workers would each start pytest again and keep no more requests in flight (-m picks
    only multiple choice here, so no item can need them)."""
    done = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        "--limit=4",
        "-n",
        "2",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == 4, done.stdout[
        -3000:
    ]
    assert "[gw0]" not in done.stdout and "workers" not in done.stdout.split("eval results")[0], (
        done.stdout[-3000:]
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("-n 2: ")]
    assert line.startswith("-n 2: these evals ran in one process (their items wait on the model"), (
        line
    )


def test_an_xdist_run_whose_selection_only_waits_on_the_model_says_to_run_it_without_n(
    server, tmp_path
):
    """-k picks the items after the workers started: they ran, and the run says they did not help."""
    done = run_harness(
        *model_args(server),
        "-k",
        "mc-00",
        "-n",
        "2",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert "2 workers [9 items]" in done.stdout and "note:" not in done.stdout + done.stderr, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    (line,) = [line for line in done.stdout.splitlines() if "xdist does not speed up" in line]
    assert line.startswith("-n 2: ") and "run them without -n" in line


def test_a_run_killed_midway_resumes_without_asking_finished_items_again(student, tmp_path):
    with OpenAIServer(student, latency=0.15) as server:
        command = harness_command(
            *model_args(server),
            "-m",
            "multiple_choice",
            "--concurrency=2",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        harness = subprocess.Popen(
            command,
            cwd=ROOT,
            env=harness_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(lambda: len(server.requests) >= 12, "the run's twelfth request")
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        # Its asking child, told by its stdin's end, stores the replies in flight, then ends.
        wait_for(lambda: not _group_alive(harness.pid), "the asking child to end")
        calls = tmp_path / "runs" / "multiple_choice"
        finished = {p.parent.name for p in calls.glob("*/calls/*/candidate.json")}
        before = len(server.requests)
        assert 8 <= len(finished) < N_MC
        assert len(finished) == before  # nothing asked before the kill was lost

        done = run_harness(
            *model_args(server),
            "-m",
            "multiple_choice",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )

        asked_again = [q for r in server.requests[before:] if (q := student.question_of(r.body))]
    assert not finished & set(asked_again)
    assert len(asked_again) == N_MC - len(finished)
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == N_MC, (
        done.stdout[-2000:]
    )


def test_api_errors_are_reported_as_errors_counted_and_gate_publishing(server, student, tmp_path):
    failing = {q["question"] for q in questions("multiple_choice")[:3]}  # 3 of 40: 7.5%
    server.fail_when(
        lambda r: any(text in r.body["messages"][-1]["content"] for text in failing),
        400,
        error="invalid_request_error",
    )

    done = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert "3 errors" in done.stdout.splitlines()[-1]
    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["apiErrors"] == 3
    assert result["publishable"] is False
    assert "3 of 40 answers failed" in done.stdout and "--allow-errors" in done.stdout
    errors = [r for r in result["results"] if r["status"] == "apiError"]
    assert all(r["error"].startswith("bad_request: HTTP 400") for r in errors)

    assert "allowErrors" not in result  # a publishing decision, recorded in models.json when taken
    alone = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        "--allow-errors",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert alone.returncode == 4 and "use it with --publish NAME" in alone.stderr


def test_failed_calls_are_retried_by_the_next_run(server, student, tmp_path):
    failing = questions("multiple_choice")[0]["question"]
    server.fail_when(lambda r: failing in r.body["messages"][-1]["content"], 400, times=1)
    run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 1
    before = len(server.requests)

    run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert len(server.requests) == before + 1
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 0


def test_no_api_key_is_written_anywhere(server, tmp_path):
    server.fail_next(
        2,
        401,
        body={
            "error": {
                "message": f"Incorrect API key provided: {API_KEY}",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
    )
    done = run_harness(
        *model_args(server), run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )
    run_harness(*model_args(server), run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > N_MC
    assert not [p for p in written if API_KEY in p.read_text(errors="replace")]
    assert API_KEY not in done.stdout + done.stderr


def test_a_rejected_key_stops_the_run_with_one_message(server, tmp_path):
    server.fail_next(100, 401, error="invalid_api_key")

    done = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode != 0
    assert "check the API key" in done.stdout
    assert len(server.requests) < 20  # stopped, not one failure per item
    assert not result_files(tmp_path / "results", "multiple_choice")


def test_a_spent_quota_ends_the_run_with_a_message_and_the_rerun_resumes(server, tmp_path):
    server.fail_when(lambda r: True, error="insufficient_quota", times=1)

    done = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        "--concurrency=1",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode != 0 and "add credit" in done.stdout
    resumed = run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 0, (
        resumed.stdout[-2000:]
    )


def test_a_corrupt_cache_record_is_reported_kept_aside_and_redone(server, tmp_path):
    args = model_args(server, "-m", "multiple_choice")
    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    (record,) = (tmp_path / "runs").glob("multiple_choice/*/calls/mc-002/candidate.json")
    record.write_text(record.read_text()[:40])  # a write cut short
    (empty,) = (tmp_path / "runs").glob("multiple_choice/*/calls/mc-003/candidate.json")
    empty.write_text(
        ""
    )  # renamed into place before its data reached the disk (records are not fsynced), then a power cut
    before = len(server.requests)

    done = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert (
        "corrupt cache record" in done.stdout
        and "mc-002" in done.stdout
        and "mc-003" in done.stdout
    )
    assert len(server.requests) == before + 2
    assert list(record.parent.glob("candidate.corrupt-*")) and list(
        empty.parent.glob("candidate.corrupt-*")
    )
    assert json.loads(record.read_text())["response"]["text"].endswith(
        "Answer: " + questions("multiple_choice")[1]["answer"]
    )
    assert json.loads(empty.read_text())["response"]["text"].endswith(
        "Answer: " + questions("multiple_choice")[2]["answer"]
    )


def test_a_resume_never_writes_through_a_link_out_of_the_run_dir(server, tmp_path):
    """An item's folder linked outside --run-dir: its record is not written there; the run
    stops in one line naming the link and the fix, every record kept so far in place."""
    args = model_args(server, "-m", "multiple_choice")
    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    (item,) = (tmp_path / "runs").glob("multiple_choice/*/calls/mc-002")
    shutil.rmtree(item)
    outside = tmp_path / "outside"
    outside.mkdir()
    item.symlink_to(outside, target_is_directory=True)
    records = sorted((tmp_path / "runs").rglob("candidate.json"))

    done = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-2000:]  # stopped: Interrupted
    assert list(outside.iterdir()) == []
    said = [line for line in (done.stdout + done.stderr).splitlines() if str(item) in line]
    assert said and all(
        f"{item} is a symlink that leads out of {tmp_path / 'runs'}" in line
        and "replace the link with a folder" in line
        and "free space" not in line  # what a full disk is told
        for line in said
    ), done.stdout[-3000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert sorted((tmp_path / "runs").rglob("candidate.json")) == records


def test_force_starts_over_and_keeps_the_old_run_folder(server, tmp_path):
    args = model_args(server, "-m", "multiple_choice")
    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    before = len(server.requests)

    done = run_harness(
        *args, "--force", run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )

    assert len(server.requests) == before + N_MC
    kept = list((tmp_path / "runs" / "multiple_choice").glob("*.replaced-*"))
    assert len(kept) == 1 and "previous run folder is kept" in done.stdout
    assert len(list(kept[0].glob("calls/*/candidate.json"))) == N_MC


def test_a_partial_selection_writes_no_result_file(server, tmp_path):
    done = run_harness(
        *model_args(server),
        "-k",
        "mc-001 or mc-002",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert "partial run: 2 of 40" in done.stdout
    assert not result_files(tmp_path / "results", "multiple_choice")
    assert (
        "WRONG tests_evals/test_robloxqa.py::test_multiple_choice[mc-001] - answered" in done.stdout
    )


def test_the_reference_provider_runs_offline_through_the_judges_and_is_never_publishable(tmp_path):
    done = run_harness(
        "--provider=reference", run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )

    assert done.returncode == 0, done.stdout[-2000:]
    for name in ("multiple_choice", "freeform"):
        result = read_result(tmp_path / "results", name)
        assert result["summary"]["accuracy"] == 1.0
        assert result["publishable"] is False
    freeform = read_result(tmp_path / "results", "freeform")
    assert freeform["summary"]["judgeAgreement"] == 1.0
    assert {v["verdict"] for r in freeform["results"] for v in r["verdicts"]} == {"CORRECT"}


def test_force_with_a_marker_starts_over_only_the_selected_eval(server, tmp_path):
    run_harness(
        *model_args(server),
        "-m",
        "multiple_choice or freeform",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    run_harness(
        *model_args(server),
        "-m",
        "multiple_choice",
        "--force",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert list((tmp_path / "runs" / "multiple_choice").glob("*.replaced-*"))
    assert not list((tmp_path / "runs" / "freeform").glob("*.replaced-*"))


def test_one_permanent_failure_per_eval_is_counted_and_every_result_file_is_written(
    server, student, tmp_path
):
    """An API error row has no score: each eval's summary (leetcode's bands too) must still count it."""
    failing = {
        questions("multiple_choice")[0]["id"],
        questions("freeform")[0]["id"],
        student.lc[0]["task_id"],
    }
    server.fail_when(
        lambda r: student.question_of(r.body) in failing, 400, error="invalid_request_error"
    )

    done = run_harness(
        *model_args(server), run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
    )

    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-3000:]
    for name in ("multiple_choice", "freeform", "leetcode"):
        result = read_result(tmp_path / "results", name)
        summary = result["summary"].get("overall", result["summary"])
        assert summary["apiErrors"] == 1, name
    leetcode = read_result(tmp_path / "results", "leetcode")["summary"]
    band = student.lc[0]["difficulty"].lower()
    assert (
        leetcode[band]["apiErrors"] == 1
        and sum(leetcode[b]["n"] for b in ("easy", "medium", "hard")) == leetcode["overall"]["n"]
    )


def test_replies_of_the_wrong_shape_are_retried_and_a_cut_emoji_is_kept_read_back_and_scored(
    student, tmp_path
):
    mc = questions("multiple_choice")
    broken_once = {  # each question's first reply is of the wrong shape, its retry a good one
        mc[1]["question"]: set_field("choices.0.message", None),
        mc[2]["question"]: set_field("choices.0.message.content", 42),
        mc[3]["question"]: set_field("choices", []),
        mc[4]["question"]: set_field("usage.prompt_tokens", "12"),
    }
    lock = threading.Lock()

    def responder(request):
        answer = student(request)
        prompt = request.body["messages"][-1]["content"]
        with lock:
            reshape = next((broken_once.pop(q) for q in list(broken_once) if q in prompt), None)
        if reshape:
            return dataclasses.replace(answer, reshape=reshape)
        if mc[6]["question"] in prompt:  # a reply cut in the middle of an emoji's surrogate pair
            return dataclasses.replace(answer, text=answer.text + " \ud83d")
        if mc[7]["question"] in prompt:  # usage the server left out: zero tokens, not a crash
            return dataclasses.replace(answer, reshape=set_field("usage.prompt_tokens", None))
        return answer

    with OpenAIServer(responder) as server:
        args = model_args(server, "-m", "multiple_choice")
        done = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        asked = [q for r in server.requests if (q := student.question_of(r.body))]
        first = read_result(tmp_path / "results", "multiple_choice")

        rerun = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        asked_again = len(server.requests) - len(asked)

    assert first["summary"]["n"] == N_MC and first["summary"]["apiErrors"] == 0, done.stdout[-3000:]
    assert sorted(q for q in set(asked) if asked.count(q) > 1) == [
        q["id"] for q in mc[1:5]
    ]  # each asked twice
    rows = {r["id"]: r for r in first["results"]}
    assert (
        rows[mc[6]["id"]]["answer"] == mc[6]["answer"] and rows[mc[6]["id"]]["status"] == "correct"
    )
    assert rows[mc[7]["id"]]["usage"]["input"] == 0
    assert first["summary"]["tokens"]["input"] == 120 * (N_MC - 1)
    (record,) = (tmp_path / "runs").glob(f"multiple_choice/*/calls/{mc[6]['id']}/candidate.json")
    assert json.loads(record.read_bytes().decode("utf-8"))["response"]["text"].endswith(
        "Answer: " + mc[6]["answer"] + " \\ud83d"
    )

    assert asked_again == 0, rerun.stdout[-3000:]
    assert without_timing(read_result(tmp_path / "results", "multiple_choice")) == without_timing(
        first
    )


POISONED = {  # a field of the wrong type in a record that parses: each is corrupt, moved aside, asked again
    "text a number": lambda r: r["response"].update(text=5),
    "input tokens null": lambda r: r["response"]["usage"].update(input=None),
    "output tokens a string": lambda r: r["response"]["usage"].update(output="7"),
    "reasoning tokens negative": lambda r: r["response"]["usage"].update(reasoning=-1),
    "latency a string": lambda r: r["response"].update(latency="fast"),
    "reasoning a list": lambda r: r["response"].update(reasoning=["x"]),
    "request a list": lambda r: r.update(request=[]),
    "an error whose message is a number": lambda r: (
        r.update(error={"kind": "bad_request", "status": 400, "message": 3}, session="s")
        or r.pop("response")
    ),
}


def test_cache_records_of_the_wrong_types_are_moved_aside_and_asked_again(server, tmp_path):
    args = model_args(server, "-m", "multiple_choice")
    run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    first = read_result(tmp_path / "results", "multiple_choice")
    poisoned = {}
    for (name, poison), question in zip(POISONED.items(), questions("multiple_choice")[1:]):
        (record,) = (tmp_path / "runs").glob(
            f"multiple_choice/*/calls/{question['id']}/candidate.json"
        )
        data = json.loads(record.read_text())
        poison(data)
        record.write_text(json.dumps(data))
        poisoned[question["id"]] = record
    before = len(server.requests)

    done = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert done.stdout.count("corrupt cache record") == len(POISONED), done.stdout[-3000:]
    assert len(server.requests) == before + len(POISONED)
    for record in poisoned.values():
        assert list(record.parent.glob("candidate.corrupt-*"))
        assert isinstance(json.loads(record.read_text())["response"]["text"], str)
    assert without_timing(read_result(tmp_path / "results", "multiple_choice")) == without_timing(
        first
    )


CANDIDATE_KEY = "fake-candidate-key-for-runs"


def test_no_configured_key_is_written_or_printed_when_the_server_echoes_it(student, tmp_path):
    """The candidate's key and the judges' (API_KEY, for the openai judges) echoed in replies,
    reasoning and error messages: none reaches a file under the run or results folders, the
    junit report or the terminal."""
    mc, ff = questions("multiple_choice"), questions("freeform")

    def echo(request):
        prompt = request.body["messages"][-1]["content"]
        if mc[3]["question"] in prompt:
            message = f"Incorrect API key provided: {request.api_key} (the judges use {API_KEY})"
            return Reply(
                400,
                {
                    "error": {
                        "message": message,
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        answer = student(request)
        leak = (
            f"The key I was called with is {request.api_key}; the other one "
            f"is {CANDIDATE_KEY if request.api_key == API_KEY else API_KEY}."
        )
        return dataclasses.replace(
            answer, text=f"{leak}\n{answer.text}", reasoning=f"Thinking with {request.api_key}."
        )

    with OpenAIServer(echo) as server:
        judges = [f"--judge=openai:judge-{x}@{server.url}/v1" for x in "abc"]
        args = [
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            "--api-key-env=CANDIDATE_KEY",
            *judges,
            "-m",
            "multiple_choice or freeform",
            "-rA",
            f"--junitxml={tmp_path / 'runs' / 'junit.xml'}",
        ]
        env = harness_env(CANDIDATE_KEY=CANDIDATE_KEY)
        done = run_harness(
            *args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", env=env
        )
        again = run_harness(
            *args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", env=env
        )
        keys_sent = {r.api_key for r in server.requests}

    assert keys_sent == {CANDIDATE_KEY, API_KEY}  # both keys were echoed back
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 1, (
        done.stdout[-3000:]
    )
    assert read_result(tmp_path / "results", "freeform")["summary"]["n"] == len(ff)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > N_MC + N_FF * 4 and (tmp_path / "runs" / "junit.xml") in written
    for key in (CANDIDATE_KEY, API_KEY):
        assert not [p for p in written if key in p.read_text(errors="replace")]
        assert key not in done.stdout + done.stderr + again.stdout + again.stderr
    record = next((tmp_path / "runs").glob(f"multiple_choice/*/calls/{mc[0]['id']}/candidate.json"))
    assert "<redacted>" in json.loads(record.read_text())["response"]["reasoning"]
    assert "Incorrect API key provided: <redacted>" in done.stdout


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_an_eval_run_ends_with_its_results_not_with_noise_about_items_it_never_had(
    tmp_path, workers
):
    """-m picks one eval: the others make no empty item to deselect, and syrupy (verify mode's)
    neither reports nor warns about snapshots an eval run never takes."""
    done = run_harness(
        "--provider=reference",
        "-m",
        "multiple_choice",
        *workers,
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    count = len(questions("multiple_choice"))
    assert done.returncode == 0, done.stdout[-2000:]
    assert f"collected {count} items\n" in done.stdout and "deselected" not in done.stdout
    assert (
        "snapshot" not in done.stdout + done.stderr and "Warning" not in done.stdout + done.stderr
    )
    assert done.stdout.splitlines()[-1].strip("= ").startswith(f"{count} passed in ")


def judge_prompt_of(request, model: str) -> bool:
    body = request.body or {}
    return body.get("model") == model and "VERDICT: CORRECT" in body["messages"][-1]["content"]


@pytest.mark.parametrize("failing", ["judge-b", "judge-c"])
def test_a_row_whose_judge_call_fails_keeps_the_candidates_usage_in_the_summary_and_cost(
    server, tmp_path, failing
):
    """Every judge call of one judge is refused (400): each freeform row is an API error, and
    still counts the candidate's 80 + 40 tokens a reply; the cost is of every answer paid for."""
    server.fail_when(lambda r: judge_prompt_of(r, failing), 400)
    done = run_harness(
        *model_args(server, "--price-input=1", "--price-output=10"),
        "-m",
        "freeform",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    ff = read_result(tmp_path / "results", "freeform")
    assert ff["summary"]["apiErrors"] == N_FF, done.stdout[-2000:]
    assert (
        ff["summary"]["tokens"]["input"] == 80 * N_FF
        and ff["summary"]["tokens"]["output"] == 40 * N_FF
    )
    assert ff["summary"]["cost"] == pytest.approx((80 * N_FF * 1 + 40 * N_FF * 10) / 1e6)
    assert all(r["usage"]["input"] == 80 and r["finishReason"] for r in ff["results"])


def test_a_row_keeps_its_candidates_usage_when_one_items_judge_fails_and_loses_none_when_the_candidate_fails(
    server, tmp_path
):
    """One item's judge call fails, another item's candidate call fails: the first row counts
    its candidate's tokens, the second has none to count (nothing was answered)."""
    judged, asked = questions("freeform")[1], questions("freeform")[2]
    server.fail_when(
        lambda r: (
            judge_prompt_of(r, "judge-a")
            and judged["question"] in r.body["messages"][-1]["content"]
        ),
        400,
    )
    server.fail_when(
        lambda r: (
            r.body.get("model") == "student-1"
            and asked["question"] in r.body["messages"][-1]["content"]
        ),
        400,
    )
    run_harness(
        *model_args(server),
        "-m",
        "freeform",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    ff = read_result(tmp_path / "results", "freeform")
    rows = {r["id"]: r for r in ff["results"]}
    assert rows[judged["id"]]["status"] == rows[asked["id"]]["status"] == "apiError"
    assert rows[judged["id"]]["usage"]["input"] == 80
    assert "usage" not in rows[asked["id"]]
    assert ff["summary"]["tokens"]["input"] == 80 * (N_FF - 1)
    assert ff["resultFormat"] == 3


# The last commit whose rows dropped the candidate's usage when a judge call failed (format 2).
BEFORE_FORMAT_3 = "9ddb890"


def test_a_file_written_before_rows_kept_their_usage_still_verifies_and_todays_does_too(
    server, tmp_path
):
    """The same run folder, a judge refused on every item: the file the code of 9ddb890 wrote
    (no candidate usage on those rows) and the file today's code writes both verify."""
    from evals.verify import compare

    old = extract(BEFORE_FORMAT_3, tmp_path / "old")
    server.fail_when(lambda r: judge_prompt_of(r, "judge-b"), 400)
    command = harness_command(
        *model_args(server, "--price-input=1", "--price-output=10"),
        "-m",
        "freeform",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "before",
    )
    subprocess.run(
        command,
        cwd=old,
        env=harness_env(PYTHONPATH=str(old)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    (before,) = result_files(tmp_path / "before", "freeform")
    assert (
        "resultFormat" in json.loads(before.read_text())
        and json.loads(before.read_text())["summary"]["tokens"]["input"] == 0
    )

    run_harness(
        *model_args(server, "--price-input=1", "--price-output=10"),
        "-m",
        "freeform",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "today",
    )
    (today,) = result_files(tmp_path / "today", "freeform")
    assert compare(before, run_root=tmp_path / "runs") == ("ok", "")
    assert compare(today, run_root=tmp_path / "runs") == ("ok", "")
