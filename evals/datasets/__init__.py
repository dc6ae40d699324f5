"""Datasets of every eval, and which evals a `--dataset` source serves."""

from __future__ import annotations

from pathlib import Path

from ._files import read_records

# Published datasets by name -> the evals they serve.
NAMED = {
    "robloxqa-v1": {"multiple_choice"},
    "robloxqa-openended-v1": {"freeform"},
    "robloxqa-v2": {"multiple_choice", "freeform"},
    "luau-leetcode": {"leetcode"},
}


def evals_served(source: str) -> set[str]:
    """The evals a bare `--dataset SOURCE` applies to, judged by name or by the file's columns."""
    if source in NAMED:
        return NAMED[source]
    if source == "bundled":
        return {"multiple_choice", "freeform", "leetcode"}
    records = read_records(Path(source))
    columns = set(records[0][1]) if records else set()
    if "test" in columns:
        return {"leetcode"}
    if "incorrect_0" in columns:
        return {"multiple_choice", "freeform"}
    if columns & {"choices", "options"}:
        return {"multiple_choice"}
    return {"freeform"}


def source_of(identity: dict) -> str | None:
    """The `--dataset` source a result file's dataset identity came from, or None for a
    local file, which is known only by its name and hash."""
    from . import leetcode, robloxqa

    if identity["name"] == "bundled":
        return "bundled"
    for source, files in [*robloxqa.HUB.items(), ("luau-leetcode", leetcode.HUB)]:
        for file in files.values():
            if file.identity()["name"] == identity["name"] and file.path == identity.get("file"):
                return source  # at the commit the run recorded: a branch may have moved since
    return None
