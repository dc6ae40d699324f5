"""--batch: whole runs through the loopback servers' Batch APIs (OpenAI Files + Batches,
Anthropic Message Batches): a direct run's result file at the batch price, resume after a kill at
every moment without submitting anything twice, every way a batch, a request or a submission can
end, endpoints without a Batch API, a submission found by name, xdist, `evaluate --status`. The
result lines alone are tests/unit/test_batch.py.

`pytest` and `evaluate` start warm (tests/support/warm.py), each still a process with its own exit
status, environment and streams; a run to be killed is a real exec, SIGKILLed mid-run and resumed,
since what a killed process leaves behind is the point. The servers run on threads of the test."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import openai
import pytest

from evals.providers._batch import FIND_PAGES
from evals.results import BATCH_PRICE, without_timing
from evals.verify import rescore
from tests.support.board import evaluate
from tests.support.harness import (
    ROOT,
    harness_command,
    harness_env,
    questions,
    read_result,
    result_files,
    run_cli,
    run_harness,
    wait_for,
)
from tests.support.loopback import AnthropicServer, Fault, OpenAIServer, Reply

MC = questions("multiple_choice")
FF = questions("freeform")


def flags(server, *extra: str, judges: str = "ab") -> list[str]:
    return [
        "--provider=openai",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        *(f"--judge=live:judge-{x}@{server.url}/v1" for x in judges),
        *extra,
    ]


def run(tmp_path: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", **kwargs)


def direct_calls(server) -> int:
    """Generation requests made one by one, not through a batch."""
    return sum(
        r.path.endswith(("/chat/completions", "/responses", "/messages")) for r in server.requests
    )


def about(body: dict, question: dict) -> bool:
    return question["question"] in json.dumps(body)


def without_batch_marks(result: dict) -> dict:
    """A result file less what only a batched run has: the rows' `batched`, the summary's
    `batch` and `cost`, and timing."""

    def clean(summary):
        return {k: v for k, v in summary.items() if k not in ("batch", "cost", "timing")}

    rows = [
        {k: v for k, v in row.items() if k not in ("batched", "latency")}
        for row in result["results"]
    ]
    return {"config": result["config"], "summary": clean(result["summary"]), "results": rows}


@pytest.fixture
def server(student):
    with OpenAIServer(student, batch_seconds=0.3) as server:
        yield server


def test_a_batch_run_writes_a_direct_runs_result_file_at_the_batch_price(server, tmp_path):
    prices = ["--price-input=2", "--price-output=8"]
    run(tmp_path / "direct", *flags(server, *prices), "-m", "multiple_choice or freeform")
    server.clear()

    done = run(
        tmp_path / "batch",
        *flags(server, *prices, "--batch-wait"),
        "-m",
        "multiple_choice or freeform",
    )

    assert direct_calls(server) == 0, done.stdout[-2000:]
    assert server.batch_creates == 4  # multiple choice; freeform's candidate, then its two judges
    for name in ("multiple_choice", "freeform"):
        direct, batched = (
            read_result(tmp_path / "direct" / "results", name),
            read_result(tmp_path / "batch" / "results", name),
        )
        assert without_batch_marks(batched) == without_batch_marks(direct)
        assert batched["summary"]["cost"] == pytest.approx(
            BATCH_PRICE * direct["summary"]["cost"], abs=1e-6
        )
        assert batched["summary"]["batch"]["calls"] == batched["summary"]["n"]
        assert "batch" not in direct["summary"] and not any(
            "batched" in row for row in direct["results"]
        )
        assert rescore(
            result_files(tmp_path / "batch" / "results", name)[0],
            run_root=tmp_path / "batch" / "runs",
        ) == without_timing(batched)
    ff = read_result(tmp_path / "batch" / "results", "freeform")
    judged = [row for row in ff["results"] if row["verdicts"]]
    assert judged and all(row["batched"] == ["candidate", "judge-0", "judge-1"] for row in judged)
    assert "batch batch_" in done.stdout  # progress shown


def test_without_waiting_items_wait_and_two_reruns_collect_freeform_with_two_workers(
    server, tmp_path
):
    server.batch_seconds = (
        0  # a batch ends at its first read once released; held, the second worker finds it running
    )
    args = [*flags(server, "--batch"), "-m", "freeform", "-n", "2"]

    server.hold_batches()
    first = run(tmp_path, *args)
    assert first.returncode == 0, first.stdout[-2000:]
    assert (
        f"{len(FF)} items wait in batches" in first.stdout
        and "run the same command again" in first.stdout
    )
    (batch,) = [b["id"] for b in server.batches]
    assert re.search(  # which batch, since when
        rf"items wait in batches \({batch} since \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)",
        first.stdout,
    ), first.stdout[-2000:]
    assert f"{len(FF)} skipped" in first.stdout and not result_files(
        tmp_path / "results", "freeform"
    )
    assert server.batch_creates == 1  # two workers, one submission

    server.release_batches()
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="fake-openai-key", max_retries=0)
    assert (
        client.batches.retrieve(server.batches[0]["id"]).status == "completed"
    )  # ended now, while nothing else is held
    server.hold_batches()  # the judges' batches, submitted by whichever worker comes first, stay running
    second = run(tmp_path, *args)  # collects the replies, submits the judges
    assert "items wait in batches" in second.stdout and not result_files(
        tmp_path / "results", "freeform"
    )
    assert server.batch_creates == 3

    server.release_batches()
    third = run(tmp_path, *args)
    assert read_result(tmp_path / "results", "freeform")["summary"]["n"] == len(FF), third.stdout[
        -2000:
    ]
    assert server.batch_creates == 3 and direct_calls(server) == 0
    assert [len(b["custom_ids"]) for b in server.batches] == [len(FF)] * 3
    assert all(len(set(b["custom_ids"])) == len(b["custom_ids"]) for b in server.batches)


def _ledger(tmp_path: Path) -> list[dict]:
    return [
        json.loads(p.read_text())
        for p in (tmp_path / "runs").glob("multiple_choice/*/batches/*.json")
        if p.name != "attempts.json"
    ]


# Each moment a kill can come: what the test waits for, and what it makes slow to get there.
MOMENTS = {
    "between the upload and the create call": (
        lambda server, tmp: any(
            r.path == "/v1/files" and r.method == "POST" for r in server.requests
        ),
        lambda r: r.path == "/v1/files" and r.method == "POST",
    ),
    "between the create call and its answer": (
        lambda server, tmp: any(
            r.path == "/v1/batches" and r.method == "POST" for r in server.requests
        ),
        lambda r: r.path == "/v1/batches" and r.method == "POST",
    ),
    "right after the submission is recorded": (
        lambda server, tmp: any(e["batch"] for e in _ledger(tmp)),
        None,
    ),
    "while polling": (
        lambda server, tmp: sum(r.path.startswith("/v1/batches/") for r in server.requests) >= 2,
        None,
    ),
    "while collecting": (
        lambda server, tmp: any(r.path.endswith("/content") for r in server.requests),
        lambda r: r.path.endswith("/content"),
    ),
}


def kill_at(server, tmp_path: Path, moment: str, args: list[str]) -> None:
    """Runs the harness and kills it (SIGKILL) at `moment`; returns once what it left is served."""
    reached, slow = MOMENTS[moment]
    if slow:
        server.inject_when(slow, Fault.slow(1.5), times=1)
    harness = subprocess.Popen(
        harness_command(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results"),
        cwd=ROOT,
        env=harness_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: reached(server, tmp_path), f"the harness to get {moment}")
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    # A request the harness left behind (held 1.5 s) is answered before the test goes on.
    wait_for(lambda: not server.busy, "the requests the killed harness left behind to be answered")


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_run_killed_at_any_moment_resumes_without_submitting_twice(server, tmp_path, moment):
    server.batch_seconds = 1.0
    args = [*flags(server, "--batch-wait"), "-m", "multiple_choice"]
    kill_at(server, tmp_path, moment, args)

    done = run(tmp_path, *args)

    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
        done.stdout[-2000:]
    )
    assert server.batch_creates == 1 and server.uploads == 1 and direct_calls(server) == 0


def test_requests_a_batch_did_not_run_or_that_met_a_5xx_go_in_a_new_batch_and_a_refusal_is_the_items_api_error(
    server, tmp_path
):
    expired, overloaded, refused, broken = MC[:4]
    server.batch_outcome_when(lambda cid, body: about(body, expired), "expired", times=1)
    server.batch_outcome_when(lambda cid, body: about(body, overloaded), 503, times=1)
    server.batch_outcome_when(lambda cid, body: about(body, refused), 400)
    server.batch_outcome_when(lambda cid, body: about(body, broken), 500)  # every time

    done = run(tmp_path, *flags(server, "--batch-wait"), "-m", "multiple_choice")

    result = read_result(tmp_path / "results", "multiple_choice")
    rows = {row["id"]: row for row in result["results"]}
    assert (
        rows[expired["id"]]["status"] != "apiError"
        and rows[overloaded["id"]]["status"] != "apiError"
    )
    assert (
        rows[refused["id"]]["status"] == "apiError"
        and "HTTP 400 in batch" in rows[refused["id"]]["error"]
    )
    assert (
        rows[broken["id"]]["status"] == "apiError" and "in 3 batches" in rows[broken["id"]]["error"]
    )
    assert result["summary"]["apiErrors"] == 2
    assert [len(b["custom_ids"]) for b in server.batches] == [len(MC), 3, 1], done.stdout[-2000:]
    assert "2 error" in done.stdout  # reported as errors, not wrong answers


@pytest.mark.parametrize("fate", ["expired", "failed", "cancelled"])
def test_a_batch_that_ends_badly_has_its_unrun_requests_submitted_again(server, tmp_path, fate):
    server.next_batch_ends(fate)

    done = run(tmp_path, *flags(server, "--batch-wait"), "-m", "multiple_choice")

    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["apiErrors"] == 0 and result["summary"]["n"] == len(MC), done.stdout[
        -2000:
    ]
    assert server.batch_creates == 2 and server.batches[0]["status"] == fate


def test_the_responses_api_batches_and_counts_its_tokens(server, tmp_path):
    run(tmp_path / "direct", *flags(server, "--responses-api"), "-m", "multiple_choice")
    done = run(
        tmp_path / "batch",
        *flags(server, "--responses-api", "--batch-wait"),
        "-m",
        "multiple_choice",
    )

    batched = read_result(tmp_path / "batch" / "results", "multiple_choice")
    assert server.batches[0]["endpoint"] == "/v1/responses", done.stdout[-2000:]
    assert batched["summary"]["tokens"]["input"] == 120 * len(MC)  # input_tokens, not prompt_tokens
    assert without_batch_marks(batched) == without_batch_marks(
        read_result(tmp_path / "direct" / "results", "multiple_choice")
    )


def test_anthropic_message_batches_with_errored_expired_and_overloaded_requests(student, tmp_path):
    expired, overloaded, missing = MC[:3]
    with AnthropicServer(student, batch_seconds=0.3) as server:
        server.batch_outcome_when(lambda cid, body: about(body, expired), "expired", times=1)
        server.batch_outcome_when(lambda cid, body: about(body, overloaded), 529, times=1)
        server.batch_outcome_when(lambda cid, body: about(body, missing), 404)
        env = harness_env(ANTHROPIC_API_KEY="fake-anthropic-key-for-tests")
        done = run(
            tmp_path,
            "--provider=anthropic",
            "--model=claude-student",
            f"--base-url={server.url}",
            "--batch-wait",
            "-m",
            "multiple_choice",
            env=env,
        )

        rows = {
            row["id"]: row
            for row in read_result(tmp_path / "results", "multiple_choice")["results"]
        }
        assert direct_calls(server) == 0 and server.batch_creates == 2, done.stdout[-2000:]
    assert (
        rows[expired["id"]]["status"] != "apiError"
        and rows[overloaded["id"]]["status"] != "apiError"
    )
    assert (
        rows[missing["id"]]["status"] == "apiError"
        and "not_found_error" in rows[missing["id"]]["error"]
    )
    assert all(
        row["batched"] == ["candidate"] for row in rows.values() if row["status"] != "apiError"
    )


class NoBatchServer(OpenAIServer):
    """An OpenAI-compatible endpoint without the Files and Batch APIs (llama.cpp, most proxies)."""

    routes = {
        route: name
        for route, name in OpenAIServer.routes.items()
        if "/files" not in route[1] and "/batches" not in route[1]
    }


def test_an_endpoint_without_a_batch_api_is_one_line_and_nothing_is_asked(student, tmp_path):
    with NoBatchServer(student) as server:
        done = run(
            tmp_path,
            "--provider=live",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            "--batch",
            "-m",
            "multiple_choice",
        )
        assert direct_calls(server) == 0
    assert done.returncode == 4
    assert (
        "does not speak the OpenAI Batch API" in done.stdout + done.stderr
        and "Traceback" not in done.stdout + done.stderr
    )


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
    assert line.startswith(
        f"batch {server.batches[0]['id']}: completed, {len(MC)} completed, 0 failed of {len(MC)}"
    )

    keyless = run_cli([*status.args], env={**harness_env(), "OPENAI_API_KEY": ""})
    assert "cannot ask the batches' state" in keyless.stdout and "OPENAI_API_KEY" in keyless.stdout

    collected = evaluate(
        data, "Student", "--evals=mc", "--no-build"
    )  # no --batch: what waits is collected, never asked again
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert server.batch_creates == 1 and direct_calls(server) == 0
    (row,) = [
        line for line in collected.stdout.splitlines() if line.startswith("  mc ")
    ]  # the summary table's
    assert row.split()[1].endswith("%") and row.endswith("left alone (--no-build)"), (
        collected.stdout
    )


# -- refusals: nothing left behind that blocks a later run ---------------------------------------


class FastAPINotFound:
    """A server built on FastAPI (transformers serve, LiteLLM's proxy): a route it lacks is
    404 {"detail": "Not Found"}, not the provider's error shape."""

    def handle(self, request):
        if self.route(request.method, request.path) is None:
            return Reply(404, {"detail": "Not Found"})
        return super().handle(request)


def without_routes(server: type, *parts: str) -> dict:
    return {
        route: name
        for route, name in server.routes.items()
        if not any(part in route[1] for part in parts)
    }


class TransformersServe(FastAPINotFound, OpenAIServer):
    """`transformers serve`: Chat Completions, and neither /v1/files nor /v1/batches."""

    routes = without_routes(OpenAIServer, "/files", "/batches")


class FilesWithoutBatches(FastAPINotFound, OpenAIServer):
    """An endpoint with the Files API (vLLM's) but no /v1/batches."""

    routes = without_routes(OpenAIServer, "/batches")


class LiteLLMAnthropic(FastAPINotFound, AnthropicServer):
    """LiteLLM's proxy in front of Anthropic: /v1/messages, and no /v1/messages/batches."""

    routes = without_routes(AnthropicServer, "/batches")


ANTHROPIC_ENV = {"ANTHROPIC_API_KEY": "fake-anthropic-key-for-tests"}

WITHOUT_A_BATCH_API = {
    "transformers serve, live": (
        TransformersServe,
        lambda url: ["--provider=live", "--model=student-1", f"--base-url={url}/v1"],
        {},
        "does not speak the OpenAI Batch API (HTTP 404 on its /batches)",
    ),
    "Files but no /batches, openai": (
        FilesWithoutBatches,
        lambda url: ["--provider=openai", "--model=student-1", f"--base-url={url}/v1"],
        {},
        "does not speak the OpenAI Batch API (HTTP 404 on its /batches)",
    ),
    "LiteLLM's proxy, anthropic": (
        LiteLLMAnthropic,
        lambda url: ["--provider=anthropic", "--model=claude-student", f"--base-url={url}"],
        ANTHROPIC_ENV,
        "has no Anthropic Message Batches API (HTTP 404 on its /v1/messages/batches)",
    ),
}


def ledger_files(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "runs").glob("*/*/batches/*.json") if p.name != "attempts.json"]


