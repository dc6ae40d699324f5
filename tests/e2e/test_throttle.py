"""The throttle in whole runs, counted at the server: at most `--concurrency` requests in flight
per endpoint however many evals and xdist workers ask it, and threads held by stalled requests
made up for. The throttle on a fake clock is tests/unit/test_throttle.py.

`pytest` starts warm (tests/support/warm.py), its xdist workers processes of their own, against a
loopback server on a thread of the test that counts the requests in flight."""

from __future__ import annotations

# -- one limit per endpoint, counted at the server ---------------------------------------------
import pytest  # noqa: E402

from tests.support.harness import Student, run_harness  # noqa: E402
from tests.support.loopback import OpenAIServer  # noqa: E402


@pytest.mark.parametrize("workers", ["0", "2"])
def test_concurrency_is_one_limit_per_endpoint_across_evals_and_workers(tmp_path, workers):
    """Three evals, each asking the same candidate endpoint, and three judges: at most
    --concurrency requests in flight per endpoint (model) at the server, however many evals
    and xdist workers ask it."""
    with OpenAIServer(Student(), latency=0.05) as server:
        judges = [f"--judge=live:judge-{x}@{server.url}/v1" for x in "abc"]
        done = run_harness(
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            *judges,
            "--limit=12",
            "--concurrency=3",
            "-n",
            workers,
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        peaks = dict(server.peak_in_flight)
    assert "result file:" in done.stdout, done.stdout[-3000:]
    assert set(peaks) == {"student-1", "judge-a", "judge-b", "judge-c"}
    assert all(peak <= 3 for peak in peaks.values()), peaks
    assert peaks["student-1"] >= 2  # and the limit is used, not one request at a time


def test_threads_held_by_stalled_requests_are_made_up_for(tmp_path):
    """The first three requests stall for 12 s, as many as the threads a limit of 2 starts
    with: once they count as stalled (5 s), the pool grows by as many threads, and the other
    items are asked while the stalls go on, instead of after them."""
    from tests.support.loopback import Fault

    with OpenAIServer(lambda request: "Answer: A") as server:
        server.inject(Fault(delay=12.0), 3)
        done = run_harness(
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            "--concurrency=2",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        arrivals = [request.timestamp for request in server.requests]
    assert "result file:" in done.stdout, done.stdout[-3000:]
    assert len(arrivals) == 40
    assert (
        sum(arrival < arrivals[0] + 11 for arrival in arrivals) == 40
    )  # every item asked before the stalls end
