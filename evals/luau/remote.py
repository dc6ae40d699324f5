"""Run a solution's tests on a JestLuaTestServer (boatbomber/JestLuaTestServer): real Jest Lua in Roblox Studio.

    run = run_remote(solution_source, test_source, url="http://127.0.0.1:8325", api_key=key)

The request, as the server's `server/app/endpoints/test.py` and `auth.py` take it:

    POST {url}/test
    Content-Type: application/octet-stream
    X-API-Key: <key>                     (only when the server has auth enabled)
    body: a binary model (.rbxm) with exactly one root instance

The Studio plugin (`plugin/src/TestsManager/init.lua`) deserializes that root,
adds a `jest.config` ModuleScript with testMatch `**/*.(spec|test)` when it has
none, and runs `Jest.runCLI` on it. So the upload is a Folder holding two
sibling ModuleScripts: `solution` (the answer) and `solution.spec` (the test
file, which does `require(script.Parent.solution)`; see docs/luau-test-format.md).

The reply is JSON `{"test_id", "status", "results", "error"}`:

    completed  results = Jest's AggregatedResult (numTotalTests, ..., testResults[] each
               with testResults[] of AssertionResults, or testExecError when the file
               could not run): becomes "passed", "failed" or "error" like a local run
    failed     the plugin or Jest could not run the file (error names why; also a test
               that starved Studio's heartbeat, an infinite loop)   -> "error"
    timeout    no outcome within the server's budget                -> "error"
    error      the server failed while handling the test            -> "error"

HTTP errors come back as FastAPI's `{"detail": "..."}`: 401 (no key) and 403
(wrong key), 429 (rate limit), 503 (shutting down), 400 and 413 (bad or too
large model). 429 and 502/503/504 are retried with backoff, honouring
Retry-After; when every attempt is refused the run is an "error" TestRun.
Everything that is the harness's or the server's fault rather than the
model's (server unreachable, key rejected, no reply in time, a reply that is
not the protocol) raises `JestServerError`, so it never counts against the
model. The API key never appears in a message.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from evals.errors import (
    RemoteGraderError as JestServerError,
)  # its name here, for the Jest-Lua server

from .rbxm import folder_rbxm
from .result import TestRun

__all__ = [
    "FOLDER_NAME",
    "SOLUTION_MODULE",
    "SPEC_MODULE",
    "JestServerError",
    "build_model",
    "run_remote",
]

FOLDER_NAME = "LuauEval"  # must not contain "Packages": the plugin's jest.config ignores such paths
SOLUTION_MODULE = "solution"  # the test file requires script.Parent.solution
SPEC_MODULE = "solution.spec"  # matches the plugin's testMatch **/*.(spec|test)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRY_WAIT = 60.0  # a longer Retry-After is cut to this
_REASON_LIMIT = 500
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def build_model(solution: str, tests: str) -> bytes:
    """The .rbxm uploaded for one run: Folder LuauEval { ModuleScript solution, ModuleScript solution.spec }."""
    return folder_rbxm(FOLDER_NAME, {SOLUTION_MODULE: solution, SPEC_MODULE: tests})


def run_remote(
    solution: str,
    tests: str,
    *,
    url: str,
    api_key: str | None,
    timeout: float = 60.0,
    client: httpx.Client | None = None,
    work_budget: int | None = None,
    attempts: int = 6,
    retry_delay: float = 1.0,
) -> TestRun:
    """Run `tests` against `solution` on the JestLuaTestServer at `url`.

    timeout: seconds to wait for each reply (the server queues tests and keeps
      its own per-test time limit, so this should be well above it).
    work_budget: accepted for the same call shape as `run_tests`; the server
      has no work counter (its limit is time), so it is ignored and `work` is 0.
    attempts, retry_delay: how many requests a busy server (HTTP 429, 502, 503,
      504) gets, and the first backoff in seconds (doubling, with jitter) when
      the reply has no Retry-After.
    Raises JestServerError when the server cannot be used (see the module doc).
    """
    del work_budget  # the server limits time, not work
    started = time.perf_counter()
    request = _Request.to(url, build_model(solution, tests), api_key=api_key, seconds=timeout)
    own_client = client is None
    if client is None:
        client = httpx.Client(timeout=request.timeout)
    try:
        response = _post_until_taken(client, request, attempts=attempts, retry_delay=retry_delay)
        return _read_reply(response, request.shown, api_key, started)
    finally:
        if own_client:
            client.close()


# -- the request ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    """One test's POST: where, what and how long to wait, and how its messages name the server."""

    endpoint: str
    body: bytes
    headers: dict[str, str]
    seconds: float  # the wait for each reply
    shown: str  # the server's URL as a message shows it (see _display_url)
    api_key: str | None  # sent as X-API-Key when set, and blanked in every message

    @classmethod
    def to(cls, url: str, body: bytes, *, api_key: str | None, seconds: float) -> _Request:
        """The POST of `body` (a model, see build_model) to the server at `url`."""
        headers = {"Content-Type": "application/octet-stream", "Accept": "application/json"}
        if api_key:
            headers["X-API-Key"] = api_key
        return cls(url.rstrip("/") + "/test", body, headers, seconds, _display_url(url), api_key)

    @property
    def timeout(self) -> httpx.Timeout:
        """The wait for each reply, and at most 10 s of it to connect."""
        return httpx.Timeout(self.seconds, connect=min(self.seconds, 10.0))


