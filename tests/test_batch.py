"""--batch: whole runs through the loopback servers' Batch APIs (OpenAI Files + Batches,
Anthropic Message Batches), as a user runs them: the same result file as a direct run at the
batch price, resume after a kill at every moment without submitting anything twice, every way a
batch or a request can end, xdist, `evaluate --status`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import openai
import pytest

from evals.providers.anthropic import _result_outcome
from evals.providers.openai import OpenAIBatch, OpenAIProvider
from evals.batch import Call, _chunks
from evals.providers import ProviderSpec, Request
from evals.site import _costs, _total
from evals.results import BATCH_PRICE, without_timing
from evals.verify import rescore
from tests.harness import ROOT, harness_command, harness_env, questions, read_result, result_files, run_harness
from tests.loopback import AnthropicServer, Fault, OpenAIServer
from tests.test_leaderboard import evaluate

MC = questions("multiple_choice")
FF = questions("freeform")


def flags(server, *extra: str, judges: str = "ab") -> list[str]:
    return ["--provider=openai", "--model=student-1", f"--base-url={server.url}/v1",
            *(f"--judge=live:judge-{x}@{server.url}/v1" for x in judges), *extra]


def run(tmp_path: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", **kwargs)


def direct_calls(server) -> int:
    """Generation requests made one by one, not through a batch."""
    return sum(r.path.endswith(("/chat/completions", "/responses", "/messages")) for r in server.requests)


def about(body: dict, question: dict) -> bool:
    return question["question"] in json.dumps(body)


def without_batch_marks(result: dict) -> dict:
    """A result file less what only a batched run has: the rows' `batched`, the summary's
    `batch` and `cost`, and timing."""
    def clean(summary):
        return {k: v for k, v in summary.items() if k not in ("batch", "cost", "timing")}
    rows = [{k: v for k, v in row.items() if k not in ("batched", "latency")} for row in result["results"]]
    return {"config": result["config"], "summary": clean(result["summary"]), "results": rows}


@pytest.fixture
def server(student):
    with OpenAIServer(student, batch_seconds=0.3) as server:
        yield server


def test_a_batch_run_writes_a_direct_runs_result_file_at_the_batch_price(server, tmp_path):
    prices = ["--price-input=2", "--price-output=8"]
    run(tmp_path / "direct", *flags(server, *prices), "-m", "multiple_choice or freeform")
    server.clear()

    done = run(tmp_path / "batch", *flags(server, *prices, "--batch-wait"), "-m", "multiple_choice or freeform")

    assert direct_calls(server) == 0, done.stdout[-2000:]
    assert server.batch_creates == 4  # multiple choice; freeform's candidate, then its two judges
    for name in ("multiple_choice", "freeform"):
        direct, batched = read_result(tmp_path / "direct" / "results", name), read_result(tmp_path / "batch" / "results", name)
        assert without_batch_marks(batched) == without_batch_marks(direct)
        assert batched["summary"]["cost"] == pytest.approx(BATCH_PRICE * direct["summary"]["cost"], abs=1e-6)
        assert batched["summary"]["batch"]["calls"] == batched["summary"]["n"]
        assert "batch" not in direct["summary"] and not any("batched" in row for row in direct["results"])
        assert rescore(result_files(tmp_path / "batch" / "results", name)[0], run_root=tmp_path / "batch" / "runs") == without_timing(batched)
    ff = read_result(tmp_path / "batch" / "results", "freeform")
    judged = [row for row in ff["results"] if row["verdicts"]]
    assert judged and all(row["batched"] == ["candidate", "judge-0", "judge-1"] for row in judged)
    assert "batch batch_" in done.stdout  # progress shown


def test_without_waiting_items_wait_and_two_reruns_collect_freeform_with_two_workers(server, tmp_path):
    server.batch_seconds = 0  # a batch ends at its first read once released; held, the second worker finds it running
    args = [*flags(server, "--batch"), "-m", "freeform", "-n", "2"]

    server.hold_batches()
    first = run(tmp_path, *args)
    assert first.returncode == 0, first.stdout[-2000:]
    assert f"{len(FF)} items wait in batches" in first.stdout and "run the same command again" in first.stdout
    assert f"{len(FF)} skipped" in first.stdout and not result_files(tmp_path / "results", "freeform")
    assert server.batch_creates == 1  # two workers, one submission

    server.release_batches()
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="fake-openai-key", max_retries=0)
    assert client.batches.retrieve(server.batches[0]["id"]).status == "completed"  # ended now, while nothing else is held
    server.hold_batches()  # the judges' batches, submitted by whichever worker comes first, stay running
    second = run(tmp_path, *args)  # collects the replies, submits the judges
    assert "items wait in batches" in second.stdout and not result_files(tmp_path / "results", "freeform")
    assert server.batch_creates == 3

    server.release_batches()
    third = run(tmp_path, *args)
    assert read_result(tmp_path / "results", "freeform")["summary"]["n"] == len(FF), third.stdout[-2000:]
    assert server.batch_creates == 3 and direct_calls(server) == 0
    assert [len(b["custom_ids"]) for b in server.batches] == [len(FF)] * 3
    assert all(len(set(b["custom_ids"])) == len(b["custom_ids"]) for b in server.batches)


def _wait_for(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the harness never got there"
        time.sleep(0.02)


def _ledger(tmp_path: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("multiple_choice/*/batches/*.json") if p.name != "attempts.json"]


# Each moment a kill can come: what the test waits for, and what it makes slow to get there.
MOMENTS = {
    "between the upload and the create call": (lambda server, tmp: any(r.path == "/v1/files" and r.method == "POST" for r in server.requests),
                                               lambda r: r.path == "/v1/files" and r.method == "POST"),
    "between the create call and its answer": (lambda server, tmp: any(r.path == "/v1/batches" and r.method == "POST" for r in server.requests),
                                               lambda r: r.path == "/v1/batches" and r.method == "POST"),
    "right after the submission is recorded": (lambda server, tmp: any(e["batch"] for e in _ledger(tmp)), None),
    "while polling": (lambda server, tmp: sum(r.path.startswith("/v1/batches/") for r in server.requests) >= 2, None),
    "while collecting": (lambda server, tmp: any(r.path.endswith("/content") for r in server.requests),
                         lambda r: r.path.endswith("/content")),
}


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_run_killed_at_any_moment_resumes_without_submitting_twice(server, tmp_path, moment):
    reached, slow = MOMENTS[moment]
    server.batch_seconds = 1.0
    if slow:
        server.inject_when(slow, Fault.slow(1.5), times=1)
    args = [*flags(server, "--batch-wait"), "-m", "multiple_choice"]
    harness = subprocess.Popen(harness_command(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results"), cwd=ROOT,
                               env=harness_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for(lambda: reached(server, tmp_path))
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    time.sleep(3.0)  # a request the harness left behind (held 1.5 s) is served meanwhile, even on a loaded machine

    done = run(tmp_path, *args)

    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), done.stdout[-2000:]
    assert server.batch_creates == 1 and server.uploads == 1 and direct_calls(server) == 0


def test_requests_a_batch_did_not_run_or_that_met_a_5xx_go_in_a_new_batch_and_a_refusal_is_the_items_api_error(server, tmp_path):
    expired, overloaded, refused, broken = MC[:4]
    server.batch_outcome_when(lambda cid, body: about(body, expired), "expired", times=1)
    server.batch_outcome_when(lambda cid, body: about(body, overloaded), 503, times=1)
    server.batch_outcome_when(lambda cid, body: about(body, refused), 400)
    server.batch_outcome_when(lambda cid, body: about(body, broken), 500)  # every time

    done = run(tmp_path, *flags(server, "--batch-wait"), "-m", "multiple_choice")

    result = read_result(tmp_path / "results", "multiple_choice")
    rows = {row["id"]: row for row in result["results"]}
    assert rows[expired["id"]]["status"] != "apiError" and rows[overloaded["id"]]["status"] != "apiError"
    assert rows[refused["id"]]["status"] == "apiError" and "HTTP 400 in batch" in rows[refused["id"]]["error"]
    assert rows[broken["id"]]["status"] == "apiError" and "in 3 batches" in rows[broken["id"]]["error"]
    assert result["summary"]["apiErrors"] == 2
    assert [len(b["custom_ids"]) for b in server.batches] == [len(MC), 3, 1], done.stdout[-2000:]
    assert "2 error" in done.stdout  # reported as errors, not wrong answers


@pytest.mark.parametrize("fate", ["expired", "failed", "cancelled"])
def test_a_batch_that_ends_badly_has_its_unrun_requests_submitted_again(server, tmp_path, fate):
    server.next_batch_ends(fate)

    done = run(tmp_path, *flags(server, "--batch-wait"), "-m", "multiple_choice")

    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["apiErrors"] == 0 and result["summary"]["n"] == len(MC), done.stdout[-2000:]
    assert server.batch_creates == 2 and server.batches[0]["status"] == fate


def test_the_responses_api_batches_and_counts_its_tokens(server, tmp_path):
    run(tmp_path / "direct", *flags(server, "--responses-api"), "-m", "multiple_choice")
    done = run(tmp_path / "batch", *flags(server, "--responses-api", "--batch-wait"), "-m", "multiple_choice")

    batched = read_result(tmp_path / "batch" / "results", "multiple_choice")
    assert server.batches[0]["endpoint"] == "/v1/responses", done.stdout[-2000:]
    assert batched["summary"]["tokens"]["input"] == 120 * len(MC)  # input_tokens, not prompt_tokens
    assert without_batch_marks(batched) == without_batch_marks(read_result(tmp_path / "direct" / "results", "multiple_choice"))


def test_anthropic_message_batches_with_errored_expired_and_overloaded_requests(student, tmp_path):
    expired, overloaded, missing = MC[:3]
    with AnthropicServer(student, batch_seconds=0.3) as server:
        server.batch_outcome_when(lambda cid, body: about(body, expired), "expired", times=1)
        server.batch_outcome_when(lambda cid, body: about(body, overloaded), 529, times=1)
        server.batch_outcome_when(lambda cid, body: about(body, missing), 404)
        env = harness_env(ANTHROPIC_API_KEY="fake-anthropic-key-for-tests")
        done = run(tmp_path, "--provider=anthropic", "--model=claude-student", f"--base-url={server.url}", "--batch-wait",
                   "-m", "multiple_choice", env=env)

        rows = {row["id"]: row for row in read_result(tmp_path / "results", "multiple_choice")["results"]}
        assert direct_calls(server) == 0 and server.batch_creates == 2, done.stdout[-2000:]
    assert rows[expired["id"]]["status"] != "apiError" and rows[overloaded["id"]]["status"] != "apiError"
    assert rows[missing["id"]]["status"] == "apiError" and "not_found_error" in rows[missing["id"]]["error"]
    assert all(row["batched"] == ["candidate"] for row in rows.values() if row["status"] != "apiError")


class NoBatchServer(OpenAIServer):
    """An OpenAI-compatible endpoint without the Files and Batch APIs (llama.cpp, most proxies)."""

    routes = {route: name for route, name in OpenAIServer.routes.items() if "/files" not in route[1] and "/batches" not in route[1]}


def test_an_endpoint_without_a_batch_api_is_one_line_and_nothing_is_asked(student, tmp_path):
    with NoBatchServer(student) as server:
        done = run(tmp_path, "--provider=live", "--model=student-1", f"--base-url={server.url}/v1", "--batch", "-m", "multiple_choice")
        assert direct_calls(server) == 0
    assert done.returncode == 4
    assert "does not speak the OpenAI Batch API" in done.stdout + done.stderr and "Traceback" not in done.stdout + done.stderr


def test_the_reference_provider_has_no_batch_api(tmp_path):
    done = run(tmp_path, "--provider=reference", "--batch", "-m", "multiple_choice")
    assert done.returncode == 4 and "--batch: --provider reference has no Batch API" in done.stderr


def test_evaluate_status_shows_each_batch_and_a_bare_rerun_collects_it(server, tmp_path):
    data = tmp_path / "data"
    server.batch_seconds = 0
    submitted = evaluate(data, "Student", *flags(server), "--evals=mc", "--no-build", "--batch")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert "waiting in batches" in submitted.stdout

    status = evaluate(data, "Student", "--status")
    (line,) = [line.strip() for line in status.stdout.splitlines() if "batch_" in line]
    assert line.startswith(f"batch {server.batches[0]['id']}: completed, {len(MC)} completed, 0 failed of {len(MC)}")

    keyless = subprocess.run([*status.args], cwd=ROOT, env={**harness_env(), "OPENAI_API_KEY": ""}, capture_output=True, text=True)
    assert "cannot ask the batches' state" in keyless.stdout and "OPENAI_API_KEY" in keyless.stdout

    collected = evaluate(data, "Student", "--evals=mc", "--no-build")  # no --batch: what waits is collected, never asked again
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert server.batch_creates == 1 and direct_calls(server) == 0
    assert "finished: mc" in collected.stdout


# -- result lines, as the APIs write them ------------------------------------------------------


@pytest.fixture
def openai_batch(monkeypatch) -> OpenAIBatch:
    monkeypatch.setenv("OPENAI_API_KEY", "fake-openai-key-for-tests")
    return OpenAIProvider(ProviderSpec("openai", "gpt-4o-mini", base_url="http://127.0.0.1:9/v1")).batch_api()


def test_an_openai_error_line_in_either_shape_is_the_requests_error(openai_batch):
    refused = {"id": "batch_req_1", "custom_id": "c1", "error": None,
               "response": {"status_code": 400, "request_id": "r", "body": {"error": {"message": "Unsupported value: 'system'",
                                                                                       "type": "invalid_request_error", "param": None, "code": None}}}}
    expired = {"id": "batch_req_123", "custom_id": "c2", "response": None,
               "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}
    refusal, unrun = openai_batch._outcome(refused), openai_batch._outcome(expired)
    assert refusal.kind == "bad_request" and "Unsupported value" in str(refusal)
    assert unrun.kind == "batch_not_run" and "expired" in str(unrun)


def test_an_anthropic_errored_result_is_read_by_its_nested_type():
    errored = {"type": "errored", "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "r"}}
    outcome = _result_outcome(errored)
    assert outcome.kind == "server_error" and "overloaded_error" in str(outcome)  # retried, as a 529 over HTTP is
    assert _result_outcome({"type": "canceled"}).kind == "batch_not_run"
    assert _result_outcome({"type": "succeeded", "message": {"content": "x"}}).kind == "malformed_response"


class _Limits:
    """The two limits `_chunks` reads off a Batch API, and its line shape."""

    def __init__(self, max_requests: int, max_bytes: int):
        self.max_requests, self.max_bytes = max_requests, max_bytes

    def line(self, custom_id, request):
        return {"custom_id": custom_id, "body": {"prompt": request.prompt}}


@pytest.mark.parametrize("max_requests, max_bytes, sizes", [(15, 10**9, [15, 15, 10]), (10**6, 1000, None)])
def test_calls_are_split_into_batches_within_the_apis_request_and_byte_limits(max_requests, max_bytes, sizes):
    calls = [Call(f"q{i}", "candidate", None, Request(prompt="x" * 90)) for i in range(40)]
    limits = _Limits(max_requests, max_bytes)
    chunks = list(_chunks(limits, calls))
    assert [call for chunk in chunks for _, call in chunk] == calls
    assert sizes is None or [len(chunk) for chunk in chunks] == sizes
    for chunk in chunks:
        assert sum(len(json.dumps(limits.line(cid, call.request)).encode()) + 1 for cid, call in chunk) <= max_bytes
    assert len({cid for chunk in chunks for cid, _ in chunk}) == len(calls)


def test_the_boards_suite_cost_prices_batched_tokens_at_the_share_the_result_file_records():
    plain = {"tokens": {"input": 1_000_000, "output": 1_000_000}}
    batched = {**plain, "batch": {"calls": 10, "tokens": {"input": 1_000_000, "output": 500_000}, "priceFactor": 0.5}}
    entry = {"name": "m", "price": {"input": 2.0, "output": 8.0}}

    def suite_cost(summaries):
        costs, _ = _costs(entry, {key: {"summary": summary} for key, summary in summaries.items()})
        return _total(entry, costs)

    cost = suite_cost({"freeform": plain, "multipleChoice": plain, "leetcode": {"overall": plain}})
    discounted = suite_cost({"freeform": batched, "multipleChoice": plain, "leetcode": {"overall": plain}})
    assert cost == 30.0 and discounted == 30.0 - 0.5 * 2.0 - 0.25 * 8.0
