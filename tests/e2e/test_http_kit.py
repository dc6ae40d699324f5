"""A third party's HTTP provider written from the public kit alone (`tests.support.json_provider`,
the code docs/writing-a-provider.md shows) runs through `pytest` as a package's provider would:
its answers land in a result file, a 429 is retried and a 5xx too, its key is never written
anywhere, and a rejected key stops the run with one message. The kit in process is
tests/unit/test_http_kit.py.

`pytest` starts warm (tests/support/warm.py) with the provider loaded by `-p`; the loopback
server runs on a thread of the test."""

from __future__ import annotations

import re

from tests.support.harness import harness_env, read_result, result_files, run_harness
from tests.support.loopback.jsonapi_server import JsonApiServer

KEY = "jsonapi-e2e-key-0123456789abcdef"
ENV = harness_env(JSONAPI_KEY=KEY)


def _run(server, tmp_path, *args: str):
    return run_harness("-p", "tests.support.json_provider", "--provider=jsonapi", "--model=tiny-1", f"--base-url={server.url}",
                       "-m", "multiple_choice", "--limit=3", *args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results", env=ENV)


def test_a_provider_from_the_kit_runs_and_its_errors_are_retried(tmp_path):
    with JsonApiServer(lambda request: "B") as server:
        server.fail_next(1, 429, retry_after=0.05)
        server.fail_next(1, 503)
        done = _run(server, tmp_path)
        asked = len(server.requests)

    counts = re.findall(r"(\d+) (?:passed|failed)", done.stdout.strip().splitlines()[-1])
    assert done.returncode in (0, 1) and sum(map(int, counts)) == 3, done.stdout[-3000:] + done.stderr[-2000:]  # 1: a wrong answer
    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["config"]["provider"] == "jsonapi" and result["summary"]["n"] == 3
    assert result["summary"]["apiErrors"] == 0 and asked == 5  # three items, two of them asked again
    assert [row["answer"] for row in result["results"]] == ["B", "B", "B"]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert written and not [path for path in written if KEY in path.read_text(errors="replace")]
    assert KEY not in done.stdout + done.stderr


def test_a_rejected_key_stops_the_run_with_one_message(tmp_path):
    with JsonApiServer(lambda request: "B") as server:
        server.fail_next(100, 401, body={"error": {"message": f"key {KEY} is not known here"}})
        done = _run(server, tmp_path)
        asked = len(server.requests)

    assert done.returncode != 0
    assert "HTTP 401: key <redacted> is not known here; check the API key" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert asked < 3 and not result_files(tmp_path / "results", "multiple_choice")
    assert KEY not in done.stdout + done.stderr
