"""The harness in a fault storm, as a ratio to a clean run of the same items.

Runs generated multiple-choice items through `pytest --provider live` against a loopback
OpenAI-compatible server (its own process) twice: clean, then with --storm P (each request
fails with probability P: 429s with and without Retry-After, 500s, dropped connections,
truncated bodies, and stalls that answer only after --stall seconds). Prints both session
times, the ratio, and the errors left in the result file (must be 0: everything is retried;
any left make it exit non-zero). A throttle that collapses under the 429s and never recovers
lets each stall block the run.

    uv run python bench/storm.py [--items 400] [--latency 0.2] [--concurrency 16] [--storm 0.3] [--stall 30] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench._common import parse_args, run_harness, write_dataset
from tests.support.loopback import ServerProcess

SMOKE = {"items": 12, "latency": 0.02, "concurrency": 4, "stall": 0.5}


def session(url: str, dataset: Path, work: Path, concurrency: int) -> tuple[float, dict]:
    _, seconds = run_harness(url, dataset, work, concurrency, "0")
    (result,) = (work / "results" / "multiple_choice").glob("*.json")
    return seconds, json.loads(result.read_text())["summary"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--storm", type=float, default=0.3)
    parser.add_argument("--stall", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parse_args(parser, SMOKE)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "bench.jsonl"
        write_dataset(dataset, args.items)
        with ServerProcess("openai", latency=args.latency) as server:
            clean, _ = session(server.url, dataset, work / "clean", args.concurrency)
        storm_args = [
            "--storm",
            str(args.storm),
            "--stall",
            str(args.stall),
            "--seed",
            str(args.seed),
        ]
        with ServerProcess(
            "openai", latency=args.latency, extra_args=storm_args, log_path=work / "storm.jsonl"
        ) as server:
            stormy, summary = session(server.url, dataset, work / "storm", args.concurrency)
            requests = len(server.requests())

    floor = max(clean, args.stall)  # no run can beat its slowest stall
    print(
        f"items {args.items}, latency {args.latency} s, concurrency "
        f"{args.concurrency}, storm {args.storm:.0%}, stalls {args.stall} s"
    )
    print(f"clean session: {clean:.2f} s")
    print(f"storm session: {stormy:.2f} s, {requests} requests, apiErrors {summary['apiErrors']}")
    print(
        f"storm / clean: {stormy / clean:.2f};  storm / max(clean, one stall): {stormy / floor:.2f}"
    )
    if summary["apiErrors"]:
        raise SystemExit("errors were left in the result file: every fault must be retried")


if __name__ == "__main__":
    main()