def _post_until_taken(
    client: httpx.Client, request: _Request, *, attempts: int, retry_delay: float
) -> httpx.Response:
    """The server's reply to `request` once it is not busy: a busy reply (RETRY_STATUSES) and a
    dropped connection are tried again, up to `attempts` requests, backing off between them;
    raises JestServerError when every attempt was busy or dropped, or the server cannot be used."""
    shown, api_key = request.shown, request.api_key
    for attempt in range(1, attempts + 1):
        try:
            response = _post(client, request)
        except httpx.TransportError as error:  # dropped connection, garbled HTTP
            if attempt == attempts:
                raise JestServerError(
                    f"JestLuaTestServer at {shown} dropped the connection {attempts} times "
                    f"({_clean(str(error), api_key) or type(error).__name__}): check the server's log"
                ) from None
            time.sleep(_backoff(attempt, retry_delay))
            continue
        if response.status_code not in RETRY_STATUSES:
            return response
        if attempt == attempts:
            # A busy server is not the model's fault: no verdict, the item errors and a rerun retries it.
            raise JestServerError(
                f"JestLuaTestServer at {shown} still busy (HTTP {response.status_code}) after {attempts} attempts: "
                "lower --concurrency or rerun later"
            )
        wait = _retry_after(response)
        time.sleep(_backoff(attempt, retry_delay) if wait is None else wait)
    raise AssertionError(f"attempts must be at least 1, not {attempts}")


def _post(client: httpx.Client, request: _Request) -> httpx.Response:
    """One POST of `request`: raises JestServerError when the server cannot be used (a bad URL,
    nothing listening, no reply in time), and lets a dropped connection's error through to be
    tried again."""
    shown, api_key = request.shown, request.api_key
    try:
        return client.post(
            request.endpoint, content=request.body, headers=request.headers, timeout=request.timeout
        )
    except (httpx.UnsupportedProtocol, httpx.InvalidURL):
        raise JestServerError(
            f"--jest-url {shown!r} is not a usable http(s) URL: fix it or drop --jest-url"
        ) from None
    except (httpx.ConnectError, httpx.ConnectTimeout) as error:
        raise JestServerError(
            f"cannot reach JestLuaTestServer at {shown} ({_clean(str(error), api_key) or type(error).__name__}): "
            "start JestLuaTestServer or drop --jest-url"
        ) from None
    except httpx.TimeoutException:
        raise JestServerError(
            f"JestLuaTestServer at {shown} sent no reply within {request.seconds:.1f} s: "
            "it may be overloaded; lower --concurrency or raise --luau-timeout"
        ) from None


# -- the reply -----------------------------------------------------------------------------


