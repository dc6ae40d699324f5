"""Every bench script once with `--smoke`: a check that each still runs, not a measurement.

    uv run python bench/smoke.py [NAME ...] [--timeout 120] [--verbose]

The scripts are found, not listed: every bench/*.py that defines a `main` (neither a `_`
module nor this one), so a new bench is smoke-run without editing this file; NAMEs (`cpu`,
`gil`, ...) pick some of them. Each runs as a child process, `python bench/NAME.py --smoke`
from the checkout's root, one after the other, within --timeout seconds. Where
PYTHONDONTWRITEBYTECODE is set, which would make every launch compile the harness again, their
bytecode is cached under PYTHONPYCACHEPREFIX instead, as the benches that time start-up do (a
smoke run is no figure).
Prints one line per script, its name, seconds and ok or FAILED, then the total; under each
failed script the last lines of its output (--verbose: every script's whole output). Exits
non-zero if any failed.
"""

from __future__ import annotations

import argparse
import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench._common import PYCACHE, ROOT

BENCH = ROOT / "bench"
TAIL = 30  # lines of a failed script's output


def scripts() -> dict[str, Path]:
    """name -> path of every bench script: a bench/*.py with a module-level `main`."""
    found = {}
    for path in sorted(BENCH.glob("*.py")):
        if path.name.startswith("_") or path.name == Path(__file__).name:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            found[path.stem] = path
    return found


def smoke(path: Path, timeout: float) -> tuple[str, str]:
    """(problem or "" when it passed, output) of one `--smoke` run of the script at `path`."""
    # A session of its own: on a timeout the script goes with everything it started (servers, pytest).
    env = dict(os.environ)
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    process = subprocess.Popen(
        [sys.executable, str(path), "--smoke"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process)
        output, _ = process.communicate()
        return f"timed out after {timeout:g} s", output
    return ("" if process.returncode == 0 else f"exit status {process.returncode}"), output


def stop(process: subprocess.Popen) -> None:
    """End the process group of `process`: SIGTERM, then SIGKILL what is left after 5 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(5)
            return
        except subprocess.TimeoutExpired:
            pass


def main() -> None:
    found = scripts()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"only these ({', '.join(found)}); default: all"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per script (default 120)"
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="print every script's output")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in found]
    if unknown:
        parser.error(f"no bench script named {', '.join(unknown)} (there are {', '.join(found)})")

    failed = []
    started = time.monotonic()
    for name in args.names or found:
        began = time.monotonic()
        problem, output = smoke(found[name], args.timeout)
        print(
            f"{name:<14} {time.monotonic() - began:6.1f} s  {'FAILED (' + problem + ')' if problem else 'ok'}",
            flush=True,
        )
        if problem or args.verbose:
            lines = output.splitlines()
            shown = lines if args.verbose else lines[-TAIL:]
            print("".join(f"    {line}\n" for line in shown), end="", flush=True)
        if problem:
            failed.append(name)
    total = time.monotonic() - started
    ran = len(args.names or found)
    print(
        f"{ran} scripts in {total:.1f} s: "
        + (f"{len(failed)} FAILED ({', '.join(failed)})" if failed else "all ok")
    )
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
