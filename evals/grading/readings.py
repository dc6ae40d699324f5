"""Readings pinned to versions: what a grading part reads from a corpus of its own, kept under
the versions it was read with, so that no reading changes while its version stands still.

A table is what one part (or a few read together, such as a sandbox and its test layer) reads
from its corpus, with the versions of the parts it read it with:

    {"versions": {"letters": "3"}, "digest": "sha256:...", "readings": {"case id": reading, ...}}

It is kept as a snapshot (the plugin's `pinned_readings` fixture: syrupy's JSON files, next to
the test that reads it) and checked three ways (`problems`):

- against the snapshot kept today: a reading that changed while the versions did not is a
  grading change with no version moved (move it, or mend the change);
- against every earlier version of the snapshot in the repository's history, side branches
  included: under the same versions, a case both tables hold must read the same. Two branches
  that each move a part to the same new version with different rules both leave their table
  in the history, and the merge cannot read like both of them;
- the snapshot itself (syrupy): a version moved with the snapshot left behind fails until the
  snapshot is updated in the same commit (`pytest -m graders --snapshot-update`).

Cases may be added to a corpus under the same versions: only the readings of cases both
tables hold are compared. The digest names one table's readings at a glance: two tables of
one version with different digests are what a reviewer looks for in a merge."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SHOWN = 5  # cases named per message; the rest are counted


def table(versions: Mapping[str, str], readings: Mapping[str, Any]) -> dict[str, Any]:
    """The table of `readings` (case id -> a JSON value) read under `versions`."""
    kept = {str(case): readings[case] for case in readings}
    return {"versions": dict(versions), "digest": digest(kept), "readings": kept}


def digest(readings: Mapping[str, Any]) -> str:
    text = json.dumps(readings, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def drift(now: Mapping[str, Any], earlier: Mapping[str, Any]) -> list[str]:
    """The cases both tables hold that they read otherwise, when they were read under the same
    versions ([] when the versions differ: a moved version may read anything anew)."""
    if now.get("versions") != earlier.get("versions"):
        return []
    before, after = earlier.get("readings") or {}, now.get("readings") or {}
    return [case for case in after if case in before and before[case] != after[case]]


def problems(
    name: str,
    now: Mapping[str, Any],
    stored: Mapping[str, Any] | None,
    history: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[str]:
    """One line per way `now` breaks its pins: against the `stored` snapshot and each
    (commit, table) of its `history`. [] when every reading stands."""
    versions = ", ".join(f"{part} {version}" for part, version in now["versions"].items())
    found = []
    if stored is not None and (changed := drift(now, stored)):
        found.append(
            f"{name}: {_cases(changed, stored, now)} read otherwise than the snapshot under the same"
            f" versions ({versions}): a grading change moves its part's version (and then"
            " `pytest -m graders --snapshot-update` records the new readings)"
        )
    for commit, earlier in history:
        if changed := drift(now, earlier):
            found.append(
                f"{name}: {_cases(changed, earlier, now)} read otherwise than at commit"
                f" {commit[:12]} under the same versions ({versions}): one version has been read"
                " two ways (two branches that moved a part to the same version?); move the"
                " version again"
            )
    return found


def _cases(changed: list[str], before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    shown = "; ".join(
        f"{case!r}: {before['readings'][case]!r} then, {after['readings'][case]!r} now"
        for case in changed[:SHOWN]
    )
    more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
    return f"{len(changed)} case{'s' if len(changed) != 1 else ''} ({shown}{more})"


def history(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(commit, table) of each committed version of the snapshot at `path`, newest first, side
    branches included; [] outside a git checkout (a source distribution, a shallow copy without
    git) or before the file was first committed."""
    where = path.resolve().parent
    try:
        root = Path(_git(where, "rev-parse", "--show-toplevel").strip())
        relative = path.resolve().relative_to(root).as_posix()
        # every commit that touched it, on side branches too (the default follows one parent of a
        # merge that kept that parent's file, which is the merge that hides a second table)
        commits = _git(root, "log", "--full-history", "--format=%H", "--", relative).split()
    except (OSError, subprocess.CalledProcessError, ValueError):
        return []
    tables = []
    for commit in commits:
        try:
            tables.append((commit, json.loads(_git(root, "show", f"{commit}:{relative}"))))
        except (subprocess.CalledProcessError, ValueError):  # deleted there, or not a table
            continue
    return [(commit, kept) for commit, kept in tables if isinstance(kept, dict)]


def _git(where: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=where, capture_output=True, text=True, check=True, timeout=60
    ).stdout
