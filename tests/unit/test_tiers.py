"""The suite's own layout, held to what README.md says of it: `tests/unit/` imports and calls
(no child process, no server: the tier to run while working), `tests/graders/` pins the
graders' readings (it reads the snapshots' git history), `tests/e2e/` runs the CLI and
servers, what both share is in `tests/support/`, and no test module imports another."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

TESTS = ROOT / "tests"
# What starts a process or a server, by the module or name a unit test would import it by.
PROCESSES_OR_SERVERS = {
    "subprocess",
    "multiprocessing",
    "concurrent.futures.process",
    "tests.support.loopback",
    "tests.support.warm",
    "tests.support.board",
    "tests.support.old_code",
    "tests.support.hang_guard",
    "tests.support.luau.jest_server",
    "tests.support.loopback.hub_server",
}
STARTING_NAMES = {
    "run_harness",
    "run_cli",
    "start",
    "harness_command",
    "start_chromium",
    "run_tests_isolated",
    "Popen",
    "fork",
}
STARTING_FIXTURES = {"pytester", "server", "student", "served", "page", "board", "old_board"}


def modules(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.py") if path.name.startswith("test_"))


def imports(path: Path) -> list[tuple[str, list[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def test_no_test_module_imports_another():
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in modules(TESTS)
        for module, names in imports(path)
        if module.startswith(("tests.unit", "tests.e2e", "tests.test_"))
        or any(n.startswith("test_") for n in names)
        and module.startswith("tests")
    ]
    assert offenders == [], "share it through tests/support instead"


def test_unit_tests_start_no_process_and_no_server():
    offenders = []
    for path in modules(TESTS / "unit"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, names in imports(path):
            if module in PROCESSES_OR_SERVERS or any(
                module.startswith(m + ".") for m in PROCESSES_OR_SERVERS
            ):
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
            offenders += [
                f"{path.relative_to(ROOT)} imports {name} from {module}"
                for name in names
                if name in STARTING_NAMES
            ]
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                offenders += [
                    f"{path.relative_to(ROOT)}::{node.name} takes {a.arg}"
                    for a in node.args.args
                    if a.arg in STARTING_FIXTURES
                ]
    assert offenders == [], "a test that starts a process or a server belongs in tests/e2e"


def test_every_test_module_is_in_a_tier():
    stray = [
        path.relative_to(ROOT)
        for path in modules(TESTS)
        if not any(path.is_relative_to(TESTS / tier) for tier in ("unit", "e2e", "graders"))
    ]
    assert stray == [], (
        "tests/unit (import and call), tests/graders (readings pinned to versions)"
        " or tests/e2e (the CLI, processes, servers)"
    )
