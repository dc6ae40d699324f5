"""The harness's own test suite, timed: the README's test command in this checkout and in
another (`--before`, an older commit checked out beside it with its own .venv), alternating,
each run's wall time and CPU time (the command's and all its children's), and after/before.

    uv run python bench/suite.py --before ../base [--runs 1] [--load N] [--args "tests -n 2"]
    uv run python bench/suite.py --smoke

Run it on an idle machine: the suite keeps both cores busy, and anything else running is
counted as the suite's slowness. `--load N` keeps N cores busy with a spinning process each
for the whole bench (a machine shared with another job). `--unit` times `tests/unit -n 2`
alone, the tier to run while working. A run that fails is reported as failed, its time kept.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

from bench._common import ROOT, parse_args

SMOKE = {"runs": 1, "args": "tests/unit/test_stats.py -n 2", "before": None}


def spin() -> None:
    while True:
        pass


def timed(root: Path, args: list[str], log: Path | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the command and its children, exit code) of one run; its
    output kept in `log` when one is given."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [str(root / ".venv" / "bin" / "python"), "-m", "pytest", *args, "-q"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if log:
        log.write_text(done.stdout + done.stderr)
    if done.returncode:
        print(
            f"  ({root.name}: exit {done.returncode}) "
            + (done.stdout.strip().splitlines() or [""])[-1],
            flush=True,
        )
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout (with its .venv), timed alternately with this one",
    )
    parser.add_argument("--runs", type=int, default=1, help="runs of each checkout")
    parser.add_argument(
        "--args",
        default="tests -n 2",
        help="pytest's arguments (default: the README's test command's)",
    )
    parser.add_argument("--unit", action="store_true", help="time the unit tier, tests/unit -n 2")
    parser.add_argument(
        "--load", type=int, default=0, help="cores kept busy meanwhile by spinning processes"
    )
    parser.add_argument("--log", type=Path, help="a folder for each run's output (NAME-RUN.txt)")
    args = parse_args(parser, SMOKE)
    pytest_args = shlex.split("tests/unit -n 2" if args.unit else args.args)
    roots = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    print(
        f"pytest {' '.join(pytest_args)}; {os.cpu_count()} cores, {args.load} kept busy", flush=True
    )
    figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in roots}
    try:
        for i in range(args.runs):
            for name, root in roots if i % 2 == 0 else roots[::-1]:
                if args.log:
                    args.log.mkdir(parents=True, exist_ok=True)
                wall, cpu, code = timed(
                    root, pytest_args, args.log / f"{name}-{i + 1}.txt" if args.log else None
                )
                figures[name].append((wall, cpu, code))
                print(
                    f"  {name:6s} run {i + 1}: wall {wall:7.1f} s  CPU {cpu:7.1f} s  {'ok' if code == 0 else 'FAILED'}",
                    flush=True,
                )
    finally:
        for spinner in spinners:
            spinner.terminate()
    print(f"{'':8s}{'wall (median)':>14s}{'CPU (median)':>14s}  runs")
    medians = {}
    for name, runs in figures.items():
        walls, cpus = sorted(w for w, _, _ in runs), sorted(c for _, c, _ in runs)
        medians[name] = (walls[len(walls) // 2], cpus[len(cpus) // 2])
        print(
            f"{name:8s}{medians[name][0]:12.1f} s{medians[name][1]:12.1f} "
            f"s  {len(runs)}, {sum(c != 0 for *_, c in runs)} failed"
        )
    if "before" in medians:
        (wa, ca), (wb, cb) = medians["after"], medians["before"]
        print(f"after / before: wall {wa / wb:.2f}, CPU {ca / cb:.2f}")
    sys.exit(int(any(c for runs in figures.values() for *_, c in runs)))


if __name__ == "__main__":
    main()
