"""What an endpoint sends can't forge, wedge or pass off a stale answer: whole runs, as a user
starts them, against loopback servers that do what real ones did (transformers serve's strict
bodies and FastAPI errors, LiteLLM's shapes, a proxy writing a reply twice, a dead port, a
redirect elsewhere, a reply of megabytes).

`pytest` starts warm (tests/support/warm.py), a process with its own exit status and streams;
the servers run on threads of the test, one stopped mid-run and one started on a port that was
dead."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from tests.support.harness import (
    Student,
    harness_env,
    questions,
    read_result,
    run_harness,
)
from tests.support.loopback import (
    Answer,
    AnthropicServer,
    Fault,
    OpenAIServer,
    Reply,
    last_user_text,
)
from tests.support.loopback.strict_server import StrictServer

MC = questions("multiple_choice")
LIMIT = "--limit=10"


def run(tmp_path, *args, **kwargs):
    return run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", **kwargs)


def live(server, *extra, model="qwen3-8b"):
    return [
        "--provider=live",
        f"--model={model}",
        f"--base-url={server.url}/v1",
        "-m",
        "multiple_choice",
        LIMIT,
        *extra,
    ]


def generation(server):
    return [
        r
        for r in server.requests
        if r.path.endswith(("/chat/completions", "/responses", "/messages"))
    ]


# -- 6: the exact body, as a strict server reads it -------------------------------------------

EXACT = {  # flags -> the body's fields beside the prompt's ("messages" / "input" + "instructions")
    "live --thinking": (["--thinking"], {"chat_template_kwargs": {"enable_thinking": True}}),
    "live --effort on a local server": (["--effort=low"], {"reasoning_effort": "low"}),
    "live --thinking --max-tokens": (
        ["--thinking", "--max-tokens=64"],
        {"chat_template_kwargs": {"enable_thinking": True}, "max_tokens": 64},
    ),
    "openai --responses-api": (["--provider=openai", "--responses-api"], {"stream": False}),
    "openai --responses-api --effort": (
        ["--provider=openai", "--responses-api", "--effort=high"],
        {"stream": False, "reasoning": {"effort": "high", "summary": "auto"}},
    ),
}


@pytest.mark.parametrize("case", EXACT)
def test_every_request_body_is_exactly_what_was_meant_and_a_strict_server_answers_it(
    student, tmp_path, case
):
    flags, fields = EXACT[case]
    with StrictServer(student) as server:
        done = run(tmp_path, *live(server), *flags)
        bodies = [r.body for r in generation(server)]

    assert "apiErrors 0" in done.stdout, done.stdout[-2000:]
    assert len(bodies) == 10  # each item asked once: none refused
    for body in bodies:
        prompt = {k: body[k] for k in ("messages", "input", "instructions") if k in body}
        assert body == {"model": "qwen3-8b", **prompt, **fields}


def test_openrouter_route_and_effort_are_fields_of_the_body_not_an_extra_body(student, tmp_path):
    # The loopback server stands in for openrouter.ai as the HTTP proxy of a plain-http URL.
    with OpenAIServer(student, reasoning_field="reasoning") as server:
        env = harness_env(
            HTTP_PROXY=server.url,
            OPENROUTER_API_KEY="fake-openrouter-key",
            NO_PROXY="",
            no_proxy="",
        )
        done = run(
            tmp_path,
            "--provider=live",
            "--model=qwen/qwen3-8b",
            "--base-url=http://openrouter.ai/api/v1",
            "--route=deepinfra",
            "--effort=high",
            "-m",
            "multiple_choice",
            LIMIT,
            env=env,
        )
        bodies = [r.body for r in generation(server)]

    assert "apiErrors 0" in done.stdout, done.stdout[-2000:]
    assert bodies and all(set(b) == {"model", "messages", "provider", "reasoning"} for b in bodies)
    assert bodies[0]["provider"] == {"order": ["deepinfra"], "allow_fallbacks": False} and bodies[
        0
    ]["reasoning"] == {"effort": "high"}


def test_batch_lines_carry_the_same_exact_body(student, tmp_path):
    with OpenAIServer(student, batch_seconds=0.2) as server:
        done = run(tmp_path, *live(server, "--thinking", "--batch-wait"))
        uploaded = [f for f in server._files.values() if f.purpose == "batch"]

    assert "apiErrors 0" in done.stdout, done.stdout[-2000:]
    lines = [json.loads(line) for f in uploaded for line in f.data.decode().splitlines()]
    assert len(lines) == 10
    assert all(set(line["body"]) == {"model", "messages", "chat_template_kwargs"} for line in lines)


# -- 10: shapes real servers send -------------------------------------------------------------

ERROR_BODIES = {  # status, body as the server sent it, what the user must read of it
    "transformers serve's unexpected field": (
        422,
        {"detail": "Unexpected fields in the request: {'extra_body'}"},
        "HTTP 422: Unexpected fields in the request: {'extra_body'}",
    ),
    "FastAPI's validation list": (
        422,
        {"detail": [{"loc": ["body", "messages"], "msg": "Field required", "type": "missing"}]},
        "HTTP 422: Field required",
    ),
    "Ollama's error string": (
        400,
        {"error": "invalid options: num_thread"},
        "HTTP 400: invalid options: num_thread",
    ),  # its unknown model's 404 ends the run: see the test below
    "a plain-text body": (
        400,
        "prompt is too long for this server",
        "HTTP 400: prompt is too long for this server",
    ),
    "a message with a newline and an escape": (
        400,
        {"error": {"message": "bad\n\x1b[31mrequest"}},
        "HTTP 400: bad\\n\\x1b[31mrequest",
    ),
}


@pytest.mark.parametrize("case", ERROR_BODIES)
def test_an_error_body_of_any_shape_keeps_its_explanation(student, tmp_path, case):
    status, body, shown = ERROR_BODIES[case]
    with OpenAIServer(student) as server:
        server.fail_next(100, status, body=body)
        done = run(tmp_path, *live(server))

    rows = read_result(tmp_path / "results", "multiple_choice")["results"]
    assert [r["error"] for r in rows] == [f"bad_request: {shown} (after 1 attempt)"] * 10
    assert shown in done.stdout and "\x1b" not in done.stdout


def test_a_server_pinned_to_another_model_says_so(student, tmp_path):
    with StrictServer(student, pinned="Qwen/Qwen3-0.6B") as server:
        done = run(tmp_path, *live(server, model="my-model"))

    assert "HTTP 400: Server is pinned to 'Qwen/Qwen3-0.6B'; requested 'my-model'" in done.stdout


def test_an_anthropic_error_body_of_another_shape_keeps_its_explanation(tmp_path):
    with AnthropicServer(Student()) as server:
        server.fail_next(100, 400, body={"detail": "this proxy takes no thinking parameter"})
        done = run(
            tmp_path,
            "--provider=anthropic",
            "--model=claude-student",
            f"--base-url={server.url}",
            "-m",
            "multiple_choice",
            LIMIT,
            env=harness_env(ANTHROPIC_API_KEY="fake-anthropic-key"),
        )

    assert "HTTP 400: this proxy takes no thinking parameter" in done.stdout


def as_parts(body):
    message = body["choices"][0]["message"]
    message["content"] = [
        {"type": "text", "text": message["content"][:5]},
        {"type": "text", "text": message["content"][5:]},
    ]


def test_content_as_a_list_of_text_parts_is_the_answer_asked_once(student, tmp_path):
    with OpenAIServer(lambda req: Answer(student(req).text, reshape=as_parts)) as server:
        done = run(tmp_path, *live(server))
        asked = len(generation(server))

    result = read_result(tmp_path / "results", "multiple_choice")
    assert asked == 10 and result["summary"]["apiErrors"] == 0, done.stdout[-2000:]
    assert result["summary"]["accuracy"] == 0.8  # the Student's score: every fifth answer wrong


LITELLM_ERRORS = {  # a 200 whose body is an error object: the API error it says, asked as its status says
    "a bad request": (
        {
            "error": {
                "message": "litellm.BadRequestError: model not mapped",
                "type": "invalid_request_error",
                "code": "400",
            }
        },
        "bad_request: HTTP 200 carrying an error 400: litellm.BadRequestError: model not mapped (after 1 attempt)",
        1,
    ),
    "no code": (
        {"error": {"message": "upstream refused", "type": None}},
        "bad_request: HTTP 200 carrying an error: upstream refused (after 1 attempt)",
        1,
    ),
    "a string": (
        {"error": "budget exceeded for key"},
        "bad_request: HTTP 200 carrying an error: budget exceeded for key (after 1 attempt)",
        1,
    ),
}


@pytest.mark.parametrize("case", LITELLM_ERRORS)
def test_an_error_object_sent_with_http_200_is_that_api_error(tmp_path, case):
    body, error, asked_per_item = LITELLM_ERRORS[case]
    with OpenAIServer(lambda req: Reply(200, body)) as server:
        run(tmp_path, *live(server))
        asked = len(generation(server))

    rows = read_result(tmp_path / "results", "multiple_choice")["results"]
    assert [r["error"] for r in rows] == [error] * 10
    assert asked == 10 * asked_per_item


# An error object in a 200 whose status is said by its type, in either vendor's shape: an
# overload or a rate limit is asked again, an invalid request is not.
TYPED_ERRORS = {
    "Anthropic's overloaded_error": (
        "anthropic",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        None,
    ),
    "Anthropic's rate_limit_error": (
        "anthropic",
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        None,
    ),
    "OpenAI's server_error": (
        "live",
        {"error": {"message": "upstream overloaded", "type": "server_error", "code": None}},
        None,
    ),
    "OpenAI's rate_limit_exceeded code": (
        "live",
        {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        None,
    ),
    "Anthropic's invalid_request_error": (
        "anthropic",
        {"type": "error", "error": {"type": "invalid_request_error", "message": "bad field"}},
        "bad_request: HTTP 200 carrying an error invalid_request_error: bad field (after 1 attempt)",
    ),
}


@pytest.mark.parametrize("case", TYPED_ERRORS)
def test_an_error_type_sent_with_http_200_is_asked_again_as_its_status_says(
    student, tmp_path, case
):
    vendor, body, final = TYPED_ERRORS[case]
    with (AnthropicServer if vendor == "anthropic" else OpenAIServer)(student) as server:
        args, env = live(server), None
        if vendor == "anthropic":
            args = ["--provider=anthropic", "--model=claude-student", f"--base-url={server.url}"]
            args += ["-m", "multiple_choice", LIMIT]
            env = harness_env(ANTHROPIC_API_KEY="fake-anthropic-key")
        server.fail_next(10, 200, body=body)
        done = run(tmp_path, *args, env=env)
        asked = len(generation(server))

    result = read_result(tmp_path / "results", "multiple_choice")
    if final is None:  # each item's first answer was the error; the second its reply
        assert result["summary"]["apiErrors"] == 0 and asked == 20, done.stdout[-2000:]
        assert result["summary"]["accuracy"] == 0.8
    else:
        assert [r["error"] for r in result["results"]] == [final] * 10 and asked == 10


def test_a_reply_of_megabytes_is_kept_cut_at_the_limit_and_scored(student, tmp_path):
    from evals.providers._base import REPLY_LIMIT

    huge = MC[1]["question"]

    def responder(request):
        answer = student(request)
        if huge in last_user_text(
            request.body
        ):  # the answer, then 3 MB of padding a broken server appended
            return Answer(
                answer.text + "\n" + "padding " * 400_000, input_tokens=120, output_tokens=30
            )
        return answer

    with OpenAIServer(responder) as server:
        done = run(tmp_path, *live(server))
        rerun = run(tmp_path, *live(server))
        asked = len(generation(server))

    (record,) = (tmp_path / "runs").glob(f"multiple_choice/*/calls/{MC[1]['id']}/candidate.json")
    kept = json.loads(record.read_text())["response"]
    assert (
        record.stat().st_size < REPLY_LIMIT + 10_000
        and kept["cut"] is True
        and len(kept["text"]) == REPLY_LIMIT
    )
    result = read_result(tmp_path / "results", "multiple_choice")
    row = next(r for r in result["results"] if r["id"] == MC[1]["id"])
    assert row["status"] != "apiError" and result["summary"]["n"] == 10, done.stdout[
        -2000:
    ]  # scored as kept, like any reply
    assert asked == 10 and "apiErrors 0" in rerun.stdout


# -- 7: a stale reply ------------------------------------------------------------------------


def assert_each_item_kept_its_own_reply(tmp_path, rows: dict[str, dict]) -> None:
    """Each of the first ten questions' record holds the Student's own reply to it (wrong on
    every fifth), and its row is scored from it."""
    for i, question in enumerate(MC[:10]):
        (record,) = (tmp_path / "runs").glob(
            f"multiple_choice/*/calls/{question['id']}/candidate.json"
        )
        letter = question["answer"] if i % 5 else "ABCD"[("ABCD".index(question["answer"]) + 1) % 4]
        text = json.loads(record.read_text())["response"]["text"]
        assert text == f"Reasoning about it.\n\nAnswer: {letter}", question["id"]
        assert rows[question["id"]]["status"] == ("correct" if i % 5 else "wrong")


def test_a_reply_written_twice_on_a_kept_alive_connection_never_becomes_another_items_answer(
    student, tmp_path
):
    with OpenAIServer(student) as server:
        server.inject_when(
            lambda r: r.index % 3 == 0, Fault(twice=True)
        )  # a broken proxy, on every third request
        done = run(tmp_path, *live(server), "--concurrency=1")
        first = read_result(tmp_path / "results", "multiple_choice")
        rerun = run(tmp_path, *live(server), "--concurrency=1")

    rows = {r["id"]: r for r in first["results"]}
    assert first["summary"]["accuracy"] == 0.8, done.stdout[
        -2000:
    ]  # the Student's own score: each item got its own reply
    assert_each_item_kept_its_own_reply(tmp_path, rows)
    assert "apiErrors 0" in rerun.stdout


def left_after(server) -> list[tuple[int, int]]:
    """(the connection a reply was left on, the one the next request came on), for each
    request that got a leftover and had one after it."""
    got = server.requests
    return [(r.connection, got[r.index + 1].connection) for r in got[:-1] if r.fault == "leftover"]


def test_a_reply_left_on_a_kept_alive_connection_is_never_the_next_items_answer(student, tmp_path):
    # A broken proxy leaves a second, different response after the real one: another letter
    # under its own id, or under the id of the run's first reply.
    reused = lambda body: {**body, "id": "chatcmpl-loopback000000"}  # noqa: E731
    with OpenAIServer(student) as server:
        server.inject_when(lambda r: r.index % 4 == 0, Fault(leftover="Answer: A"))
        server.inject_when(
            lambda r: r.index % 4 == 2, Fault(leftover=Answer("So: D\n\nAnswer: D", reshape=reused))
        )
        done = run(tmp_path, *live(server), "--concurrency=1")
        asked = generation(server)
        moved = left_after(server)

    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["accuracy"] == 0.8, done.stdout[-2000:]  # the Student's own
    rows = {r["id"]: r for r in result["results"]}
    assert_each_item_kept_its_own_reply(tmp_path, rows)
    assert len(asked) == 10  # each item asked once
    assert len(moved) == 5 and all(left != next_ for left, next_ in moved)  # on a fresh one


def test_a_verdict_left_on_a_kept_alive_connection_never_grades_another_item(student, tmp_path):
    # A judge endpoint that leaves a pass behind after each verdict: read as the next verdict
    # it would pass an item the Student got wrong (every fourth), or answer a question.
    with OpenAIServer(student) as server:
        server.inject_when(
            lambda r: "VERDICT: CORRECT" in last_user_text(r.body),
            Fault(leftover="Compared.\nVERDICT: CORRECT"),
        )
        done = run(
            tmp_path,
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            f"--judge=live:judge-a@{server.url}/v1",
            f"--judge=live:judge-b@{server.url}/v1",
            "-m",
            "freeform",
            LIMIT,
        )
        asked = generation(server)
        moved = left_after(server)

    result = read_result(tmp_path / "results", "freeform")
    answered = {q["id"]: i % 4 != 0 for i, q in enumerate(questions("freeform"))}
    assert len(result["results"]) == 10, done.stdout[-3000:]
    for row in result["results"]:
        assert [v["verdict"] for v in row["verdicts"]] == [
            "CORRECT" if answered[row["id"]] else "INCORRECT"
        ] * 2, row
    assert result["summary"]["judgeUnparseable"] == 0
    assert len(asked) == 30  # ten questions, twenty verdicts, each asked once
    assert moved and all(left != next_ for left, next_ in moved)


# -- 8: a deadline for the whole attempt ----------------------------------------------------


def test_a_reply_trickled_a_byte_at_a_time_is_cut_at_the_request_timeout_and_asked_again(
    student, tmp_path
):
    """A byte every 50 ms never trips a per-read timeout: the first reply would take minutes.
    --request-timeout bounds the whole attempt, and the retry gets the answer."""
    with OpenAIServer(student) as server:
        server.inject(Fault(trickle=0.05))
        started = time.monotonic()
        done = run(tmp_path, *live(server, "--limit=1"), "--request-timeout=1")
        took = time.monotonic() - started
        asked = len(generation(server))

    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["summary"]["apiErrors"] == 0 and result["summary"]["n"] == 1, done.stdout[-2000:]
    assert (
        asked == 2 and took < 15
    )  # the trickle alone is ~0.05 s per byte of a reply of hundreds of bytes


def test_a_request_timeout_no_request_can_use_is_refused_in_one_line(tmp_path):
    for value in ("0", "nan", "1e308"):
        done = run(
            tmp_path, "--provider=reference", "-m", "multiple_choice", f"--request-timeout={value}"
        )
        assert (
            done.returncode == 4
            and "ERROR: --request-timeout must be a number of seconds above 0" in done.stderr
        ), done.stderr


# -- 9: a dead endpoint ----------------------------------------------------------------------


def stopped_lines(done, text: str) -> list[str]:
    """The line a run that ended early ends with, naming why (as a rejected key's does)."""
    return [
        line
        for line in done.stdout.splitlines()
        if line.startswith("! Interrupted: stopped: ") and text in line
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_dead_endpoint_ends_the_run_early_in_one_line_naming_it_and_a_rerun_resumes(
    student, tmp_path
):
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    args = ["--provider=live", "--model=qwen3-8b", f"--base-url={url}", "-m", "multiple_choice"]

    started = time.monotonic()
    done = run(tmp_path, *args)
    took = time.monotonic() - started

    assert done.returncode != 0
    named = stopped_lines(
        done, f"nothing answers at {url} (connection failed: [Errno 111] Connection refused)"
    )
    assert len(named) == 1 and "start the server or check --base-url" in named[0], done.stdout[
        -3000:
    ]
    assert done.stdout.count("ERROR at setup") <= 1  # not an error block per item
    assert took < 20
    with OpenAIServer(student, port=port) as server:
        resumed = run(tmp_path, *args)
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 0, (
        resumed.stdout[-2000:]
    )
    assert len(generation(server)) == len(MC)


UNKNOWN_MODEL = {
    "error": {
        "message": "The model `qwen3-80b` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "code": "model_not_found",
    }
}


@pytest.mark.parametrize(
    "status, body",
    [
        (404, UNKNOWN_MODEL),  # OpenAI's and vLLM's
        (
            400,
            {"error": {"message": "Invalid model name passed in model=qwen3-80b"}},
        ),  # a gateway's
        (404, "404 page not found"),  # no such route: a server without the API
        (404, {"error": 'model "qwen3-80b" not found, try pulling it first'}),  # Ollama's
        (
            400,
            {"error": {"message": "qwen3-80b is not a valid model ID", "code": 400}},
        ),  # OpenRouter's
    ],
    ids=["404-model-not-found", "400-invalid-model", "404-no-route", "ollama", "openrouter"],
)
def test_a_model_the_endpoint_does_not_serve_ends_the_run_in_one_line_and_keeps_nothing(
    student, tmp_path, status, body
):
    with OpenAIServer(student) as server:
        server.fail_when(lambda r: r.body.get("model") == "qwen3-80b", status, body=body)
        wrong = run(tmp_path, *live(server, model="qwen3-80b"), "--concurrency=2")
        asked, url = len(server.requests), server.url
        right = run(tmp_path, *live(server))

    assert wrong.returncode != 0
    named = stopped_lines(wrong, f"{url}/v1 does not serve model 'qwen3-80b': the first 3")
    assert len(named) == 1 and "check the model's name (--model" in named[0], wrong.stdout[-3000:]
    assert (
        wrong.stdout.count("ERROR at setup") <= 3
    )  # the refusals it took to tell, not one per item
    assert asked <= 5, asked  # the 3 refused and the 2 in flight (--concurrency 2), not all 10
    result = read_result(
        tmp_path / "results", "multiple_choice"
    )  # the only result file: the right model's
    assert result["config"]["model"] == "qwen3-8b" and result["summary"]["apiErrors"] == 0


def test_a_dead_judge_endpoint_ends_the_run_naming_the_judges_url(student, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with OpenAIServer(student) as server:
        done = run(
            tmp_path,
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            f"--judge=live:judge-a@{dead}",
            f"--judge=live:judge-b@{server.url}/v1",
            f"--judge=live:judge-c@{server.url}/v1",
            "-m",
            "freeform",
            LIMIT,
        )

    assert done.returncode != 0
    assert len(stopped_lines(done, f"nothing answers at {dead} ")) == 1, done.stdout[-3000:]


def test_a_dead_anthropic_endpoint_ends_the_run_in_one_line(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    done = run(
        tmp_path,
        "--provider=anthropic",
        "--model=claude-student",
        f"--base-url={url}",
        "-m",
        "multiple_choice",
        LIMIT,
        env=harness_env(ANTHROPIC_API_KEY="fake-anthropic-key"),
    )

    assert done.returncode != 0
    assert len(stopped_lines(done, f"nothing answers at {url} ")) == 1, done.stdout[-3000:]


@pytest.mark.parametrize("seconds, shown", [(999, "17 min"), (3601, "60 min"), (86400, "24.0 h")])
def test_a_retry_after_past_the_patience_ends_the_run_in_one_line(
    student, tmp_path, seconds, shown
):
    # 901 s to an hour failed every item, one block each; past an hour the run stopped. One
    # limit now: whatever the wait past it, the run stops in one line, and resumes later.
    with OpenAIServer(student) as server:
        server.fail_next(100, 429, retry_after=seconds)
        done = run(tmp_path, *live(server))
        server.clear()
        resumed = run(tmp_path, *live(server))

    assert done.returncode != 0
    (line,) = stopped_lines(done, f"the provider asks to retry in {shown} ")
    assert "past the 15 min a request waits on rate limits" in line, line
    assert "rerun the same command then to resume" in line
    assert (
        done.stdout.count("ERROR at setup") <= 1 and "ApiError" not in done.stdout
    )  # no block per item
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["apiErrors"] == 0, (
        resumed.stdout[-2000:]
    )


def test_an_endpoint_that_answered_and_then_went_away_only_fails_its_items(student, tmp_path):
    # Not dead: a server that stops mid-run fails the items it leaves (retried by a rerun);
    # its first answers are kept.
    server = OpenAIServer(student, latency=0.1).start()
    answered = threading.Event()

    def stop_after_three(request):
        if len(generation(server)) >= 3 and not answered.is_set():
            answered.set()
            threading.Thread(target=server.stop).start()
        return student(request)

    server.responder = stop_after_three
    done = run(tmp_path, *live(server), "--concurrency=1")

    assert answered.is_set()
    assert "nothing answers" not in done.stdout, done.stdout[-3000:]
    summary = read_result(tmp_path / "results", "multiple_choice")["summary"]
    assert summary["apiErrors"] >= 1 and summary["n"] == 10


# -- 10: a redirect to another origin --------------------------------------------------------


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_to_another_origin_ends_the_run_in_one_line(student, tmp_path, status):
    with OpenAIServer(student) as elsewhere, OpenAIServer(student) as server:
        server.handle = lambda req: Reply(status, b"", {"location": elsewhere.url + req.path})
        done = run(tmp_path, *live(server))
        asked_elsewhere = len(elsewhere.requests)
        origins = (server.url, elsewhere.url)

    assert done.returncode != 0 and asked_elsewhere == 0
    assert (
        len(stopped_lines(done, f"{origins[0]} redirects to another origin, {origins[1]}")) == 1
    ), done.stdout[-3000:]