def batch_api_calls(server) -> int:
    return sum("/batches" in r.path or r.path.startswith("/v1/files") for r in server.requests)


@pytest.mark.parametrize("endpoint", WITHOUT_A_BATCH_API)
def test_an_endpoint_without_a_batch_api_refuses_each_batch_run_in_one_line_and_a_run_without_batch_then_runs(
    student, tmp_path, endpoint
):
    make, args, env, line = WITHOUT_A_BATCH_API[endpoint]
    with make(student) as server:
        refused = [
            run(
                tmp_path,
                *args(server.url),
                "--batch",
                "-m",
                "multiple_choice",
                env=harness_env(**env),
            )
            for _ in range(2)
        ]
        asked = direct_calls(server)
        server.clear()
        done = run(tmp_path, *args(server.url), "-m", "multiple_choice", env=harness_env(**env))
        assert batch_api_calls(server) == 0, "a run without --batch asked the Batch API"
        assert direct_calls(server) == len(MC)

    for attempt in refused:  # the second is refused as the first, not by what the first left
        output = attempt.stdout + attempt.stderr
        assert (
            attempt.returncode == 4 and output.count(line) == 1 and "run without --batch" in output
        ), output[-2000:]
        assert "Traceback" not in output
    assert asked == 0 and not ledger_files(tmp_path)
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
        done.stdout + done.stderr
    )[-2000:]


