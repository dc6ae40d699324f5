"""Credentials written into an endpoint URL (user info, a key in its query) are secrets, as API
keys are: they still reach the server, and no file, record, printed command or message holds
them; the run is the one of the URL without them.

`pytest` starts warm (tests/support/warm.py) and `evaluate` is exec'd as it is, each a process
whose streams and files are read, against loopback servers on threads of the test."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from tests.support.board import evaluate_command
from tests.support.harness import harness_env, run_harness
from tests.support.loopback import Answer, AnthropicServer, OpenAIServer

SECRET = "S3cret-Pa55word-xyz"


def every_text(*folders: Path) -> str:
    """Every file under the folders, names and contents, as one text to search."""
    parts = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            parts.append(str(path))
            if path.is_file():
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


# How a credential is written into the URL, what the URL is without it, and how the request
# must still carry it: (user info -> Basic auth) or (a query parameter -> kept on the wire).
CASES = {
    "user info": ("http://alice:{s}@{host}/v1", "http://{host}/v1", ("basic", "alice", SECRET)),
    "percent-encoded user info": (
        "http://al%40ce:{s}%2F1@{host}/v1",
        "http://{host}/v1",
        ("basic", "al@ce", SECRET + "/1"),
    ),
    "a token as the user": ("http://{s}@{host}/v1", "http://{host}/v1", ("basic", SECRET, "")),
    "api-key=": ("http://{host}/v1?api-key={s}", "http://{host}/v1", ("query", "api-key", SECRET)),
    "key=": ("http://{host}/v1?key={s}", "http://{host}/v1", ("query", "key", SECRET)),
    "token= beside a plain parameter": (
        "http://{host}/v1?api-version=2&token={s}",
        "http://{host}/v1?api-version=2",
        ("query", "token", SECRET),
    ),
    "access_token= after ;": (
        "http://{host}/v1?api-version=2;access_token={s}",
        "http://{host}/v1?api-version=2",
        ("query", "access_token", SECRET),
    ),
}


def reached(request, how) -> bool:
    kind, name, value = how
    if kind == "basic":
        expected = "Basic " + base64.b64encode(f"{name}:{value}".encode()).decode()
        return request.headers.get("authorization") == expected
    return request.params.get(name) == value


@pytest.mark.parametrize("case", CASES)
def test_a_credential_in_the_base_url_reaches_the_server_and_no_file_or_line(case, tmp_path):
    given, plain, how = CASES[case]
    with OpenAIServer() as server:
        host = server.url.removeprefix("http://")
        dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
        args = ["--provider=openai", "--model=m-1", "-m", "multiple_choice", "--limit=2"]
        done = run_harness(*args, f"--base-url={given.format(s=SECRET, host=host)}", **dirs)
        assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
        assert len(server.requests) == 2 and all(reached(r, how) for r in server.requests), [
            r.headers for r in server.requests
        ]
        assert all(r.path == "/v1/chat/completions" for r in server.requests)
        if "api-version" in plain:
            assert all(r.params.get("api-version") == "2" for r in server.requests)
        written = every_text(tmp_path)
        for text in (written, done.stdout, done.stderr):
            assert SECRET not in text and SECRET.replace("-", "%2D") not in text
        (result,) = (tmp_path / "results" / "multiple_choice").glob("*.json")
        assert json.loads(result.read_text())["config"]["baseUrl"] == plain.format(host=host)

        # The URL without the credential is the same run: everything is read back, nothing asked.
        again = run_harness(*args, f"--base-url={plain.format(host=host)}", **dirs)
        assert again.returncode == done.returncode and len(server.requests) == 2, again.stdout[
            -2000:
        ]
        assert [p.name for p in (tmp_path / "results" / "multiple_choice").glob("*.json")] == [
            result.name
        ]


def test_anthropic_sends_the_credential_too(tmp_path):
    """The user info takes the Authorization header, as httpx gives it a URL's user info."""
    with AnthropicServer() as server:
        host = server.url.removeprefix("http://")
        env = harness_env(ANTHROPIC_API_KEY="fake-anthropic-key-for-tests")
        done = run_harness(
            "--provider=anthropic",
            "--model=claude-x",
            "-m",
            "multiple_choice",
            "--limit=1",
            f"--base-url=http://erin:{SECRET}@{host}?key={SECRET}",
            env=env,
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        assert done.returncode in (0, 1) and len(server.requests) == 1, (
            done.stdout[-3000:] + done.stderr[-3000:]
        )
        (request,) = server.requests
    assert request.params == {"key": SECRET}
    assert (
        request.headers.get("authorization")
        == "Basic " + base64.b64encode(f"erin:{SECRET}".encode()).decode()
    )
    assert SECRET not in every_text(tmp_path) + done.stdout + done.stderr


def test_a_server_that_echoes_the_credential_has_it_redacted_in_every_record(tmp_path):
    """Redacted as API keys are, from the reply, its reasoning and an error alike."""
    echo = lambda request: Answer(
        f"You sent {request.params.get('api-key')}. Answer: A",
        reasoning=f"key {request.params.get('api-key')}",
    )
    with OpenAIServer(echo) as server:
        host = server.url.removeprefix("http://")
        server.fail_next(1, 400, error=f"bad key {SECRET}")
        done = run_harness(
            "--provider=openai",
            "--model=m-1",
            "-m",
            "multiple_choice",
            "--limit=2",
            f"--base-url=http://{host}/v1?api-key={SECRET}",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        assert done.returncode in (0, 1) and len(server.requests) == 2, (
            done.stdout[-3000:] + done.stderr[-3000:]
        )
    written = every_text(tmp_path)
    assert "<redacted>" in written and SECRET not in written + done.stdout + done.stderr


def test_a_credential_in_the_sdk_variable_or_a_judge_url_is_kept_out_too(tmp_path):
    """OPENAI_BASE_URL (read when no --base-url is given) and a judge's @URL are URLs as well."""
    with OpenAIServer() as server:
        host = server.url.removeprefix("http://")
        judge_host = host.replace(
            "127.0.0.1", "localhost"
        )  # another endpoint, with credentials of its own
        env = harness_env(OPENAI_BASE_URL=f"http://bob:{SECRET}@{host}/v1")
        dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
        done = run_harness(
            "--provider=openai",
            "--model=m-1",
            "-m",
            "freeform",
            "--limit=1",
            f"--judge=live:judge-a@http://{judge_host}/v1?key={SECRET}",
            env=env,
            **dirs,
        )
        assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
        basic = "Basic " + base64.b64encode(f"bob:{SECRET}".encode()).decode()
        candidate = [r for r in server.requests if r.body.get("model") == "m-1"]
        judged = [r for r in server.requests if r.body.get("model") == "judge-a"]
        assert candidate and all(r.headers.get("authorization") == basic for r in candidate)
        assert judged and all(r.params.get("key") == SECRET for r in judged)
        for text in (every_text(tmp_path), done.stdout, done.stderr):
            assert SECRET not in text
        (result,) = (tmp_path / "results" / "freeform").glob("*.json")
        config = json.loads(result.read_text())["config"]
        assert (
            config["baseUrl"] == f"http://{host}/v1"
            and config["judges"][0]["baseUrl"] == f"http://{judge_host}/v1"
        )


def test_evaluate_prints_and_saves_the_url_without_its_credential_and_a_resume_asks_for_it(
    tmp_path,
):
    data = tmp_path / "data"
    with OpenAIServer() as server:
        host = server.url.removeprefix("http://")

        def evaluate(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                evaluate_command(data, "Keyed", *args),
                env=harness_env(),
                capture_output=True,
                text=True,
                timeout=300,
            )

        flags = ["--evals=mc", "--limit=2", "--no-build"]
        first = evaluate(
            "--provider=openai",
            "--model=m-1",
            f"--base-url=http://carol:{SECRET}@{host}/v1",
            *flags,
        )
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        basic = "Basic " + base64.b64encode(f"carol:{SECRET}".encode()).decode()
        assert len(server.requests) == 2 and all(
            r.headers.get("authorization") == basic for r in server.requests
        )
        assert f"--base-url=http://{host}/v1" in first.stdout
        for text in (every_text(data), first.stdout, first.stderr):
            assert SECRET not in text and "carol" not in text

        bare = evaluate(*flags)
        assert bare.returncode == 2 and "Traceback" not in bare.stderr
        assert bare.stderr.strip().splitlines() == [
            f"error: http://{host}/v1 was given with credentials (user "
            "info or a key in its query), which are never saved: "
            "pass the URL with them again (--base-url, or --judge PROVIDER:MODEL@URL)"
        ]

        given_again = evaluate(f"--base-url=http://carol:{SECRET}@{host}/v1", *flags)
        assert given_again.returncode == 0 and len(server.requests) == 2, given_again.stdout[
            -3000:
        ]  # the same run: all cached
        assert SECRET not in given_again.stdout + given_again.stderr + every_text(data)


def test_a_credential_in_hf_endpoint_is_not_in_the_message_when_the_hub_cannot_be_reached(tmp_path):
    """HF_ENDPOINT is a URL the Hub client reads: its credentials stay out of the one line too."""
    env = harness_env(HF_ENDPOINT=f"http://dave:{SECRET}@127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))
    done = run_harness(
        "-m",
        "multiple_choice",
        "--provider=reference",
        "--limit=1",
        "--dataset=mc=robloxqa-v2",
        env=env,
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert (
        done.returncode != 0
        and "could not reach the Hub at http://127.0.0.1:9" in done.stdout + done.stderr
    ), done.stdout[-2000:] + done.stderr[-2000:]
    assert SECRET not in done.stdout + done.stderr + every_text(tmp_path)


HUB_WARNS = """
import logging, os
from evals import hub
hub.library()
import huggingface_hub.utils._http  # a module of the library's that logs its retries
logging.getLogger("huggingface_hub.utils._http").warning(
    "Retrying HEAD " + os.environ["HF_ENDPOINT"] + "/datasets/x/resolve/main/test.parquet"
)
"""


def test_a_hub_clients_warning_is_printed_once_without_the_endpoints_credential():
    """The Hub client's own handler prints its warnings (a retry), redacted; one of the
    harness's beside it printed each of them twice."""
    import sys

    from tests.support.harness import ROOT

    done = subprocess.run(
        [sys.executable, "-c", HUB_WARNS],
        cwd=ROOT,
        env=harness_env(HF_ENDPOINT=f"http://dave:{SECRET}@127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 0 and len(lines) == 1, done.stderr
    assert SECRET not in lines[0] and "Retrying HEAD http://<redacted>@127.0.0.1:9" in lines[0]
