"""`evaluate --regrade [NAME]`: published runs rescored offline with today's graders.

Each published run is judged as verify judges it (`verify.verdict_of`); those whose records
are intact but that today's graders score differently (REGRADE, or UNVERSIONED: under the
same versions) are shown beside their
published scores, with the board's order before and after (the site's own ranking), and,
without `--dry-run`, written in place of the published files under the models.json lock.
Nothing is asked of any model."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

from evals import models_file, site
from evals.errors import EvalError, RescoreFailed, VerifyError
from evals.results import read_result, write_result
from evals.scrub import printable
from evals.verify import REGRADE, UNVERSIONED, PublishedRun, overall, published_runs, verdict_of


def regrade(
    models_path: Path,
    results_dir: Path,
    run_root: Path,
    name: str | None = None,
    *,
    dry_run: bool,
    render: models_file.Render | None = None,
) -> int:
    """`evaluate --regrade [NAME]`: rescore every published run (or NAME's) offline with
    today's graders; print, per model and eval, the published score beside the regraded one,
    and the board's order before and after. Without `dry_run`, a model's regraded result
    files replace its old ones (kept aside as `*.replaced-STAMP`; the names stay: the run
    identity did not change) and its models.json entry records `regraded` (when, and by
    which graders), the site rendered by `render`, all under the models.json lock. A model
    with a run that does not reproduce (DIFF, FAIL) is not regraded. The exit code: 0, 1
    some runs do not reproduce, 2 models.json or NAME is wrong."""
    try:
        runs = published_runs(models_path, results_dir, name)
    except EvalError as error:
        print(printable(f"error: {error}"), file=sys.stderr)
        return 2
    if not runs:
        print(f"nothing published in {models_path}: nothing to regrade")
        return 0
    regraded: dict[
        str, dict[str, tuple[PublishedRun, dict[str, Any], dict[str, Any]]]
    ] = {}  # model -> key -> (run, old, new)
    broken: set[str] = set()
    for run in runs:
        try:
            verdict, rescored = verdict_of(run.path, run_root=run_root)
        except RescoreFailed as failed:
            print(printable(f"FAIL {run}: {failed.detail}; not regraded"))
            broken.add(run.model)
            continue
        published = read_result(run.path)
        before, after = overall(published)["accuracy"], overall(rescored)["accuracy"]
        if verdict.status == "DIFF":
            print(
                printable(
                    f"DIFF {run}: {verdict.detail}; not regraded: its records or its file changed"
                )
            )
            broken.add(run.model)
            continue
        shown = f"{run}: published {before:.2%}, regraded {after:.2%}"
        if verdict.status in (REGRADE, UNVERSIONED):
            parts = ", ".join(
                f"{part} {old or 'none'} -> {new or 'none'}"
                if verdict.status == REGRADE
                else f"{part} {old} read otherwise today"
                for part, (old, new) in sorted(verdict.graders.items())
            )
            print(
                printable(
                    f"{shown} ({parts}; {len(verdict.items)} item{'s' * (len(verdict.items) != 1)} changed)"
                )
            )
            regraded.setdefault(run.model, {})[run.key] = (
                run,
                published,
                _regraded_file(published, rescored),
            )
        else:
            print(printable(f"{shown} (unchanged)"))
    for model in broken:
        regraded.pop(model, None)
    models = [
        m for m in models_file.load_models(models_path, results=results_dir) if m.get("resultFiles")
    ]
    print(f"board before: {_board(models, results_dir, {})}")
    print(f"board after:  {_board(models, results_dir, regraded)}")
    if not regraded:
        print(
            "nothing to regrade: every run scores as published"
            + (" (or does not reproduce)" if broken else "")
        )
    elif dry_run:
        print(f"--dry-run: nothing written ({', '.join(sorted(regraded))} would be regraded)")
    else:
        for model, files in regraded.items():
            for line in _write_regrade(model, files, models_path, results_dir, render):
                print(printable(line))
    return 1 if broken else 0


def _regraded_file(published: dict[str, Any], rescored: dict[str, Any]) -> dict[str, Any]:
    """The new result file: today's rescoring, with what the run measured (its timing and
    energy) as published."""
    new = {**rescored, "timing": published.get("timing", {})}
    if "energy" in published:
        new["energy"] = published["energy"]
    return new


def _board(
    models: list[dict[str, Any]], results_dir: Path, regraded: dict[str, dict[str, tuple]]
) -> str:
    """The board's order as the site ranks it (`site.ranked`), each model with its average,
    with the regraded files in place of the published ones."""
    board = []
    for entry in models:
        paths = {
            key: models_file.result_path(entry, key, results_dir) for key in models_file.RESULT_KEYS
        }  # not `models_file.others`
        results = {key: read_result(path) for key, path in paths.items()}
        results.update({key: new for key, (_, _, new) in regraded.get(entry["name"], {}).items()})
        board.append(site.Published(entry, paths, results))
    return ", ".join(
        f"{i}. {p.entry['name']} {site.average(p):.2%}" for i, p in enumerate(site.ranked(board), 1)
    )


def _write_regrade(
    model: str,
    files: dict[str, tuple[PublishedRun, dict[str, Any], dict[str, Any]]],
    models_path: Path,
    results_dir: Path,
    render: models_file.Render | None,
) -> list[str]:
    """Write one model's regraded files and record it in models.json, under its lock; on an
    error the old files are put back."""
    now = dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%dT%H%M%S.%fZ")
    moved: list[tuple[Path, Path]] = []

    def mutate(entry: dict[str, Any] | None) -> dict[str, Any]:
        if entry is None or not entry.get("resultFiles"):
            raise VerifyError(f"{model!r} is no longer published in {models_path}")
        for run, _, new in files.values():
            kept = run.path.with_name(f"{run.path.name}.replaced-{stamp}")
            run.path.rename(kept)
            moved.append((run.path, kept))
            write_result(run.path, new)
        graders = {key: new["graders"] for key, (_, _, new) in sorted(files.items())}
        return {
            **entry,
            "regraded": {
                "at": now.isoformat(timespec="seconds"),
                "graders": {**(entry.get("regraded") or {}).get("graders", {}), **graders},
            },
        }

    try:
        models_file.update_entry(model, mutate, models_path, results=results_dir, render=render)
    except (EvalError, OSError) as error:
        for path, kept in moved:
            kept.replace(path)
        return [f"{model}: not regraded ({error}); its result files are as they were"]
    return [
        f"regraded {model!r}: "
        + ", ".join(
            f"{key} {run.path.name} (the old file kept as {run.path.name}.replaced-{stamp})"
            for key, (run, _, _) in sorted(files.items())
        )
    ]
