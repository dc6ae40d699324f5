"""A loopback JestLuaTestServer: the `POST /test` contract of boatbomber/JestLuaTestServer, scripted.

    with JestServer(api_keys={"k1"}) as server:
        server.script(http(503), completed(aggregated([assertion("adds")])))
        run_remote(solution, tests, url=server.url, api_key="k1", retry_delay=0.01)
        server.requests[-1].model   # the uploaded .rbxm, parsed

Per request, in the real server's order (server/app/endpoints/test.py, auth.py):
X-API-Key check (401 missing, 403 unknown; skipped when api_keys is None),
then the next scripted step. A refusal step (`http(429)`, `http(503)`, ...)
answers before the body is looked at, as the rate limit and shutdown checks
do. Any other step first checks the upload as the server and the Studio
plugin would: empty or not starting with `<roblox!` is HTTP 400; a model that
does not parse, or has more than one root, is status "failed" (the plugin's
DeserializeInstancesAsync and its one-root assert). When the script is empty
the `default` step answers. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evals.luau import run_tests

from .rbxm_reader import RbxInstance, RbxmError, read_rbxm

TEST_MATCH = re.compile(r".*\.(spec|test)$")  # the plugin's jest.config testMatch **/*.(spec|test)


@dataclass
class Upload:
    """What a scripted step sees: the parsed model (root first) and the raw body."""

    model: list[RbxInstance]
    body: bytes

    def children(self, parent: int = 0) -> list[RbxInstance]:
        return [instance for instance in self.model if instance.parent == parent]


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes -> as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering


Step = Callable[[Upload | None], Reply]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # keys lowercased
    body: bytes
    model: list[RbxInstance] | None  # None when the body was not parsed
    model_error: str | None
    reply_status: int

    @property
    def api_key(self) -> str | None:
        return self.headers.get("x-api-key")


# -- scripted steps --------------------------------------------------------------------------


def _outcome(status: str, *, results: dict | None = None, error: str | None = None) -> Reply:
    return Reply(
        200,
        {
            "test_id": "00000000-0000-4000-8000-000000000000",
            "status": status,
            "results": results,
            "error": error,
        },
    )


def completed(results: dict) -> Step:
    return lambda upload: _outcome("completed", results=results)


def failed(error: str = "Failed to run test: boom") -> Step:
    return lambda upload: _outcome("failed", error=error)


def timeout(error: str = "Test execution timed out after 12 seconds.") -> Step:
    return lambda upload: _outcome("timeout", error=error)


def error(message: str = "Studio is not running") -> Step:
    return lambda upload: _outcome("error", error=message)


def raw(status: int, body: bytes, headers: dict[str, str] | None = None) -> Step:
    return lambda upload: Reply(status, body, dict(headers or {}))


def slow(seconds: float, then: Step) -> Step:
    def step(upload: Upload | None) -> Reply:
        reply = then(upload)
        reply.delay = seconds
        return reply

    return step


def drop() -> Step:
    return lambda upload: Reply(status=0, drop=True)


class _Refusal:
    """A step answered before the body is looked at (rate limit, shutdown, ...)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str]):
        self.status, self.detail, self.headers = status, detail, headers

    def __call__(self, upload: Upload | None) -> Reply:
        return Reply(self.status, {"detail": self.detail}, dict(self.headers))


_DETAILS = {
    429: "Rate limit exceeded. Maximum 500 requests per minute",
    503: "Server is shutting down, not accepting new tests",
    502: "Bad Gateway",
    500: "Internal Server Error",
    413: "RBXM file too large. Maximum size is 50MB",
}


def http(status: int, detail: str | None = None, *, retry_after: str | None = None) -> Step:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return _Refusal(
        status, detail if detail is not None else _DETAILS.get(status, "error"), headers
    )


def run_locally() -> Step:
    """Find the spec and its sibling `solution` in the upload as Jest Lua would, run them with
    evals.luau.run_tests and answer with Jest's AggregatedResult (an end-to-end stand-in for Studio)."""

    def step(upload: Upload | None) -> Reply:
        assert upload is not None
        modules = {m.name: m for m in upload.children(0) if m.class_name == "ModuleScript"}
        specs = [m for name, m in modules.items() if TEST_MATCH.match(name)]
        if len(specs) != 1 or "solution" not in modules:
            return _outcome(
                "failed",
                error=f"Failed to run test: expected one spec and a solution, got {sorted(modules)}",
            )
        run = run_tests(modules["solution"].properties["Source"], specs[0].properties["Source"])
        exec_error = (
            run.aggregated["testExecError"] if run.status == "error" and not run.tests else None
        )
        entries = [
            assertion(
                t["title"],
                t["status"],
                t["failureMessages"],
                t["ancestorTitles"],
                full_name=t["fullName"],
            )
            for t in run.tests
        ]
        return _outcome("completed", results=aggregated(entries, exec_error=exec_error))

    return step


# -- Jest result shapes ----------------------------------------------------------------------