def _read_reply(
    response: httpx.Response, shown: str, api_key: str | None, started: float
) -> TestRun:
    status = response.status_code
    if status in (401, 403):
        detail = _detail(response, api_key)
        problem = "requires an API key" if status == 401 else "rejected the API key"
        raise JestServerError(
            f"JestLuaTestServer at {shown} {problem} (HTTP {status}{': ' + detail if detail else ''}): "
            "set JEST_SERVER_API_KEY to a key from the server's api_keys.txt"
        )
    if status != 200:
        detail = _detail(response, api_key)
        raise JestServerError(
            f"JestLuaTestServer at {shown} refused the test (HTTP {status}{': ' + detail if detail else ''}): "
            "check the server's log"
        )
    try:
        reply = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("status"), str):
        raise JestServerError(
            f"JestLuaTestServer at {shown} sent a reply that is not the /test protocol "
            f"(JSON with a status): {_clean(response.text, api_key)[:200]!r}"
        )
    elapsed = time.perf_counter() - started
    outcome = reply["status"]
    if outcome == "completed":
        results = reply.get("results")
        if not isinstance(results, dict):
            raise JestServerError(
                f"JestLuaTestServer at {shown} reported 'completed' without Jest results"
            )
        return _from_jest(results, elapsed, api_key)
    if outcome in ("failed", "timeout", "error"):
        message = _clean(str(reply.get("error") or ""), api_key)
        return TestRun.error(
            message or f"JestLuaTestServer reported '{outcome}' without a message", elapsed=elapsed
        )
    raise JestServerError(
        f"JestLuaTestServer at {shown} reported an unknown status {_clean(outcome, api_key)[:60]!r}"
    )


def _from_jest(results: dict[str, Any], elapsed: float, api_key: str | None) -> TestRun:
    """A TestRun from Jest's AggregatedResult (runCLI's `results`), or from its --json form."""
    tests: list[dict[str, Any]] = []
    exec_errors: list[str] = []
    for suite in _list(results.get("testResults")):
        if not isinstance(suite, dict):
            continue
        assertions = _list(suite.get("testResults")) or _list(suite.get("assertionResults"))
        tests += [_test(entry, api_key) for entry in assertions if isinstance(entry, dict)]
        error = suite.get("testExecError")
        if error:
            exec_errors.append(_message(error, api_key))
        elif "assertionResults" in suite and not assertions and suite.get("status") == "failed":
            exec_errors.append(
                _message(suite.get("message") or "the test file failed to run", api_key)
            )
    if not exec_errors and _number(results.get("numRuntimeErrorTestSuites")):
        exec_errors.append("the test file failed to run")
    if not exec_errors and results.get("wasInterrupted") is True:
        exec_errors.append("the Jest run was interrupted")
    exec_error = f"test suite failed to run: {exec_errors[0]}" if exec_errors else None
    return TestRun.from_tests(
        tests, exec_error=exec_error, failure_cause=None, output="", work=0, elapsed=elapsed
    )


def _test(entry: dict[str, Any], api_key: str | None) -> dict[str, Any]:
    status = entry.get("status")
    return {
        "title": _text(entry.get("title")),
        "fullName": _text(entry.get("fullName")),
        "ancestorTitles": [_text(title) for title in _list(entry.get("ancestorTitles"))],
        "status": status
        if status in ("passed", "failed")
        else "pending",  # skipped, todo, disabled, pending
        "failureMessages": [
            _clean(_text(m), api_key, one_line=False) for m in _list(entry.get("failureMessages"))
        ],
    }


def _message(error: Any, api_key: str | None) -> str:
    """The first line of a SerializableError ({message, stack}) or of a plain string."""
    if isinstance(error, dict):
        error = error.get("message") or error.get("stack") or json.dumps(error)[:_REASON_LIMIT]
    return _clean(_text(error), api_key) or "the test file failed to run"


def _list(value: Any) -> list:
    """A JSON array; Roblox's JSONEncode writes an empty table as [] or {} alike."""
    return value if isinstance(value, list) else []


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _clean(text: str, api_key: str | None, *, one_line: bool = True) -> str:
    """Server text made safe to show: colour codes removed, the key blanked, cut to one short line."""
    text = _ANSI.sub("", text)
    if api_key:
        text = text.replace(api_key, "<redacted>")
    if not one_line:
        return text
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= _REASON_LIMIT else line[: _REASON_LIMIT - 1] + "…"


def _detail(response: httpx.Response, api_key: str | None) -> str:
    """FastAPI's {"detail": ...}, else the start of the body."""
    try:
        detail = response.json().get("detail")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        detail = response.text
    if not isinstance(detail, str):
        detail = json.dumps(detail)
    return _clean(detail, api_key)[:200]


# -- retries -------------------------------------------------------------------------------


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds asked for by Retry-After (delta-seconds or an HTTP date), at most MAX_RETRY_WAIT."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_WAIT)


def _backoff(attempt: int, base: float) -> float:
    """Exponential backoff with jitter in [50%, 100%] of base * 2^(attempt-1), at most MAX_RETRY_WAIT."""
    return min(MAX_RETRY_WAIT, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)


def _display_url(url: str) -> str:
    """The URL without any user:password part, for messages."""
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return "<unparsable URL>"
