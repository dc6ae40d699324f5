"""Functions a newcomer can read top-down: no function or method in `evals/` or `plugins/`
(nested ones included) reaches `LIMIT` lines. A line is one a statement starts on, or one of the
docstring's: a call or literal the formatter spreads over several lines counts once, so the
measure is the code's, not the layout's. A longer one does several jobs: split it into steps,
each named for what it does."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

PACKAGES = ("evals", "plugins")
LIMIT = 60  # lines; a function of LIMIT lines or more is refused


def length(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines a statement of `function` starts on (its own `def` and nested ones' included),
    and its docstring's lines beyond the first."""
    starts = {node.lineno for node in ast.walk(function) if isinstance(node, ast.stmt)}
    first = function.body[0]
    docstring = ast.get_docstring(function, clean=False) is not None
    return len(starts) + ((first.end_lineno or first.lineno) - first.lineno if docstring else 0)


def long_functions(root: Path, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Every function (nested ones and methods too) under `root` of `limit` lines or more, as
    ("path:name", lines), longest first."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and (lines := length(node)) >= limit
            ):
                found.append(
                    (f"{path.relative_to(root.parent).as_posix()}:{node.lineno} {node.name}", lines)
                )
    return sorted(found, key=lambda item: -item[1])


def test_no_function_reaches_the_limit() -> None:
    too_long = [item for package in PACKAGES for item in long_functions(ROOT / package)]
    assert not too_long, "\n".join(
        f"{where}: {lines} lines (a function stays under {LIMIT}); split it into named steps"
        for where, lines in too_long
    )


def test_the_walk_sees_methods_and_nested_functions(tmp_path: Path) -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(
        f"class C:\n    def long(self):\n{body}\n\ndef outer():\n    def inner():\n{body}"
        "    return inner\n\ndef short():\n    return 1\n"
    )
    found = {where.split(" ")[-1] for where, _ in long_functions(tmp_path)}
    assert found == {"long", "inner", "outer"}


def test_a_call_spread_over_lines_counts_once_and_a_docstring_by_its_lines(tmp_path: Path) -> None:
    arguments = "".join(f"        {i},\n" for i in range(2 * LIMIT))
    docstring = "".join(f"    line {i}\n" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(
        f"def laid_out():\n    return max(\n{arguments}    )\n\n\n"
        f'def documented():\n    """First.\n{docstring}    """\n    return 1\n'
    )
    assert {where.split(" ")[-1] for where, _ in long_functions(tmp_path)} == {"documented"}
