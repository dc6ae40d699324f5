"""One meaning per name: every public class of `evals/` and `plugins/` is defined once (a type
alias counts as a definition), the public exceptions all live in `evals/errors.py`, whose
docstring draws their tree as the classes have it, and the modules that raised them before
still give the same objects under the old names."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import defaultdict

import pytest

from evals import errors
from tests.support import ROOT

PACKAGES = ("evals", "plugins")


def _definitions() -> dict[str, list[str]]:
    """Public top-level class names, and CamelCase type aliases (`X = A | B`, `type X = ...`),
    with the modules that define them."""
    found: dict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(where)
                elif isinstance(node, ast.TypeAlias) and isinstance(node.name, ast.Name):
                    found[node.name.id].append(where)
                elif (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.BinOp)
                    and isinstance(node.value.op, ast.BitOr)
                ):
                    found.update(
                        {
                            t.id: [*found[t.id], where]
                            for t in node.targets
                            if isinstance(t, ast.Name) and t.id[:1].isupper()
                        }
                    )
    return {name: places for name, places in found.items() if not name.startswith("_")}


def test_every_public_class_name_is_defined_once():
    twice = {name: places for name, places in _definitions().items() if len(places) > 1}
    assert twice == {}


def test_every_public_exception_class_is_defined_in_errors():
    elsewhere = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "evals" / "errors.py":
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if (
                    isinstance(node, ast.ClassDef)
                    and not node.name.startswith("_")
                    and re.search(r"(Error|Exception|Warning|Failed)$", node.name)
                ):
                    elsewhere[node.name] = path.relative_to(ROOT).as_posix()
    # The Luau lexer's own error never leaves it; WrongAnswer is pytest's Failed, which evals/ cannot import.
    assert elsewhere == {"LexError": "evals/luau/instrument.py"}


def _drawn() -> set[tuple[str, str]]:
    """(base, class) for each line of the docstring's tree: `* Name - what it is`, indented by two per level."""
    edges, parents = set(), []
    for line in errors.__doc__.splitlines():
        drawn = re.fullmatch(r"( *)\* (\w+)( - .*)?", line)
        if not drawn:
            continue
        depth = len(drawn[1]) // 2
        del parents[depth:]
        if parents:
            edges.add((parents[-1], drawn[2]))
        parents.append(drawn[2])
    return edges


def _classes() -> dict[str, type]:
    return {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and cls.__module__ == "evals.errors" and name == cls.__name__
    }


def test_the_docstrings_tree_is_the_class_hierarchy():
    real = {(base.__name__, name) for name, cls in _classes().items() for base in cls.__bases__}
    assert _drawn() == real


def test_the_tree_parser_reads_nesting_and_two_bases():
    assert ("TransientError", "Unreachable") in _drawn()  # a nested line, with its note
    assert ("Exception", "EvalError") in _drawn() and (
        "FatalError",
        "FatalProviderError",
    ) in _drawn()  # two bases, drawn twice


OLD_PLACES = [
    ("evals.providers._base", "Unreachable"),
    ("evals.providers._base", "MalformedReply"),
    ("evals.providers.http", "Unreachable"),
    ("evals.providers.http", "MalformedReply"),
    ("evals.providers.http", "BatchUnsupported"),
    ("evals.providers._batch", "BatchUnsupported"),
    ("evals.run", "BatchWaiting"),
    ("evals.luau", "ReferenceFailed"),
    ("evals.luau.isolated", "ReferenceFailed"),
    ("evals.luau.remote", "JestServerError"),
    ("evals.metadata", "MetadataError"),
    ("evals.verify", "VerifyError"),
    ("evals.verify", "RescoreFailed"),
    ("evals.cache", "CacheWarning"),
    ("evals.askers.batch", "LedgerWarning"),
    ("plugins.items", "ApiError"),
    ("evals.errors", "RegistryError"),
]


@pytest.mark.parametrize(("module", "name"), OLD_PLACES)
def test_an_exception_moved_into_errors_is_still_found_where_it_was(module, name):
    new = {"RegistryError": "DataFileError", "JestServerError": "RemoteGraderError"}.get(name, name)
    assert getattr(importlib.import_module(module), name) is getattr(errors, new)