def _is(method: str, path: str):
    return lambda r: r.method == method and r.path == path


LITELLM_ERROR = {
    "error": {
        "message": "litellm.BadRequestError: batches are not configured for this deployment",
        "type": "invalid_request_error",
        "param": None,
        "code": "400",
    }
}

# A refusal of one of the calls that make a submission: the API made no batch of it.
REFUSED_SUBMISSIONS = {
    "the upload, 413": (_is("POST", "/v1/files"), Fault(status=413), "HTTP 413"),
    "the create call, 400": (_is("POST", "/v1/batches"), Fault(status=400), "HTTP 400"),
    "the create call, 200 with LiteLLM's error body": (
        _is("POST", "/v1/batches"),
        Fault(status=200, body=LITELLM_ERROR),
        "batches are not configured",
    ),
    "the lookup by name, 400": (_is("GET", "/v1/batches"), Fault(status=400), "HTTP 400"),
}


@pytest.mark.parametrize("refusal", REFUSED_SUBMISSIONS)
def test_a_refused_submission_is_one_line_and_leaves_nothing_behind(server, tmp_path, refusal):
    where, fault, said = REFUSED_SUBMISSIONS[refusal]
    server.inject_when(where, fault)

    refused = run(tmp_path, *flags(server, "--batch-wait"), "-m", "multiple_choice")

    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and output.count("--batch: the API refused the batch") == 1, (
        output[-2000:]
    )
    assert said in output and "nothing was submitted" in output and "Traceback" not in output
    assert not ledger_files(tmp_path) and server.batch_creates == 0
    attempts = sum(where(r) for r in server.requests)
    assert attempts == 1, "a refusal is not retried"

    server.clear_faults()
    done = run(
        tmp_path, *flags(server), "-m", "multiple_choice"
    )  # without --batch: asked directly, nothing submitted
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
        done.stdout + done.stderr
    )[-2000:]
    assert direct_calls(server) == len(MC) and server.batch_creates == 0


