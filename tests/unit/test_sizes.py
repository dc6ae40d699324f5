"""Functions a newcomer can read top-down: no function or method in `evals/` or `plugins/`
(nested ones included) reaches `LIMIT` lines, counted from its `def` line to its last, the
docstring included. A longer one does several jobs: split it into steps, each named for what
it does."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

PACKAGES = ("evals", "plugins")
LIMIT = 60  # lines; a function of LIMIT lines or more is refused


def long_functions(root: Path, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Every function (nested ones and methods too) under `root` of `limit` lines or more, as
    ("path:name", lines), longest first."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1 if node.end_lineno else 1
                if lines >= limit:
                    found.append(
                        (
                            f"{path.relative_to(root.parent).as_posix()}:{node.lineno} {node.name}",
                            lines,
                        )
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
