"""Offline rescoring of a published run from its run folder, with no model call.

Multiple choice re-extracts the letters from the cached replies, freeform re-reads and
re-votes the cached judge verdicts, leetcode re-executes the cached code in the sandbox. The
rescored result must equal the published file apart from timing. `verify_published` is
`evaluate --verify [NAME]`; `pytest --verify-published[=NAME]` runs the same `rescore` and
`differences` as one snapshot test per published run (plugins/verify.py)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import registry
from evals.config import run_name
from evals.errors import EvalError
from evals.names import row_key
from evals.plan import identity_from_config, plan
from evals.providers import Completion, Provider, Request
from evals.results import Prices, read_result, result_of_run, without_timing
from evals.run import RunSpec, build_run
from evals.tasks import TASKS

SHOWN_FIELDS = 4  # differing field paths a DIFF line names before "(+N more)"


class VerifyError(EvalError):
    """A published run cannot be rescored (its run folder or a cached call is missing), or a
    model asked for is not published."""


class CachedOnly(Provider):
    """Stands in for a provider during verify: every answer must come from the cache."""

    def complete(self, request: Request, *, timeout: float) -> Completion:
        raise VerifyError(f"a {self.spec.provider}:{self.spec.model} call is not in the run folder; verify makes no model calls")


def rescore(result_file: Path, *, run_root: Path) -> dict[str, Any]:
    """The result file the run folder reproduces today, without timing fields."""
    published = read_result(result_file)
    config = published["config"]
    task = TASKS[config["eval"]]
    ident = identity_from_config(config)
    folder = run_root / task.name / run_name(config)
    if not folder.is_dir():
        raise VerifyError(f"the run folder {folder} is missing: verify rescores from it; restore it (or --run-dir=PATH)")
    planned = plan(task, ident)
    spec = RunSpec(task.name, planned.config, planned.samples, ident.spec, [(j.name, j.provider_spec()) for j in ident.judges], (),
                   folder, None, published=True)
    run = build_run(spec, lambda provider, role: CachedOnly(provider))
    rows = [run.answer(sample) for sample in planned.samples]
    prices = Prices(**published["prices"]) if published.get("prices") else None
    result = result_of_run(task, planned.config.to_dict(), rows, prices=prices, timing={})
    return without_timing(result)


def differences(published: dict[str, Any], rescored: dict[str, Any]) -> list[str]:
    """Every field that differs, as `path: published -> rescored`; result rows are named by id."""
    return [f"{path}: {what}" for path, what in _differences(published, rescored, "")]


def differing_fields(published: dict[str, Any], rescored: dict[str, Any]) -> list[str]:
    """The paths of the fields that differ (`summary.correct`, `results.mc-002.answer`)."""
    return [path for path, _ in _differences(published, rescored, "")]


def _differences(published: Any, rescored: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(published, dict) and isinstance(rescored, dict):
        found = []
        for key in sorted(set(published) | set(rescored), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key in published and key in rescored:
                found += _differences(published[key], rescored[key], where)
            else:
                found.append((where, "only published" if key in published else "only rescored"))
        return found
    if isinstance(published, list) and isinstance(rescored, list) and all(isinstance(r, dict) and "id" in r for r in published + rescored):
        return _differences({row_key(r): r for r in published}, {row_key(r): r for r in rescored}, path)
    return [] if published == rescored else [(path, f"published {published!r} -> rescored {rescored!r}")]


# -- the published runs ------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedRun:
    """One result file a models.json entry names."""

    model: str
    key: str  # its resultFiles key: freeform, multipleChoice, leetcode
    path: Path

    def __str__(self) -> str:
        return f"{self.model} [{self.key}] {self.path.name}"

    @property
    def id(self) -> str:
        """Its pytest id, which `-k` can select: spaces and punctuation in the name become `_`."""
        return re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{self.model}-{self.key}")

    def result(self) -> dict[str, Any]:
        return without_timing(read_result(self.path))


def published_runs(models_path: Path, results_dir: Path, name: str | None = None) -> list[PublishedRun]:
    """Every result file of every published model in models.json, or only of the model `name`
    (an unknown or unpublished name is a VerifyError listing the published names). A
    malformed models.json is a RegistryError."""
    published = [m for m in registry.load_models(models_path, results=results_dir) if m.get("resultFiles")]
    if name is not None:
        chosen = [m for m in published if m["name"] == name]
        if not chosen:
            names = ", ".join(repr(m["name"]) for m in published) or "none yet"
            raise VerifyError(f"{name!r} is not published in {models_path}; published: {names}")
        published = chosen
    return [PublishedRun(m["name"], key, registry.result_path(m, key, results_dir)) for m in published for key in registry.RESULT_KEYS]


@dataclass(frozen=True)
class Outcome:
    run: PublishedRun
    status: str  # "ok", "DIFF" (rescored, and some fields differ) or "FAIL" (cannot be rescored)
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.status} {self.run}" + (f": {self.detail}" if self.detail else "")


def check(run: PublishedRun, *, run_root: Path) -> Outcome:
    """Rescore one published run and compare it with its file."""
    return Outcome(run, *compare(run.path, run_root=run_root))


def compare(path: Path, *, run_root: Path) -> tuple[str, str]:
    """("ok", ""), ("DIFF", the differing fields) or ("FAIL", why it cannot be rescored): the
    result file at `path` against what its run folder reproduces now, offline."""
    try:
        published = without_timing(read_result(path))
        rescored = rescore(path, run_root=run_root)
    except EvalError as error:
        return "FAIL", " ".join(str(error).split())
    except Exception as error:  # a hand-edited config this code cannot read: this run fails, the others still run
        return "FAIL", " ".join(f"{type(error).__name__}: {error}".split())
    fields = differing_fields(published, rescored)
    if not fields:
        return "ok", ""
    more = f" (+{len(fields) - SHOWN_FIELDS} more)" if len(fields) > SHOWN_FIELDS else ""
    return "DIFF", ", ".join(fields[:SHOWN_FIELDS]) + more


def verify_published(models_path: Path, results_dir: Path, run_root: Path, name: str | None = None) -> int:
    """`evaluate --verify [NAME]`: one line per published run (ok, DIFF or FAIL) as it is
    checked, then the tally. The exit code: 0 all reproduce (or nothing is published), 1 some
    do not, 2 models.json or NAME is wrong, 130 interrupted (the lines so far are printed)."""
    runs: list[PublishedRun] = []
    checked = failed = 0
    try:
        runs = published_runs(models_path, results_dir, name)
        if not runs:
            print(f"nothing published in {models_path}: nothing to verify")
            return 0
        for run in runs:
            outcome = check(run, run_root=run_root)
            print(outcome, flush=True)
            checked += 1
            failed += outcome.status != "ok"
        print(f"{failed} of {len(runs)} runs do not reproduce" if failed else f"all {len(runs)} runs reproduce")
    except EvalError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {checked} of {len(runs)} runs checked", file=sys.stderr)
        return 130
    return 1 if failed else 0