def test_a_batch_api_that_keeps_failing_is_one_line_and_a_run_without_batch_asks_directly(
    server, tmp_path
):
    # LiteLLM without its database: every call to /v1/batches answers 500, at once.
    server.inject_when(lambda r: r.path.startswith("/v1/batches"), Fault(status=500, retry_after=0))

    failed = run(tmp_path, *flags(server, "--batch"), "-m", "multiple_choice")
    server.clear()
    done = run(tmp_path, *flags(server), "-m", "multiple_choice")  # without --batch

    output = failed.stdout + failed.stderr
    (line,) = [line for line in output.splitlines() if "nothing was submitted" in line]
    assert failed.returncode != 0 and "HTTP 500" in line and "run without --batch" in line, output[
        -2000:
    ]
    assert "Traceback" not in output and not ledger_files(tmp_path)
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
        done.stdout + done.stderr
    )[-2000:]
    assert direct_calls(server) == len(MC) and batch_api_calls(server) == 0


def test_a_run_without_batch_that_cannot_look_a_submission_up_says_which_and_since_when(
    server, tmp_path
):
    # Killed after the upload: the API may have made the batch, so a run without --batch must
    # look it up before asking directly; the lookup failing, the items wait, and say on what.
    kill_at(
        server,
        tmp_path,
        "between the upload and the create call",
        [*flags(server, "--batch-wait"), "-m", "multiple_choice"],
    )
    server.inject_when(_is("GET", "/v1/batches"), Fault(status=500, retry_after=0))

    done = run(tmp_path, *flags(server), "-m", "multiple_choice")

    assert re.search(
        rf"{len(MC)} items wait in batches \(a submission prepared \d{{4}}-\d\d-\d\d "
        r"\d\d:\d\d:\d\d UTC, not yet known to the API\)",
        done.stdout,
    ), done.stdout[-2000:]
    assert direct_calls(server) == 0


