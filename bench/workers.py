"""Where xdist helps: the same commands at -n 0, 1 and 2, whole command wall time.

API-bound: generated multiple-choice items (`--mc-items`, default 400) through `pytest
--provider live` against a loopback server in its own process that answers every request
after 200 ms, 16 in flight: the model's latency is the work, so each worker would only add
its own start-up; the harness runs such a command (`-m` reaches no eval that grades locally)
in one process whatever -n says (goal: -n N within 5% of -n 0).
Grading-bound: the bundled Luau LeetCode problems (`--lc-problems N`: the first N), each
asked `--epochs` times, against a loopback server that answers with the problem's reference
solution after `--lc-latency` seconds: each reply's tests run in the Luau sandbox, one item
at a time per process, so workers grade in parallel (goal: faster with each worker, up to the
cores).

Runs alternate (-n 0, 1, 2, -n 0, ...) so that the machine's other load falls on all of them;
each line gives the median of `--repeat` runs and its ratio to -n 0's median. `--workers`
picks other -n values (comma-separated, 0 among them).

    uv run python bench/workers.py [--repeat 3] [--mc-items 400] [--epochs 4] [--lc-latency 1.0] [--lc-problems N]
                                   [--workers 0,1,2] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import PYCACHE, ROOT, parse_args, write_dataset
from tests.support.loopback import Answer, OpenAIServer, ServerProcess, last_user_text

SMOKE = {
    "repeat": 1,
    "mc_items": 8,
    "concurrency": 4,
    "epochs": 1,
    "lc_latency": 0.05,
    "lc_problems": 2,
    "workers": "0,2",
}


def reference_solutions(request) -> Answer:
    """A model that knows every bundled problem: its reference solution, in a Luau fence."""
    prompt = last_user_text(request.body)
    for problem in PROBLEMS:
        if problem["problem_description"].strip() in prompt:
            return Answer(
                f"```luau\n{problem['solution']}\n```", input_tokens=400, output_tokens=250
            )
    return Answer("I do not know this problem.")


PROBLEMS = [
    json.loads(line)
    for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()
    if line.strip()
]


def run(url: str, work: Path, workers: str, args: list[str]) -> float:
    """Wall seconds of one harness command, cold cache."""
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
        f"--run-dir={work / 'runs'}",
        f"--results-dir={work / 'results'}",
        "-n",
        workers,
        *args,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "fake-bench-key", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    if "result file:" not in done.stdout:
        sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall


def compare(
    label: str, url: str, args: list[str], workers: list[str], repeat: int, work: Path, goal: str
) -> None:
    walls: dict[str, list[float]] = {n: [] for n in workers}
    for r in range(repeat):
        for n in workers:
            walls[n].append(run(url, work / f"{label}-{r}-{n}", n, args))
    base = statistics.median(walls["0"])
    for n in workers:
        median = statistics.median(walls[n])
        runs = ", ".join(f"{w:.1f}" for w in walls[n])
        print(
            f"{label:<12} -n {n}: {median:6.2f} s (runs {runs}), / -n 0: "
            f"{median / base:.2f}{f' (goal {goal})' if n != '0' else ''}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mc-items", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--epochs", type=int, default=4, help="each LeetCode problem asked this many times"
    )
    parser.add_argument(
        "--lc-latency", type=float, default=1.0, help="seconds the LeetCode model takes per reply"
    )
    parser.add_argument(
        "--lc-problems", type=int, help="only the first N LeetCode problems (default: all)"
    )
    parser.add_argument(
        "--workers",
        default="0,1,2",
        help="the -n values, comma-separated, 0 among them (default 0,1,2)",
    )
    args = parse_args(parser, SMOKE)
    workers = args.workers.split(",")
    if "0" not in workers:
        parser.error("--workers: the ratios are to -n 0, which must be among them")

    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "mc.jsonl"
        write_dataset(dataset, args.mc_items)
        with ServerProcess("openai", latency=0.2) as server:
            ideal = args.mc_items * 0.2 / args.concurrency
            print(
                f"API-bound: {args.mc_items} multiple-choice items, 200 ms "
                f"each, {args.concurrency} in flight (ideal {ideal:.1f} s)"
            )
            compare(
                "API-bound",
                server.url,
                [
                    f"--dataset=mc={dataset}",
                    "-m",
                    "multiple_choice",
                    f"--concurrency={args.concurrency}",
                ],
                workers,
                args.repeat,
                work,
                "<= 1.05",
            )
        with OpenAIServer(reference_solutions, latency=args.lc_latency) as server:
            problems = len(PROBLEMS[: args.lc_problems])
            limit = [] if args.lc_problems is None else [f"--limit={args.lc_problems}"]
            print(
                f"grading-bound: {problems} LeetCode problems x {args.epochs} epochs = {problems * args.epochs} items, "
                f"{args.lc_latency:g} s each, {args.concurrency} in flight"
            )
            compare(
                "LeetCode",
                server.url,
                [
                    "-m",
                    "leetcode",
                    f"--epochs={args.epochs}",
                    f"--concurrency={args.concurrency}",
                    *limit,
                ],
                workers,
                args.repeat,
                work,
                "< 1 from -n 2 on, with the cores",
            )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
