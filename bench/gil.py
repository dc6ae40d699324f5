"""Threads or one event loop for the model calls, beside a busy pytest thread.

The same N requests through the openai SDK's `client.post` (as the openai provider makes
them) against a loopback server in its own process that answers after 200 ms (--latency), 64
at a time: from 64 threads with the sync client (as the prefetch threads do), then from one
asyncio loop with the async client. Each both alone and beside a thread that only computes (as
pytest's thread does while it runs items). Prints the CPU per call of the calling threads and
the wall time against ideal (N x latency / 64).

    uv run python bench/gil.py [--calls 1280] [--latency 0.2] [--switch-interval 0.005] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable

import openai

from bench._common import parse_args
from tests.support.loopback import ServerProcess

IN_FLIGHT = 64
SMOKE = {"calls": IN_FLIGHT, "latency": 0.02}
BODY = {
    "model": "bench-model",
    "messages": [{"role": "user", "content": "Benchmark question 1? A) a B) b C) c D) d"}],
}


def with_threads(url: str, calls: int) -> float:
    """Thread CPU seconds of `calls` requests from IN_FLIGHT threads."""
    client = openai.OpenAI(api_key="fake-bench-key", base_url=f"{url}/v1", max_retries=0)
    spent: list[float] = []

    def work() -> None:
        started = time.thread_time()
        for _ in range(calls // IN_FLIGHT):
            json.loads(
                client.post("/chat/completions", body=BODY, cast_to=bytes, options={"timeout": 60})
            )
        spent.append(time.thread_time() - started)

    threads = [threading.Thread(target=work) for _ in range(IN_FLIGHT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(spent) != IN_FLIGHT:
        raise RuntimeError(f"{IN_FLIGHT - len(spent)} of the {IN_FLIGHT} threads failed")
    return sum(spent)


def with_event_loop(url: str, calls: int) -> float:
    """The loop thread's CPU seconds for `calls` requests, IN_FLIGHT at a time."""

    async def main() -> float:
        client = openai.AsyncOpenAI(api_key="fake-bench-key", base_url=f"{url}/v1", max_retries=0)
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def one() -> None:
            async with slots:
                json.loads(
                    await client.post(
                        "/chat/completions", body=BODY, cast_to=bytes, options={"timeout": 60}
                    )
                )

        started = time.thread_time()
        await asyncio.gather(*(one() for _ in range(calls)))
        return time.thread_time() - started

    return asyncio.run(main())


def measure(
    label: str, ask: Callable[[str, int], float], url: str, calls: int, latency: float, busy: bool
) -> None:
    stop = threading.Event()

    def compute() -> None:  # pure Python, never waiting: it drops the GIL only when made to
        total = 0
        while not stop.is_set():
            for i in range(1000):
                total += i

    ask(url, IN_FLIGHT)  # connections made, code warm
    other = threading.Thread(target=compute)
    if busy:
        other.start()
    result: list[float] = []
    started = time.monotonic()
    caller = threading.Thread(target=lambda: result.append(ask(url, calls)))
    caller.start()
    caller.join()
    wall = time.monotonic() - started
    stop.set()
    if busy:
        other.join()
    if not result:
        raise SystemExit(f"{label}: the calls failed")
    ideal = calls * latency / IN_FLIGHT
    print(
        f"{label:<12} {'beside a busy thread' if busy else 'alone':<21} "
        f"{1000 * result[0] / calls:5.2f} ms CPU per call, "
        f"wall {wall:5.1f} s ({wall / ideal:.1f} x ideal)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1280)
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the server takes per reply"
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=sys.getswitchinterval(),
        help="sys.setswitchinterval (default 0.005 s)",
    )
    args = parse_args(parser, SMOKE)
    sys.setswitchinterval(args.switch_interval)
    print(
        f"{args.calls} calls, {IN_FLIGHT} in flight, {args.latency * 1000:g} "
        f"ms each, switch interval {args.switch_interval * 1000:g} ms"
    )
    with ServerProcess("openai", latency=args.latency) as server:
        for busy in (False, True):
            measure("64 threads", with_threads, server.url, args.calls, args.latency, busy)
            measure("event loop", with_event_loop, server.url, args.calls, args.latency, busy)


if __name__ == "__main__":
    main()
