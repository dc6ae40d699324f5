"""`evaluate --regrade [NAME]`: published runs rescored offline with today's graders.

Each published run is judged as verify judges it (`verify.verdict_of`); those whose records
are intact but that today's graders score differently (REGRADE, or UNVERSIONED: under the
same versions) are shown beside their
published scores, with the board's order before and after (the site's own ranking), and,
without `--dry-run`, written in place of the published files under the models.json lock.
Nothing is asked of any model."""

from __future__ import annotations

import datetime as dt
import glob
import sys
from pathlib import Path
from typing import Any

from evals import models_file, site
from evals.errors import EvalError, RescoreFailed, VerifyError
from evals.results import read_result, write_result
from evals.scrub import printable
from evals.verify import REGRADE, UNVERSIONED, PublishedRun, overall, published_runs, verdict_of

STAMP = "%Y%m%dT%H%M%S.%fZ"  # of the file a regrade keeps aside: `<name>.replaced-STAMP`


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
    # What a regrade killed midway left: its result files written, models.json or the site not.
    unfinished = {
        model: keys
        for model, keys in _unfinished(models, results_dir).items()
        if model not in regraded and model not in broken and name in (None, model)
    }
    stale = (
        render(models_file.load_models(models_path, results=results_dir))
        if render and not regraded and not unfinished and not broken
        else None  # a regrade or a finished one renders the site as it writes models.json
    )
    if not (regraded or unfinished or stale):
        print(
            "nothing to regrade: every run scores as published"
            + (" (or does not reproduce)" if broken else "")
        )
    elif dry_run and stale:
        print("every run scores as published, but the site is stale; --dry-run: nothing written")
    elif dry_run:
        would = [f"{', '.join(sorted(regraded))} would be regraded"] if regraded else []
        if unfinished:
            would.append(f"the regrade of {', '.join(sorted(unfinished))} would be finished")
        print(printable(f"--dry-run: nothing written ({'; '.join(would)})"))  # names of models.json
    else:
        _write(regraded, unfinished, models_path, results_dir, render)
    return 1 if broken else 0


def _write(
    regraded: dict[str, dict[str, tuple[PublishedRun, dict[str, Any], dict[str, Any]]]],
    unfinished: dict[str, tuple[str, dict[str, Any]]],
    models_path: Path,
    results_dir: Path,
    render: models_file.Render | None,
) -> None:
    """Write the regrades, finish those a stopped command left, or else (the site was stale)
    write the site again."""
    for model, files in regraded.items():
        for line in _write_regrade(model, files, models_path, results_dir, render):
            print(printable(line))
    for model, (at, graders) in unfinished.items():
        print(printable(_finish(model, at, graders, models_path, results_dir, render)))
    if render and not regraded and not unfinished:
        with models_file.lock(models_path):  # read again under the lock, as `build --write`
            write = render(models_file.load_models(models_path, results=results_dir))
            if write:
                write()
        print("every run scores as published, but the site was stale: written again")


def _unfinished(
    models: list[dict[str, Any]], results_dir: Path
) -> dict[str, tuple[str, dict[str, Any]]]:
    """The models whose regrade was killed after its result files were written, before
    models.json recorded it: model -> (when, key -> the graders of its regraded file). Such a
    file has an older one kept beside it (`*.replaced-STAMP`) graded by other graders, and
    the entry's `regraded` does not record its own."""
    found = {}
    for entry in models:
        recorded = (entry.get("regraded") or {}).get("graders", {})
        keys, stamps = {}, []
        for key in models_file.RESULT_KEYS:
            path = models_file.result_path(entry, key, results_dir)
            kept = sorted(path.parent.glob(f"{glob.escape(path.name)}.replaced-*"))
            if not kept or not path.is_file():
                continue
            try:
                graders = read_result(path).get("graders")
                before = read_result(kept[-1]).get("graders")
            except EvalError:
                continue  # not a result file (either): not a regrade's to finish
            if graders != before and recorded.get(key) != graders:
                keys[key] = graders
                stamps.append(kept[-1].name.rsplit(".replaced-", 1)[1])
        if keys:
            try:
                at = dt.datetime.strptime(max(stamps), STAMP).replace(tzinfo=dt.UTC)
            except ValueError:
                at = dt.datetime.now(dt.UTC)
            found[entry["name"]] = (at.isoformat(timespec="seconds"), keys)
    return found


def _finish(
    model: str,
    at: str,
    graders: dict[str, Any],
    models_path: Path,
    results_dir: Path,
    render: models_file.Render | None,
) -> str:
    """Record in models.json the regrade whose result files are written (and so write the site)."""

    def mutate(entry: dict[str, Any] | None) -> dict[str, Any]:
        if entry is None or not entry.get("resultFiles"):
            raise VerifyError(f"{model!r} is no longer published in {models_path}")
        old = (entry.get("regraded") or {}).get("graders", {})
        return {**entry, "regraded": {"at": at, "graders": {**old, **graders}}}

    try:
        models_file.update_entry(model, mutate, models_path, results=results_dir, render=render)
    except (EvalError, OSError) as error:
        return f"{model}: the regrade a stopped command left is not finished ({error})"
    return (
        f"finished the regrade of {model!r} a stopped command left ({', '.join(sorted(graders))}): "
        "its result files were written, now models.json and the site record them"
    )


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
    stamp = now.strftime(STAMP)
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
