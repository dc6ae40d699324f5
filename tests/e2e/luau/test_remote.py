"""The --jest-url backend against a loopback JestLuaTestServer (tests/support/luau/jest_server.py)
on a thread of the test: the .rbxm upload, and the server's replies mapped to TestRuns, retried or
raised (busy, a rejected key, no reply in time, replies off the protocol). The model file alone
is tests/unit/luau/test_remote.py."""

import time

import httpx
import pytest

from evals.errors import EvalError
from evals.luau import run_tests
from evals.luau.remote import JestServerError, run_remote
from tests.support.luau.jest_server import (
    TEST_MATCH,
    JestServer,
    aggregated,
    assertion,
    completed,
    drop,
    error,
    failed,
    http,
    raw,
    run_locally,
    slow,
    timeout,
)
from tests.support.luau.specs import DOUBLER, DOUBLER_SPEC, solution

KEY = "fake-jest-server-key"
FAST = {"retry_delay": 0.01}


# -- the model file ------------------------------------------------------------------------


# -- the upload ----------------------------------------------------------------------------


def test_the_upload_is_one_folder_holding_the_solution_and_a_spec_jest_will_find():
    answer = solution("function Solution.double(x) return x * 2 end -- ✓ ünïcødé")
    with JestServer(api_keys={KEY}) as server:
        run_remote(answer, DOUBLER_SPEC, url=server.url, api_key=KEY)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/test")
    assert request.headers["content-type"] == "application/octet-stream"
    assert request.api_key == KEY
    folder, *modules = request.model
    assert folder.class_name == "Folder" and folder.parent is None
    assert "Packages" not in folder.name  # the plugin's jest.config ignores such paths
    by_name = {m.name: m for m in modules}
    assert set(by_name) == {"solution", "solution.spec"}
    assert all(m.class_name == "ModuleScript" and m.parent == 0 for m in modules)
    assert by_name["solution"].properties["Source"] == answer
    assert by_name["solution.spec"].properties["Source"] == DOUBLER_SPEC
    assert [m.name for m in modules if TEST_MATCH.match(m.name)] == ["solution.spec"]


def test_a_long_unicode_answer_arrives_intact():
    answer = solution("-- " + "é✓🚀" * 30_000 + "\nfunction Solution.double(x) return 2 * x end")
    assert len(answer.encode()) > 64 * 1024
    with JestServer() as server:
        assert run_remote(answer, DOUBLER_SPEC, url=server.url, api_key=None).passed
    modules = {m.name: m.properties["Source"] for m in server.requests[0].model[1:]}
    assert modules == {"solution": answer, "solution.spec": DOUBLER_SPEC}
    assert "x-api-key" not in server.requests[0].headers


@pytest.mark.parametrize("answer", [DOUBLER, solution("function Solution.double(x) return x end")])
def test_end_to_end_the_server_finds_and_runs_the_uploaded_spec(answer):
    with JestServer(default=run_locally()) as server:
        remote = run_remote(answer, DOUBLER_SPEC, url=server.url + "/", api_key=None)
    local = run_tests(answer, DOUBLER_SPEC)
    assert (remote.status, remote.reason, remote.tests) == (local.status, local.reason, local.tests)
    assert remote.aggregated == local.aggregated


# -- replies -------------------------------------------------------------------------------


def remote_run(*steps, api_key=KEY, **options):
    with JestServer(api_keys={KEY}) as server:
        server.script(*steps)
        run = run_remote(
            DOUBLER, DOUBLER_SPEC, url=server.url, api_key=api_key, **{**FAST, **options}
        )
    return run, server


def test_completed_with_every_test_passing_is_passed():
    tests = [
        assertion("doubles two", ancestors=("double",)),
        assertion("doubles zero", ancestors=("double",)),
    ]
    run, _ = remote_run(completed(aggregated(tests)))
    assert run.status == "passed" and run.reason is None
    assert run.tests == [
        {
            "title": "doubles two",
            "fullName": "double doubles two",
            "ancestorTitles": ["double"],
            "status": "passed",
            "failureMessages": [],
        },
        {
            "title": "doubles zero",
            "fullName": "double doubles zero",
            "ancestorTitles": ["double"],
            "status": "passed",
            "failureMessages": [],
        },
    ]
    assert run.aggregated == {
        "numTotalTests": 2,
        "numPassedTests": 2,
        "numFailedTests": 0,
        "numPendingTests": 0,
        "testExecError": None,
    }
    assert run.work == 0 and run.output == ""


