"""Start-up: wall time from launching a run to its first model request, and of `--collect-only`.

`pytest --provider openai -m multiple_choice --limit 1` against a loopback server in its own
process that logs each request's arrival time; the figure is arrival - launch (interpreter,
pytest and its plugins, planning, the SDK), the median of several runs, beside the time a bare
`python -c "import pytest"` takes on the same machine. Goal: under 1.2 s. `pytest --provider
reference --collect-only` is timed the same way, launch to exit (the plugin's imports, the
registries, planning every item); beside its wall time, the CPU time it took (user + system,
the process and its children), which a busy machine disturbs less than the wall clock.

With `--before DIR` (an older commit checked out beside this one, with its own .venv) both are
timed for each checkout in turn, alternating run by run, and the ratio now / before printed.
Given more than once (`--before ../old905 --before ../start`), every checkout is timed in turn
(the order turned round each run), each named by its folder, each ratio printed against the
first: where a session started, and the reference it is held to, in one run.

    uv run python bench/startup.py [--runs 5] [--before ../old [--before ../other]] [--smoke]
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

from bench._common import PYCACHE, ROOT, parse_args
from tests.support.loopback import ServerProcess

GOAL = 1.2
SMOKE = {"runs": 1, "before": []}


def _pytest(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`python -m pytest -q ARGS` of the checkout `root` (its own venv's interpreter), run to
    its end, and the wall-clock time it was launched at."""
    python = str(root / ".venv" / "bin" / "python") if root != ROOT else sys.executable
    env = {
        **os.environ,
        "OPENAI_API_KEY": "fake-bench-key",
        "ANTHROPIC_API_KEY": "fake-bench-key",
        "PYTHONPYCACHEPREFIX": str(PYCACHE),
    }
    # As a user's second run: bytecode compiled once, not at every launch.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("VIRTUAL_ENV", None)
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    launched = time.time()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
    return done, launched


def to_first_request(root: Path, url: str, log: Path, work: Path, provider: str) -> float:
    before = len(log.read_text().splitlines()) if log.exists() else 0
    done, launched = _pytest(
        root,
        f"--provider={provider}",
        "--model=bench-model",
        f"--base-url={url}/v1" if provider == "openai" else f"--base-url={url}",
        "-m",
        "multiple_choice",
        "--limit=1",
        f"--run-dir={work / 'runs'}",
        f"--results-dir={work / 'results'}",
        "--force",
    )
    lines = log.read_text().splitlines()[before:]
    if not lines:
        sys.exit(
            f"no request reached the server from {root}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return json.loads(lines[0])["timestamp"] - launched


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def collect_only(root: Path) -> tuple[float, float]:
    """Wall time and CPU time of `pytest --provider reference --collect-only`, launch to exit."""
    cpu = _children_cpu()
    done, launched = _pytest(root, "--provider=reference", "--collect-only")
    elapsed = time.time() - launched
    cpu = _children_cpu() - cpu
    if done.returncode:
        sys.exit(
            f"--collect-only failed in {root} (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed, cpu


def bare_pytest_import() -> float:
    launched = time.time()
    subprocess.run([sys.executable, "-c", "import pytest"], check=True)
    return time.time() - launched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="another checkout (with its .venv), timed alternately with this one; again for more",
    )
    args = parse_args(parser, SMOKE)
    others = [path.resolve() for path in args.before]
    names = ["before"] if len(others) == 1 else [path.name for path in others]
    roots = {"now": ROOT, **dict(zip(names, others))}
    figures: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for kind in ("openai", "anthropic"):
            log = work / f"{kind}.jsonl"
            with ServerProcess(kind, log_path=log) as server:
                for name, root in roots.items():  # warm-up: compiles each checkout's bytecode once
                    to_first_request(root, server.url, log, work / name / kind, kind)
                for i in range(args.runs):
                    for name, root in (
                        list(roots.items()) if i % 2 == 0 else list(roots.items())[::-1]
                    ):
                        figures.setdefault((f"{kind}: launch to first request", name), []).append(
                            to_first_request(root, server.url, log, work / name / kind, kind)
                        )
        for name, root in roots.items():
            collect_only(root)
        for i in range(args.runs):
            for name, root in list(roots.items()) if i % 2 == 0 else list(roots.items())[::-1]:
                wall, cpu = collect_only(root)
                figures.setdefault(("pytest --provider reference --collect-only", name), []).append(
                    wall
                )
                figures.setdefault(("the same, CPU time", name), []).append(cpu)
    for what in dict.fromkeys(what for what, _ in figures):
        medians = {name: statistics.median(figures[what, name]) for name in roots}
        line = f"{what}: " + ", ".join(
            f"{name} {m:.2f} s (min {min(figures[what, name]):.2f})" for name, m in medians.items()
        )
        if len(medians) == 2:
            line += f"; now / before {medians['now'] / medians['before']:.2f}"
        elif len(medians) > 2:  # each against the first --before: the reference
            reference = names[0]
            line += "; " + ", ".join(
                f"{name} / {reference} {medians[name] / medians[reference]:.3f}"
                for name in roots
                if name != reference
            )
        if "first request" in what:
            line += f"; goal < {GOAL} s"
        print(line + f" (medians of {args.runs})")
    bare = statistics.median(bare_pytest_import() for _ in range(args.runs))
    print(f"for scale: python -c 'import pytest' takes {bare:.2f} s here")


if __name__ == "__main__":
    main()