def assertion(
    title: str,
    status: str = "passed",
    messages=(),
    ancestors=("suite",),
    *,
    full_name: str | None = None,
) -> dict:
    """One AssertionResult as Jest Lua's runCLI reports it."""
    return {
        "ancestorTitles": list(ancestors),
        "duration": 1,
        "failureDetails": [{} for _ in messages],
        "failureMessages": list(messages),
        "fullName": full_name if full_name is not None else " ".join([*ancestors, title]),
        "location": None,
        "numPassingAsserts": 0,
        "status": status,
        "title": title,
    }


def aggregated(
    assertions: list[dict],
    *,
    exec_error: str | None = None,
    formatted: bool = False,
    path: str = "LuauEval/solution.spec",
) -> dict:
    """Jest's AggregatedResult for one test file: runCLI's `results` (what the Studio plugin sends back),
    or with formatted=True the --json shape (testResults[].assertionResults)."""
    count = {
        s: sum(a["status"] == s for a in assertions)
        for s in ("passed", "failed", "pending", "todo")
    }
    if formatted:
        suite: dict[str, Any] = {
            "assertionResults": [
                {
                    k: a[k]
                    for k in ("ancestorTitles", "fullName", "status", "title", "failureMessages")
                }
                for a in assertions
            ],
            "message": exec_error or "",
            "name": path,
            "status": "failed" if exec_error or count["failed"] else "passed",
            "summary": "",
            "startTime": 0,
            "endTime": 1,
        }
    else:
        suite = {
            "failureMessage": exec_error,
            "leaks": False,
            "numFailingTests": count["failed"],
            "numPassingTests": count["passed"],
            "numPendingTests": count["pending"],
            "numTodoTests": count["todo"],
            "openHandles": [],
            "perfStats": {"end": 1, "runtime": 1, "slow": False, "start": 0},
            "skipped": False,
            "snapshot": {
                "added": 0,
                "fileDeleted": False,
                "matched": 0,
                "unchecked": 0,
                "uncheckedKeys": [],
                "unmatched": 0,
                "updated": 0,
            },
            "testFilePath": path,
            "testResults": assertions,
        }
        if exec_error:
            suite["testExecError"] = {
                "message": exec_error,
                "stack": exec_error + "\nstack traceback:\n  [string]:1",
            }
    return {
        "numFailedTestSuites": int(bool(exec_error or count["failed"])),
        "numFailedTests": count["failed"],
        "numPassedTestSuites": int(not (exec_error or count["failed"])),
        "numPassedTests": count["passed"],
        "numPendingTestSuites": 0,
        "numPendingTests": count["pending"],
        "numRuntimeErrorTestSuites": int(bool(exec_error)),
        "numTodoTests": count["todo"],
        "numTotalTestSuites": 1,
        "numTotalTests": len(assertions),
        "openHandles": [],
        "snapshot": {},
        "startTime": 0,
        "success": not (exec_error or count["failed"]),
        "testResults": [suite],
        "wasInterrupted": False,
    }


# -- the server ------------------------------------------------------------------------------


class JestServer:
    def __init__(self, *, api_keys: set[str] | None = None, default: Step | None = None):
        self.api_keys = api_keys
        self.default = default or completed(aggregated([assertion("passes")]))
        self.requests: list[Recorded] = []
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *steps: Step) -> JestServer:
        with self._lock:
            self._steps.extend(steps)
        return self

    def __enter__(self) -> JestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_step(self) -> Step:
        with self._lock:
            return self._steps.popleft() if self._steps else self.default

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        model, model_error = None, None
        if path != "/test":
            reply = Reply(404, {"detail": "Not Found"})
        elif method != "POST":
            reply = Reply(405, {"detail": "Method Not Allowed"})
        elif self.api_keys is not None and not headers.get("x-api-key"):
            reply = Reply(401, {"detail": "X-API-Key header required"})
        elif self.api_keys is not None and headers["x-api-key"] not in self.api_keys:
            reply = Reply(403, {"detail": "Invalid API key"})
        else:
            step = self._next_step()
            if isinstance(step, _Refusal):
                reply = step(None)
            elif not body:
                reply = Reply(400, {"detail": "No rbxm data provided"})
            elif not body.startswith(b"<roblox!"):
                reply = Reply(
                    400,
                    {"detail": "Invalid RBXM file format. File must be a valid Roblox model file"},
                )
            else:
                try:
                    model = read_rbxm(body)
                except RbxmError as problem:
                    model_error = str(problem)
                roots = [i for i in model or [] if i.parent is None]
                if model_error is not None:
                    reply = _outcome("failed", error=f"Failed to run test: {model_error}")
                elif len(roots) != 1 or model[0].parent is not None:
                    reply = _outcome(
                        "failed",
                        error="Failed to run test: Expected exactly one root instance in the rbxm",
                    )
                else:
                    reply = step(Upload(model, body))
        with self._lock:
            self.requests.append(
                Recorded(method, path, headers, body, model, model_error, reply.status)
            )
        return reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address) -> None:
        # A client that gave up (the read-timeout test) breaks the pipe; anything else is a bug here.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def _handler_for(server: JestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {key.lower(): value for key, value in self.headers.items()}
            reply = server._answer(self.command, self.path.split("?", 1)[0], headers, body)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.drop:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            payload = (
                reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            )
            self.send_response(reply.status)
            if not isinstance(reply.body, bytes):
                self.send_header("Content-Type", "application/json")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_POST = do_GET = _handle

    return Handler