@pytest.mark.parametrize("formatted", [False, True])
def test_completed_with_failures_is_failed_with_the_count(formatted):
    message = "\x1b[31mexpect(received).toBe(expected)\x1b[39m\n\nExpected: 4\nReceived: 2"
    tests = [
        assertion("a"),
        assertion("b", "failed", [message]),
        assertion("c", "skipped"),
        assertion("d", "todo"),
    ]
    run, _ = remote_run(completed(aggregated(tests, formatted=formatted)))
    assert run.status == "failed" and run.reason == "1 of 4 tests failed"
    assert [t["status"] for t in run.tests] == ["passed", "failed", "pending", "pending"]
    assert run.tests[1]["failureMessages"] == [
        "expect(received).toBe(expected)\n\nExpected: 4\nReceived: 2"
    ]


def test_a_test_file_that_cannot_run_is_an_error_with_its_message():
    run, _ = remote_run(
        completed(
            aggregated([], exec_error="LuauEval.solution:3: attempt to call a nil value\nstack")
        )
    )
    assert run.status == "error"
    assert (
        run.reason == "test suite failed to run: LuauEval.solution:3: attempt to call a nil value"
    )
    assert run.aggregated["testExecError"] == run.reason


def test_completed_without_tests_is_an_error():
    run, _ = remote_run(completed(aggregated([])))
    assert (run.status, run.reason) == ("error", "no tests found")


@pytest.mark.parametrize(
    "step, reason",
    [
        (
            failed(
                "Test starved the Studio heartbeat (likely an un-yielding infinite loop); Studio was force-restarted"
            ),
            "Test starved the Studio heartbeat (likely an un-yielding infinite loop); Studio was force-restarted",
        ),
        (
            failed(
                "Failed to run test: Expected exactly one root instance in the rbxm\nstack traceback"
            ),
            "Failed to run test: Expected exactly one root instance in the rbxm",
        ),
        (timeout(), "Test execution timed out after 12 seconds."),
        (error("Studio is not running"), "Studio is not running"),
        (error(""), "JestLuaTestServer reported 'error' without a message"),
    ],
)
def test_failed_timeout_and_error_statuses_are_error_runs_with_the_servers_message(step, reason):
    run, _ = remote_run(step)
    assert (run.status, run.reason, run.tests) == ("error", reason, [])
    assert run.aggregated["testExecError"] == reason


@pytest.mark.parametrize("refusal", [http(429, retry_after="0"), http(503), http(502), drop()])
def test_a_busy_server_is_retried_until_it_answers(refusal):
    run, server = remote_run(refusal, refusal, completed(aggregated([assertion("ok")])))
    assert run.passed
    assert len(server.requests) == 3


def test_retry_after_is_honoured():
    started = time.perf_counter()
    run, server = remote_run(
        http(429, retry_after="1"), completed(aggregated([assertion("ok")])), retry_delay=0.0
    )
    assert run.passed and len(server.requests) == 2
    assert time.perf_counter() - started >= 0.95


def test_a_server_that_stays_busy_is_an_infrastructure_error_not_a_verdict():
    with pytest.raises(JestServerError, match=r"still busy \(HTTP 503\) after 3 attempts"):
        remote_run(*[http(503)] * 5, attempts=3)


@pytest.mark.parametrize(
    "key, status, words",
    [
        (
            "fake-wrong-key-that-must-not-leak",
            403,
            "rejected the API key (HTTP 403: Invalid API key)",
        ),
        (None, 401, "requires an API key (HTTP 401: X-API-Key header required)"),
    ],
)
def test_a_rejected_key_raises_a_one_line_error_without_the_key(key, status, words):
    with pytest.raises(JestServerError) as caught:
        remote_run(api_key=key)
    message = str(caught.value)
    assert words in message and "JEST_SERVER_API_KEY" in message
    assert "\n" not in message
    assert "sk-" not in message and "must-not-leak" not in message
    assert isinstance(caught.value, EvalError)


def test_no_reply_in_time_raises_instead_of_blaming_the_model():
    with pytest.raises(JestServerError, match=r"no reply within 0\.3 s"):
        remote_run(slow(1.0, completed(aggregated([assertion("ok")]))), timeout=0.3)


@pytest.mark.parametrize(
    "step, words",
    [
        (raw(200, b"<html>proxy error</html>"), "not the /test protocol"),
        (raw(200, b'{"status": "queued"}'), "unknown status 'queued'"),
        (raw(200, b'{"status": "completed", "results": null}'), "without Jest results"),
        (http(413), "HTTP 413: RBXM file too large"),
        (http(500, f"boom {KEY}"), "HTTP 500: boom <redacted>"),
    ],
)
def test_replies_off_the_protocol_raise(step, words):
    with pytest.raises(JestServerError) as caught:
        remote_run(step)
    assert words in str(caught.value) and KEY not in str(caught.value)


def test_a_given_client_is_used_and_left_open():
    with httpx.Client() as client, JestServer() as server:
        assert run_remote(DOUBLER, DOUBLER_SPEC, url=server.url, api_key=None, client=client).passed
        assert run_remote(
            DOUBLER, DOUBLER_SPEC, url=server.url, api_key=None, client=client, work_budget=10
        ).passed
        assert not client.is_closed
    assert len(server.requests) == 2