@pytest.mark.parametrize(
    "moment, made",
    [
        ("between the create call and its answer", True),
        ("between the upload and the create call", False),
    ],
)
def test_a_run_without_batch_collects_the_batch_a_killed_run_made_and_asks_directly_what_it_never_submitted(
    server, tmp_path, moment, made
):
    server.batch_seconds = 0.5
    kill_at(server, tmp_path, moment, [*flags(server, "--batch-wait"), "-m", "multiple_choice"])
    created = server.batch_creates
    assert created == int(made) and [entry["batch"] for entry in _ledger(tmp_path)] == [None]

    before = len(server.requests)
    done = run(tmp_path, *flags(server), "-m", "multiple_choice")  # without --batch

    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
        done.stdout + done.stderr
    )[-2000:]
    assert server.batch_creates == created and not any(
        r.method == "POST" and r.path in ("/v1/files", "/v1/batches")
        for r in server.requests[before:]
    )
    assert direct_calls(server) == (0 if made else len(MC))
    assert (
        f"never submitted; its {len(MC)} requests are asked directly" in done.stdout + done.stderr
    ) == (not made)


# -- results the API refuses to hand over --------------------------------------------------------


def _results_of(provider: str):
    suffix = "/content" if provider == "openai" else "/results"
    return lambda r: r.method == "GET" and r.path.endswith(suffix)


