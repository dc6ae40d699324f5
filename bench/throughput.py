"""Harness throughput against a loopback model with a fixed latency.

Runs 400 generated multiple-choice items through `pytest --provider live` against a loopback
OpenAI-compatible server (its own process) that answers every request after 200 ms, with 16
requests in flight, and prints wall time / ideal, where ideal = 400 x 0.2 s / 16. The harness
wall time includes pytest's start-up, as a user sees it; the session's own time (from the
result file's timing) is printed beside it, since start-up is a fixed cost (~1 s here, ~3 s before the SDK moved to the asking process). Then it reruns the finished run and
checks that the rerun makes zero requests.

    uv run python bench/throughput.py [--items 400] [--latency 0.2] [--concurrency 16] [-n 0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.loopback import ServerProcess  # noqa: E402


def write_dataset(path: Path, items: int) -> None:
    with path.open("w") as out:
        for i in range(items):
            choices = [f"Option {c} of question {i}" for c in "ABCD"]
            out.write(json.dumps({"id": f"bench-{i:04d}", "question": f"Benchmark question {i}?", "choices": choices, "answer": "ABCD"[i % 4]}) + "\n")


def run_harness(url: str, dataset: Path, work: Path, concurrency: int, workers: str) -> tuple[float, float]:
    """(wall seconds of the whole command, seconds of the pytest session it reports)."""
    command = [
        sys.executable, "-m", "pytest", "-q", "--provider=live", "--model=bench-model",
        f"--base-url={url}/v1", f"--dataset=mc={dataset}", "-m", "multiple_choice", f"--concurrency={concurrency}",
        f"--run-dir={work / 'runs'}", f"--results-dir={work / 'results'}", "-n", workers,
    ]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if "result file:" not in done.stdout:
        sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    (result,) = (work / "results" / "multiple_choice").glob("*.json")
    return elapsed, json.loads(result.read_text())["timing"]["wallSeconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("-n", dest="workers", default="0", help="xdist workers (default 0)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "bench.jsonl"
        write_dataset(dataset, args.items)
        log = work / "requests.jsonl"
        with ServerProcess("openai", latency=args.latency, log_path=log) as server:
            cold, cold_session = run_harness(server.url, dataset, work, args.concurrency, args.workers)
            cold_requests = len(server.requests())
            warm, _ = run_harness(server.url, dataset, work, args.concurrency, args.workers)
            rerun_requests = len(server.requests()) - cold_requests

    ideal = args.items * args.latency / args.concurrency
    print(f"items {args.items}, latency {args.latency} s, concurrency {args.concurrency}, xdist -n {args.workers}")
    print(f"cold run: {cold:.2f} s wall, ideal {ideal:.2f} s, ratio {cold / ideal:.2f} (target <= 1.5), {cold_requests} requests")
    print(f"  of which start-up (interpreter, pytest, SDK imports): {cold - cold_session:.2f} s;"
          f" the session itself: {cold_session:.2f} s, ratio {cold_session / ideal:.2f}")
    print(f"rerun of the finished run: {warm:.2f} s wall, {rerun_requests} requests (must be 0)")
    if rerun_requests:
        sys.exit("a rerun made requests")


if __name__ == "__main__":
    main()
