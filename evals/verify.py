"""Offline rescoring of a published run from its run folder, with no model call.

Multiple choice re-extracts the letters from the cached replies, freeform re-reads and
re-votes the cached judge verdicts, leetcode re-executes the cached code in the sandbox. The
rescored result must equal the published file apart from timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.config import run_name
from evals.errors import EvalError
from evals.plan import identity_from_config, plan
from evals.providers import Completion, Provider, Request
from evals.results import Prices, read_result, result_of_run, without_timing
from evals.run import EvalRun
from evals.tasks import TASKS


class VerifyError(EvalError):
    """A published run cannot be rescored: its run folder or a cached call is missing."""


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
    run = EvalRun(
        task,
        planned.config,
        planned.samples,
        candidate=CachedOnly(ident.spec),
        judges=[(j.name, CachedOnly(j.provider_spec())) for j in ident.judges],
        folder=folder,
        session=None,
    )
    rows = [run.answer(sample) for sample in planned.samples]
    prices = Prices(**published["prices"]) if published.get("prices") else None
    result = result_of_run(task, planned.config.to_dict(), rows, prices=prices, timing={})
    return without_timing(result)


def differences(published: dict[str, Any], rescored: dict[str, Any], path: str = "") -> list[str]:
    """Every field that differs, as `path: published -> rescored`; result rows are named by id."""
    if isinstance(published, dict) and isinstance(rescored, dict):
        lines = []
        for key in sorted(set(published) | set(rescored), key=str):
            if key in published and key in rescored:
                lines += differences(published[key], rescored[key], f"{path}.{key}" if path else str(key))
            else:
                lines.append(f"{path}.{key}: {'only published' if key in published else 'only rescored'}")
        return lines
    if isinstance(published, list) and isinstance(rescored, list) and all(isinstance(r, dict) and "id" in r for r in published + rescored):
        return differences({r["id"]: r for r in published}, {r["id"]: r for r in rescored}, path)
    return [] if published == rescored else [f"{path}: published {published!r} -> rescored {rescored!r}"]
