"""The code's sizes: lines and files of `evals/` and `plugins/`, the share of lines over 100
characters, the largest files, the longest functions (counted as `tests/unit/test_sizes.py`
counts them: the lines a statement starts on) and the modules of each layer (as the commit's
own `tests/unit/test_layers.py` assigns them).

With `--before REV`, the same measured at that commit too (its files read out of git into a
temporary folder), side by side.

    uv run python bench/sizes.py [--before d584a3e] [--top 5] [--smoke]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from bench._common import ROOT, parse_args
from tests.unit.test_sizes import length

PACKAGES = ("evals", "plugins")
WIDE = 100  # characters: the line limit ruff holds (pyproject.toml)
SMOKE = {"before": None, "top": 2}


def measured(root: Path, top: int) -> dict[str, Any]:
    files = sorted(path for package in PACKAGES for path in (root / package).rglob("*.py"))
    lines = {path: path.read_text(encoding="utf-8").splitlines() for path in files}
    functions = []
    for path in files:
        for node in ast.walk(ast.parse("\n".join(lines[path]))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((length(node), f"{path.relative_to(root)}:{node.name}"))
    every = [line for text in lines.values() for line in text]
    return {
        **{
            f"{package}/ lines": sum(
                len(text) for path, text in lines.items() if path.parts[len(root.parts)] == package
            )
            for package in PACKAGES
        },
        "files": len(files),
        f"lines over {WIDE} characters": f"{100 * sum(len(line) > WIDE for line in every) / len(every):.1f}%",
        "largest files": [
            f"{path.relative_to(root)} {len(text)}"
            for path, text in sorted(lines.items(), key=lambda item: -len(item[1]))[:top]
        ],
        "longest functions": [f"{name} {n}" for n, name in sorted(functions, reverse=True)[:top]],
        "modules per layer": layers(root),
    }


def layers(root: Path) -> str:
    """ "name count" of each layer, as the checkout's own layer test draws them."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "try:\n    from tests.unit import test_layers as t\n"
        "except ImportError:  # where the layer test was, before tests/unit/\n"
        "    from tests import test_layers as t\n"
        "names = t.modules()\n"
        "print(', '.join(f'{layer} {sum(t.layer_of(n) == i for n in names)}' "
        "for i, (layer, _) in enumerate(t.LAYERS)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)], cwd=root, capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else "(no layer test)"


def checkout(rev: str, into: Path) -> Path:
    """The files of `rev` (what its layer test and packages need), read out of git."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, *PACKAGES, "tests"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a commit to measure beside the working tree")
    parser.add_argument("--top", type=int, default=5, help="files and functions listed")
    args = parse_args(parser, SMOKE)
    figures = {"now": measured(ROOT, args.top)}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            figures = {args.before: measured(checkout(args.before, Path(tmp)), args.top), **figures}
    for what in figures["now"]:
        print(f"{what}:")
        for name, each in figures.items():
            value = each[what]
            shown = "; ".join(value) if isinstance(value, list) else value
            print(f"  {name:>8}  {shown}")


if __name__ == "__main__":
    main()