def _retrieve_of(provider: str):
    prefix = "/v1/batches/" if provider == "openai" else "/v1/messages/batches/"
    return lambda r: (
        r.method == "GET"
        and r.path.startswith(prefix)
        and not r.path.endswith(("/content", "/results"))
    )


# (provider, how the batch ends, which call is refused, its status, the line)
REFUSED_DOWNLOADS = {
    "openai: an expired batch's output file, 406": (
        "openai",
        "expired",
        _results_of,
        406,
        "the results of batch",
    ),
    "openai: the output file, 410": ("openai", None, _results_of, 410, "the results of batch"),
    "openai: the batch itself, 404": ("openai", None, _retrieve_of, 404, "cannot be retrieved"),
    "anthropic: the results, 406": ("anthropic", None, _results_of, 406, "the results of batch"),
    "anthropic: the batch itself, 400": (
        "anthropic",
        None,
        _retrieve_of,
        400,
        "cannot be retrieved",
    ),
}


@pytest.mark.parametrize("refusal", REFUSED_DOWNLOADS)
def test_a_permanent_refusal_while_collecting_is_the_items_api_error_in_one_line_not_a_poll_forever(
    student, tmp_path, refusal
):
    provider, fate, which, status, said = REFUSED_DOWNLOADS[refusal]
    with (OpenAIServer if provider == "openai" else AnthropicServer)(
        student, batch_seconds=0.2
    ) as server:
        args = (
            flags(server, judges="")
            if provider == "openai"
            else ["--provider=anthropic", "--model=claude-student", f"--base-url={server.url}"]
        )
        if fate:
            server.next_batch_ends(fate)
        server.inject_when(which(provider), Fault(status=status))
        done = run(
            tmp_path,
            *args,
            "--batch-wait",
            "-m",
            "multiple_choice",
            env=harness_env(**ANTHROPIC_ENV),
            timeout=90,
        )
        refused = sum(which(provider)(r) for r in server.requests)

    output = done.stdout + done.stderr
    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["apiErrors"] == len(MC), output[-2000:]
    assert all(
        f"HTTP {status}" in row["error"] and said in row["error"] for row in result["results"]
    )
    (line,) = [
        line for line in output.splitlines() if "recorded as their items' API errors" in line
    ]
    assert (
        said in line
        and f"HTTP {status}" in line
        and f"its {len(MC)} requests without a result" in line
    )
    assert refused == 1, "a refusal is not asked again"
    assert server.batch_creates == 1 and direct_calls(server) == 0


