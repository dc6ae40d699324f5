"""CPU per item and the request phase against a loopback model with a fixed latency.

For each case (items / requests in flight: 400/16, 400/64, 2,000/64) it runs generated
multiple-choice items through `pytest --provider live` against a loopback OpenAI-compatible
server in its own process that answers every request after 200 ms, and prints, beside each
figure's goal:

- the request phase / ideal: from the first request's arrival at the server to the last
  one's reply (its arrival + the latency), read from the server's log; ideal = items x
  latency / in flight;
- the whole command / ideal: launch to exit, start-up and teardown included;
- CPU ms per item: the command's CPU time (user + system, every process it started: xdist
  workers too) beyond a one-item run of the same command (start-up), divided by the items
  beyond one. The total per item, start-up included, is printed beside it.

`--breakdown` adds one run of the last case with a probe (`bench/probes/cpu_probe.py`, in
pytest's process and in the processes asking the model) that splits the CPU time per item
between pytest's thread and the asking processes, and names the SDK's request and the cache's
lookups, locks and stores (each thread's own CPU time).

    uv run python bench/cpu.py [--cases 400/16 400/64 2000/64] [-n 0] [--repeat 1] [--latency 0.2]
                               [--breakdown] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import PYCACHE, ROOT, parse_args, write_dataset
from tests.support.loopback import ServerProcess

REQUEST_PHASE_GOAL = 1.3  # at 2,000 items / 64 in flight (issue 12, goal 2)
SMOKE = {"cases": ["12/4"], "latency": 0.02, "breakdown": True}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(
    url: str,
    dataset: Path,
    work: Path,
    concurrency: int,
    workers: str,
    extra: list[str] = (),
    env_extra: dict[str, str] | None = None,
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one harness command, cold cache."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--provider=live",
        "--model=bench-model",
        f"--base-url={url}/v1",
        f"--dataset=mc={dataset}",
        "-m",
        "multiple_choice",
        f"--concurrency={concurrency}",
        f"--run-dir={work / 'runs'}",
        f"--results-dir={work / 'results'}",
        "-n",
        workers,
        *extra,
    ]
    env = {
        **os.environ,
        "OPENAI_API_KEY": "fake-bench-key",
        "PYTHONPYCACHEPREFIX": str(PYCACHE),
        **(env_extra or {}),
    }
    env.pop(
        "PYTHONDONTWRITEBYTECODE", None
    )  # as a user's second run: bytecode compiled once, not at every launch
    cpu = (
        children_cpu()
    )  # the server is a child too, but still running: not counted until it is waited for
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    if done.returncode not in (0, 1) or ("result file:" not in done.stdout and not extra):
        sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall, children_cpu() - cpu


def measure(items: int, concurrency: int, latency: float, workers: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "bench.jsonl"
        write_dataset(dataset, items)
        log = work / "requests.jsonl"
        with ServerProcess("openai", latency=latency, log_path=log) as server:
            _, startup_cpu = run_command(
                server.url, dataset, work / "one", concurrency, workers, ["--limit=1"]
            )
            before = len(server.requests())
            wall, cpu = run_command(server.url, dataset, work / "all", concurrency, workers)
            arrivals = [r["timestamp"] for r in server.requests()[before:]]
    if len(arrivals) != items:
        sys.exit(f"expected {items} requests, the server saw {len(arrivals)}")
    ideal = items * latency / concurrency
    return {
        "request": (max(arrivals) + latency - min(arrivals)) / ideal,
        "command": wall / ideal,
        "cpu_ms": 1000 * (cpu - startup_cpu) / (items - 1),
        "cpu_total_ms": 1000 * cpu / items,
    }


def breakdown(items: int, concurrency: int, latency: float) -> None:
    """One -n 0 run with `bench.probes.cpu_probe` in pytest's process and in the asking
    processes: the CPU per item, by process, thread and part."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "bench.jsonl"
        write_dataset(dataset, items)
        # The asking processes load the probe at start-up, from a sitecustomize on their path.
        (work / "sitecustomize.py").write_text(
            "import sys\nif 'evals.askers.processes' in sys.orig_argv:\n    import bench.probes.cpu_probe\n"
        )
        with ServerProcess("openai", latency=latency) as server:
            env = {"PYTHONPATH": str(work), "CPU_PROBE": str(work / "probe.json")}
            run_command(
                server.url, dataset, work, concurrency, "0", ["-p", "bench.probes.cpu_probe"], env
            )
        figures = json.loads((work / "probe.json").read_text())
        asking = [json.loads(path.read_text()) for path in work.glob("probe.json.*")]
    n = figures.pop("items")
    for child in asking:
        child["asking processes: all their CPU, start-up included"] = child.pop("process")
        for part, spent in child.items():
            figures[part] = figures.get(part, 0) + spent
    print(
        f"breakdown at {items}/{concurrency}, -n 0, {len(asking)} "
        "asking processes, CPU ms per item (each thread's own time):"
    )
    for part in sorted(figures, key=lambda part: (part not in ("session", "main thread"), part)):
        print(f"  {part:<62} {1000 * figures[part] / n:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", nargs="+", default=["400/16", "400/64", "2000/64"], help="ITEMS/IN_FLIGHT"
    )
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("-n", dest="workers", default="0", help="xdist workers (default 0)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per case; the median is printed"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="and one probed run of the last case: where its CPU goes",
    )
    args = parse_args(parser, SMOKE)

    print(f"latency {args.latency} s, xdist -n {args.workers}, median of {args.repeat}")
    print(
        f"{'items/in flight':<16} {'request phase/ideal':>20} "
        f"{'command/ideal':>14} {'CPU ms/item':>12} {'(with start-up)':>16}"
    )
    for case in args.cases:
        items, concurrency = map(int, case.split("/"))
        runs = [measure(items, concurrency, args.latency, args.workers) for _ in range(args.repeat)]
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        goal = f" (goal <= {REQUEST_PHASE_GOAL})" if (items, concurrency) == (2000, 64) else ""
        print(
            f"{case:<16} {median['request']:>20.2f} {median['command']:>14.2f} {median['cpu_ms']:>12.2f} "
            f"{median['cpu_total_ms']:>16.2f}{goal}",
            flush=True,
        )
        if args.repeat > 1:
            print(
                f"{'':<16} {'  '.join(f'{run["request"]:.2f}' for run in runs):>20}"
                f" {'  '.join(f'{run["command"]:.2f}' for run in runs):>14}"
                f" {'  '.join(f'{run["cpu_ms"]:.2f}' for run in runs):>12}"
            )
    if args.breakdown:
        breakdown(*map(int, args.cases[-1].split("/")), args.latency)


if __name__ == "__main__":
    main()
