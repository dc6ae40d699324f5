"""Start-up: wall time from launching a 1-item run to its first model request.

`pytest --provider openai -m multiple_choice --limit 1` against a loopback server in its own
process that logs each request's arrival time; the figure is arrival - launch (interpreter,
pytest and its plugins, planning, the SDK), the median of several runs, beside the time a bare
`python -c "import pytest"` takes on the same machine. Goal: under 1.2 s.

    uv run python bench/startup.py [--runs 5] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import PYCACHE, ROOT, parse_args
from tests.support.loopback import ServerProcess

GOAL = 1.2
SMOKE = {"runs": 1}


def to_first_request(url: str, log: Path, work: Path, provider: str, extra: list[str]) -> float:
    before = len(log.read_text().splitlines()) if log.exists() else 0
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--provider={provider}", "--model=bench-model",
               f"--base-url={url}/v1" if provider == "openai" else f"--base-url={url}", "-m", "multiple_choice", "--limit=1",
               f"--run-dir={work / 'runs'}", f"--results-dir={work / 'results'}", "--force", *extra]
    env = {**os.environ, "OPENAI_API_KEY": "fake-bench-key", "ANTHROPIC_API_KEY": "fake-bench-key", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's second run: bytecode compiled once, not at every launch
    launched = time.time()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    lines = log.read_text().splitlines()[before:]
    if not lines:
        sys.exit(f"no request reached the server:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    import json

    return json.loads(lines[0])["timestamp"] - launched


def bare_pytest_import() -> float:
    launched = time.time()
    subprocess.run([sys.executable, "-c", "import pytest"], check=True)
    return time.time() - launched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parse_args(parser, SMOKE)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for kind in ("openai", "anthropic"):
            log = work / f"{kind}.jsonl"
            with ServerProcess(kind, log_path=log) as server:
                to_first_request(server.url, log, work / kind, kind, [])  # warm-up: compiles the bytecode once
                times = [to_first_request(server.url, log, work / kind, kind, []) for _ in range(args.runs)]
            print(f"{kind}: launch to first request {statistics.median(times):.2f} s median of {args.runs} "
                  f"(min {min(times):.2f}, goal < {GOAL}); ratio to goal {statistics.median(times) / GOAL:.2f}")
    bare = statistics.median(bare_pytest_import() for _ in range(args.runs))
    print(f"for scale: python -c 'import pytest' takes {bare:.2f} s here")


if __name__ == "__main__":
    main()