# -- looking for a submission by name --------------------------------------------------------------


def _lists(path: str):
    return lambda server: sum(r.method == "GET" and r.path == path for r in server.requests)


def _make_batches(server, n: int) -> None:
    """n batches (and their uploads) of someone else's, made through the API."""
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="fake-openai-key", max_retries=0)
    line = {
        "custom_id": "x",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "other", "messages": [{"role": "user", "content": "hi"}]},
    }
    for i in range(n):
        upload = client.files.create(
            file=(f"other-{i}.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch"
        )
        client.batches.create(
            input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
        )


def test_looking_for_a_submission_on_a_server_of_one_item_pages_stops_at_the_first_page_older_than_it(
    student, tmp_path
):
    with OpenAIServer(student, batch_seconds=0.2, list_page_limit=1) as server:
        _make_batches(server, 30)
        server.backdate(2 * 86400)  # the account's earlier batches, two days old
        server.clear()
        done = run(tmp_path, *flags(server, "--batch-wait", judges=""), "-m", "multiple_choice")
        assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
            done.stdout[-2000:]
        )
        assert _lists("/v1/batches")(server) == 1 and _lists("/v1/files")(server) == 1


def test_a_killed_runs_batch_is_found_pages_down_on_a_server_of_one_item_pages(student, tmp_path):
    with OpenAIServer(student, batch_seconds=1.0, list_page_limit=1) as server:
        args = [*flags(server, "--batch-wait", judges=""), "-m", "multiple_choice"]
        kill_at(server, tmp_path, "between the create call and its answer", args)
        _make_batches(server, 3)  # newer batches of someone else's, listed before it
        server.clear()

        done = run(tmp_path, *args)

        assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
            done.stdout[-2000:]
        )
        assert server.batch_creates == 1 + 3 and direct_calls(server) == 0
        assert 4 <= _lists("/v1/batches")(server) <= 5


class CursorIgnored(OpenAIServer):
    """A server that ignores `after`: every page of /v1/batches is the first, and has more."""

    def list_batches(self, request):
        batches = [self.batch_wire(batch) for batch in self.book.all()][:1]
        return Reply(
            200,
            {
                "object": "list",
                "data": batches,
                "first_id": batches[0]["id"] if batches else None,
                "last_id": batches[-1]["id"] if batches else None,
                "has_more": True,
            },
        )


def test_looking_for_a_submission_on_a_server_whose_pages_never_end_reads_a_bounded_number_of_them(
    student, tmp_path
):
    with CursorIgnored(student, batch_seconds=0.2) as server:
        _make_batches(server, 2)  # made just now: no page reaches back past the submission
        server.clear()
        done = run(tmp_path, *flags(server, "--batch-wait", judges=""), "-m", "multiple_choice")
        assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(MC), (
            done.stdout[-2000:]
        )
        assert _lists("/v1/batches")(server) <= FIND_PAGES


# -- result lines, as the APIs write them ------------------------------------------------------
