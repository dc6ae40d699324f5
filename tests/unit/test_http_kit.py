"""The public kit for HTTP providers (`evals.providers.http`), in process: the guide names no
private module, in its code or its prose; its HTTP provider is `tests.support.json_provider`,
verbatim; the kit's names are the objects the built-in providers use. That provider against a
loopback server (each way a call goes wrong, the error kind the harness acts on) and through
the CLI is tests/e2e/test_http_kit.py."""

from __future__ import annotations

import ast
import re

from evals.providers import http
from tests.support import ROOT

GUIDE = ROOT / "docs" / "writing-a-provider.md"
PROVIDER = ROOT / "tests" / "support" / "json_provider.py"


def _blocks(language: str) -> list[str]:
    return re.findall(
        rf"^```{language}\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M
    )


# -- the guide --------------------------------------------------------------------------------------


def test_the_guides_code_and_prose_name_no_private_module():
    """Every import of the guide's code is of a public module and a public name, no name in
    its code is a private module's, and its prose names none (`evals.providers._base`,
    `_wire.deadline`, `evals/providers/_retry.py`)."""
    blocks = _blocks("python")
    assert blocks
    private: list[str] = []
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom):
                private += (
                    [node.module or ""]
                    if any(part.startswith("_") for part in (node.module or "").split("."))
                    else []
                )
                private += [alias.name for alias in node.names if alias.name.startswith("_")]
            elif isinstance(node, ast.Import):
                private += [
                    alias.name
                    for alias in node.names
                    if any(part.startswith("_") for part in alias.name.split("."))
                ]
            elif (
                isinstance(node, ast.Name)
                and node.id.startswith("_")
                and not node.id.startswith("__")
            ):
                private.append(node.id)
    assert private == []
    prose = re.sub(r"^```.*?^```", "", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)
    named = re.findall(
        r"\bevals(?:[./]\w+)*[./]_[a-z]\w*|(?<![\w./])_[a-z]\w*\.(?:py\b|[a-z]\w*)", prose
    )
    assert named == []


def test_the_guides_http_provider_is_the_one_these_tests_run():
    (block,) = [b for b in _blocks("python") if b.startswith("# my_provider/jsonapi.py\n")]
    assert block.removeprefix("# my_provider/jsonapi.py\n") in PROVIDER.read_text(encoding="utf-8")
    imports = [
        node
        for node in ast.walk(ast.parse(block))
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert {node.module for node in imports if isinstance(node, ast.ImportFrom)} == {
        "evals",
        "evals.providers",
    }


def test_the_kit_is_the_objects_the_built_in_providers_use():
    """The private names keep working, and are the same objects (an isinstance holds across)."""
    from evals.providers import _base, _batch, _wire

    assert http.MalformedReply is _base.MalformedReply and http.Unreachable is _base.Unreachable
    assert http.status_error is _base.status_error and http.reply_body is _base.reply_body
    assert http.deadline is _wire.deadline and http.BatchAPI is _batch.BatchAPI
    assert set(http.__all__) <= set(dir(http))
    assert all(getattr(http, name).__doc__ for name in http.__all__)
