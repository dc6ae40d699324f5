"""A finished run asked again: `evaluate NAME` against one cached `pytest` of the same identity.

A maintainer reruns `evaluate NAME` after a run finished (published with --no-build, or
refused and looked at): every answer is cached, so nothing is asked; what is left is start-up
and the finished-check. Here the three evals of one identity run once through `evaluate
--provider live` against a loopback OpenAI-compatible server in its own process (judges
there too), then, alternating, the cached `evaluate NAME --no-build` and each eval's cached
`pytest` command as evaluate prints it. Figures: medians, and evaluate over the slowest
single eval's pytest (goal: within 1.5x, issue 19.14) and over the three pytest runs added up.

    uv run python bench/cached_rerun.py [--runs 5] [--root CHECKOUT] [--limit N] [--smoke]

`--root` times another checkout's `evaluate` and `pytest` (its own .venv), for a before/after.
`--limit N` runs the first N items of each eval (`evaluate --limit`, on the first run and the
reruns alike), as `--smoke` does.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import PYCACHE, ROOT, parse_args
from tests.support.loopback import ServerProcess

SMOKE = {"runs": 1, "limit": 2}
GOAL = 1.5
NAME = "Bench Cached"


def timed(
    command: list[str], root: Path, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
    return time.monotonic() - started, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout whose evaluate and pytest are timed"
    )
    parser.add_argument(
        "--limit", type=int, help="only the first N items of each eval (default: all)"
    )
    args = parse_args(parser, SMOKE)
    root = args.root.resolve()
    python = str(root / ".venv" / "bin" / "python")
    env = {**os.environ, "OPENAI_API_KEY": "fake-bench-key", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's second run: bytecode compiled once
    limit = [] if args.limit is None else [f"--limit={args.limit}"]
    with (
        tempfile.TemporaryDirectory() as tmp,
        ServerProcess("openai", log_path=Path(tmp) / "requests.jsonl") as server,
    ):
        data = Path(tmp) / "data"
        url = f"{server.url}/v1"
        first = [
            python,
            "-m",
            "evals.evaluate",
            NAME,
            "--provider=live",
            "--model=bench-model",
            f"--base-url={url}",
            f"--judge=live:bench-judge@{url}",
            "--no-build",
            f"--data-dir={data}",
            *limit,
        ]
        _, done = timed(first, root, env)
        if done.returncode != 0:
            sys.exit(f"the first run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
        # Each eval's pytest command as the plan prints it (`  ff: -m freeform ...`).
        pytests = {
            line.split(":", 1)[0].strip(): [
                python,
                "-m",
                "pytest",
                "-q",
                *shlex.split(line.split(":", 1)[1]),
            ]
            for line in done.stdout.splitlines()
            if line.startswith("  ") and ": -m " in line
        }
        rerun = [python, "-m", "evals.evaluate", NAME, "--no-build", f"--data-dir={data}", *limit]
        asked = len(server.requests())
        walls: dict[str, list[float]] = {"evaluate": [], **{tag: [] for tag in pytests}}
        for _ in range(args.runs):
            wall, done = timed(rerun, root, env)
            if done.returncode != 0:
                sys.exit(f"the cached rerun failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
            walls["evaluate"].append(wall)
            for tag, command in pytests.items():
                walls[tag].append(timed(command, root, env)[0])
        if len(server.requests()) != asked:
            sys.exit(f"the cached reruns asked the model {len(server.requests()) - asked} times")
    median = {key: statistics.median(values) for key, values in walls.items()}
    slowest = max(median[tag] for tag in pytests)
    print(f"cached rerun of a finished run, {args.runs} runs alternating, medians ({root}):")
    for key, value in median.items():
        print(
            f"  {'evaluate ' + NAME if key == 'evaluate' else 'pytest ' + key:<24} {value:5.2f} s"
        )
    ratio = median["evaluate"] / slowest
    print(
        f"evaluate / slowest single pytest: {ratio:.2f}x (goal <= {GOAL}: {'met' if ratio <= GOAL else 'NOT met'}); "
        f"evaluate / the three pytest runs: {median['evaluate'] / sum(median[tag] for tag in pytests):.2f}x"
    )


if __name__ == "__main__":
    main()
