"""Harness throughput against a loopback model with a fixed latency.

Runs 400 generated multiple-choice items through `pytest --provider live` against a loopback
OpenAI-compatible server (its own process) that answers every request after 200 ms, with 16
requests in flight, and prints wall time / ideal, where ideal = 400 x 0.2 s / 16. The harness
wall time includes pytest's start-up, as a user sees it; the session's own time (from the
result file's timing) is printed beside it, since start-up is a fixed cost. Then it reruns
the finished run and checks that the rerun makes zero requests.

    uv run python bench/throughput.py [--items 400] [--latency 0.2] [--concurrency 16] [-n 0] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench._common import parse_args, run_harness, write_dataset
from tests.support.loopback import ServerProcess

SMOKE = {"items": 12, "latency": 0.02, "concurrency": 4}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("-n", dest="workers", default="0", help="xdist workers (default 0)")
    args = parse_args(parser, SMOKE)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "bench.jsonl"
        write_dataset(dataset, args.items)
        log = work / "requests.jsonl"
        with ServerProcess("openai", latency=args.latency, log_path=log) as server:
            cold, cold_session = run_harness(
                server.url, dataset, work, args.concurrency, args.workers
            )
            cold_requests = len(server.requests())
            warm, _ = run_harness(server.url, dataset, work, args.concurrency, args.workers)
            rerun_requests = len(server.requests()) - cold_requests

    ideal = args.items * args.latency / args.concurrency
    print(
        f"items {args.items}, latency {args.latency} s, concurrency {args.concurrency}, xdist -n {args.workers}"
    )
    print(
        f"cold run: {cold:.2f} s wall, ideal {ideal:.2f} s, ratio "
        f"{cold / ideal:.2f} (target <= 1.5), {cold_requests} requests"
    )
    print(
        f"  of which start-up (interpreter, pytest, SDK imports): {cold - cold_session:.2f} s;"
        f" the session itself: {cold_session:.2f} s, ratio {cold_session / ideal:.2f}"
    )
    print(f"rerun of the finished run: {warm:.2f} s wall, {rerun_requests} requests (must be 0)")
    if rerun_requests:
        raise SystemExit("a rerun made requests")


if __name__ == "__main__":
    main()
