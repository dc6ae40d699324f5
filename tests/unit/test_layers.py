"""The layers of the harness, enforced: every import of `evals/` and `plugins/` points down or
sideways, never up, there is no cycle (imports inside functions count: they only delay one),
and nothing above the parts names a concrete eval or provider. docs/layers.md draws the
layers; a new module is placed in `LAYERS` here, or this test says where it is missing.

Imports under `if TYPE_CHECKING:` count as well: they never run, but a type-only import that
points up or closes a cycle says the types sit in the wrong room (a registry naming the parts'
records, a module typing what its importer defines), so each type lives where both sides can
import it. What no import statement shows is not seen: the modules `evals.entry_points.load`
imports by name, which register back into their registries (docs/layers.md)."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

from tests.support import ROOT

PACKAGES = ("evals", "plugins")

# Bottom to top. A module may import its own layer's modules and any below (no cycles).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "core",
        (
            "evals",
            "evals.errors",
            "evals.atomic",
            "evals.bounded",
            "evals.locks",
            "evals.names",
            "evals.scrub",
            "evals.stats",
            "evals.hub",
            "evals.urls",
            "evals.reasoning",
            "evals.words",
            "evals.messages",
            "evals.lazy",
        ),
    ),
    # The entry-point group each kind's registry is loaded through, and the table of flags extensions declare theirs in.
    ("registries", ("evals.entry_points", "evals.flags")),
    # The extensions and what they are made of, one room each, each kind's registry beside its interface; and the
    # registries' old names (evals.extensions), which nothing in the harness imports.
    (
        "parts",
        (
            "evals.extensions",
            "evals.tasks",
            "evals.tasks.*",
            "evals.providers",
            "evals.providers.*",
            "evals.datasets",
            "evals.datasets.*",
            "evals.grading",
            "evals.grading.*",
            "evals.luau",
            "evals.luau.*",
            "evals.energy",
            "evals.energy.*",
        ),
    ),
    ("identity", ("evals.identity", "evals.command_line", "evals.config", "evals.plan")),
    ("engine", ("evals.cache", "evals.run", "evals.askers", "evals.askers.*")),
    (
        "outputs",
        (
            "evals.results",
            "evals.budget",
            "evals.schema",
            "evals.models_file",
            "evals.verify",
            "evals.publish",
            "evals.site.board",
            "evals.site.rendering",
            "evals.site.view",
            "evals.metadata",
        ),
    ),
    # evaluate: a package of its phases; the site's `build` command (evals.site, which re-exports the
    # board and rendering above).
    (
        "commands",
        (
            "evals.evaluate",
            "evals.evaluate.*",
            "evals.site",
            "evals.site.cli",
            "evals.site.__main__",
            "plugins",
            "plugins.*",
        ),
    ),
]
# Above the parts, only these modules of the parts may be named: the interfaces, never a
# concrete eval, dataset loader, grader or provider (those are reached through the registries).
INTERFACES = (
    "evals.tasks",
    "evals.tasks._base",
    "evals.tasks._registry",
    "evals.datasets",
    "evals.providers",
    "evals.providers._base",
    "evals.providers._retry",
    "evals.providers._batch",
    "evals.providers.http",
    "evals.providers._registry",
    "evals.energy",
    "evals.energy.spans",
    "evals.energy._base",
    "evals.energy.attribution",
    "evals.energy._registry",
    "evals.grading.judge_spec",
    "evals.grading.readings",
)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project's modules `name` imports, at its top, inside any function or for type checkers only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from evals import stats` imports the module evals.stats
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while (
                target and target not in known
            ):  # `import evals.luau.runner as r`: the module itself
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer_of(name: str) -> int | None:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            return index
    return None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def test_every_module_has_a_layer(graph):
    unplaced = sorted(name for name in graph if layer_of(name) is None)
    assert not unplaced, (
        f"place these modules in a layer of tests/unit/test_layers.py (and docs/layers.md): {unplaced}"
    )


def test_no_import_points_up(graph):
    upward = sorted(
        f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for name, targets in graph.items()
        for target in targets
        if layer_of(name) is not None
        and layer_of(target) is not None
        and layer_of(target) > layer_of(name)
    )
    assert not upward, "\n".join(upward)


def test_nothing_above_the_parts_names_a_concrete_extension(graph):
    parts = next(i for i, (layer, _) in enumerate(LAYERS) if layer == "parts")
    named = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        for target in targets
        if (layer_of(name) or 0) > parts and layer_of(target) == parts and target not in INTERFACES
    )
    assert not named, "\n".join(named)


def test_no_cycles(graph):
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert not cycles, "\n".join(cycles)


def test_every_interface_is_a_module():
    """An interface named here and not in the tree is a plan, not a rule."""
    assert [name for name in INTERFACES if name not in modules()] == []


def test_the_walker_sees_imports_inside_functions_type_only_and_relative_ones(tmp_path):
    """The tests above cannot pass by not seeing an import: a lazy, a type-only, a relative
    and a `from package import module` import are all found."""
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from evals import site\n"
        "def f():\n    from evals import stats\n    from .results import x\n    import evals.luau.runner as r\n"
    )
    known = {
        "evals",
        "evals.stats",
        "evals.results",
        "evals.luau",
        "evals.luau.runner",
        "evals.site",
    }
    assert imports_of("evals.m", source, known) == {
        "evals.site",
        "evals.stats",
        "evals.results",
        "evals.luau.runner",
    }


# -- no module outside an eval's own names it ---------------------------------------------------

# What the concrete evals are made of: their module names them, and so may these.
EVALS_MATERIAL = ("evals/luau", "evals/datasets", "evals/grading")
# Words of the built-in evals beside their names, keys and titles: LeetCode's sandbox and test layer.
EVAL_WORDS = ("luau", "jest")
# Not a mention of an eval: the platform's language, in the system prompt every eval's requests carry
# (part of every request, so of every cached answer's key: changing it would orphan every run folder).
NOT_A_MENTION = ("the Luau language",)


def eval_mentions() -> list[str]:
    """Each line of `evals/` and `plugins/`, outside an eval's own module and what evals are made
    of, that names a built-in eval: its name, key, title or one of its own flags (help texts,
    comments and docstrings included), or `EVAL_WORDS`."""
    import re

    from evals.tasks import TASKS, builtin

    own, words = set(), set(EVAL_WORDS)
    for name, task in TASKS.items():
        if not builtin(name):
            continue
        own.add(Path(__import__(type(task).__module__, fromlist=["_"]).__file__).resolve())
        words |= {
            name,
            task.key,
            task.title,
            *(flag.name.removeprefix("--") for flag in task.flags),
        }
    pattern = re.compile(
        "|".join(
            re.escape(word).replace("_", "[ _-]?").replace(r"\ ", "[ _-]?")
            for word in words
            if word
        ),
        re.IGNORECASE,
    )
    found = []
    for path in modules().values():
        relative = path.relative_to(ROOT).as_posix()
        if path.resolve() in own or relative.startswith(EVALS_MATERIAL):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for allowed in NOT_A_MENTION:
                line = line.replace(allowed, "")
            if pattern.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_module_outside_an_eval_names_it():
    """The harness reaches an eval through the `Task` interface and its registry, help texts
    included: a line that names one (`--luau-timeout` in the generic table, "helps LeetCode")
    belongs in its module, or is made from the registry."""
    assert eval_mentions() == []
