"""Run a loopback server in its own process.

    python -m tests.support.loopback.serve --kind openai --port 0 --latency 0.2 --log requests.jsonl
    python -m tests.support.loopback.serve --kind anthropic --batch-seconds 5 --log requests.jsonl

The first stdout line is the server URL. Each request is appended to the --log file as a JSON
line at arrival (keys redacted), so a test can SIGKILL the client process and still see what
reached the server, and a benchmark keeps the server out of the measured process.
Stops on SIGTERM / SIGINT.

`tests.support.loopback.ServerProcess` wraps this for tests.
"""

from __future__ import annotations

import argparse
import random
import signal
import threading

from .anthropic_server import AnthropicServer
from .core import Fault
from .openai_server import OpenAIServer

KINDS = {"openai": OpenAIServer, "anthropic": AnthropicServer}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.loopback.serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--kind", choices=KINDS, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--log", help="JSONL file; one line appended per request")
    parser.add_argument(
        "--fail-next",
        type=int,
        default=0,
        metavar="N",
        help="the first N requests get an error reply",
    )
    parser.add_argument(
        "--fail-status", type=int, help="default: the error kind's status, else 429"
    )
    parser.add_argument("--fail-error", help="named error kind, e.g. insufficient_quota")
    parser.add_argument("--retry-after", type=float, help="retry-after seconds on those errors")
    parser.add_argument(
        "--storm",
        type=float,
        default=0.0,
        metavar="P",
        help="each request fails with probability P, by a mix of 429s, 500s, "
        "dropped connections, truncated bodies and stalls",
    )
    parser.add_argument(
        "--stall", type=float, default=30.0, help="seconds a stalled reply waits (default 30)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--batch-seconds",
        type=float,
        default=2.0,
        help="seconds from creating a batch to its end (default 2; 0 ends it at its first read)",
    )
    args = parser.parse_args(argv)

    server = KINDS[args.kind](
        latency=args.latency,
        host=args.host,
        port=args.port,
        log_path=args.log,
        batch_seconds=args.batch_seconds,
    )
    if args.fail_next:
        server.fail_next(
            args.fail_next, args.fail_status, error=args.fail_error, retry_after=args.retry_after
        )
    if args.storm:
        add_storm(server, args.storm, args.stall, random.Random(args.seed))
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    with server:
        print(server.url, flush=True)
        stopped.wait()


# The storm's mix of faults, by share of the faulty requests.
STORM = (
    (0.30, Fault(status=429)),
    (0.10, Fault(status=429, retry_after=1.0)),
    (0.20, Fault(status=500)),
    (0.10, Fault.dropped()),
    (0.10, Fault.malformed_json()),
    (0.20, None),  # a stall: answered after --stall seconds
)


def add_storm(server, probability: float, stall: float, rng: random.Random) -> None:
    """One draw per request, the same sequence for the same seed."""
    faults = [fault or Fault.slow(stall) for _, fault in STORM]
    weights = [share for share, _ in STORM]
    picks: dict[int, Fault | None] = {}
    draw_lock = threading.Lock()

    def pick(request) -> Fault | None:
        with draw_lock:
            if request.index not in picks:
                picks[request.index] = (
                    rng.choices(faults, weights)[0] if rng.random() < probability else None
                )
            return picks[request.index]

    for fault in faults:
        server.inject_when(lambda request, fault=fault: pick(request) is fault, fault)


if __name__ == "__main__":
    main()
