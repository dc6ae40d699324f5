"""The run phase's last step, after the evals' pytest runs: the result files that are finished
now (each reproduced by its run folder, `evals.publish.finished_results`), published into
models.json with the site rebuilt, together, once the board's evals are all there. Imported
only by a command that runs: --status and --dry-run return before it."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals import models_file
from evals.evaluate.plan import Plan
from evals.publish import Stamp, finished_results, publish
from evals.results import read_result
from evals.scrub import printable
from evals.tasks import TASKS


def publish_finished(
    plan: Plan,
    args: argparse.Namespace,
    metadata: dict[str, Any],
    *,
    ran: bool,
    written: Mapping[Path, Stamp] = {},
) -> tuple[dict[str, Path], list[str]]:
    """The result files finished now, by key, and what publishing them said (nothing when the
    command does not publish, or nothing of the board finished). `ran`: some eval's pytest ran,
    so the summary comes below their logs, under the name again. `written`: the result files
    those runs wrote, with their stamps then: one still as written is not rescored."""
    reproduced = {
        e.key: e.result_file for e in plan.evals.values() if e.finished
    }  # checked just now: not rescored twice
    datasets = {
        e.key: e.dataset for e in plan.evals.values()
    }  # the sources planned: verify reads them
    finished, notes = finished_results(
        {e.key: e.result_file for e in plan.evals.values() if not e.finished},
        run_root=plan.runs_dir,
        written=written,
        datasets=datasets,
    )
    finished = {**reproduced, **finished}
    board = {
        key: path for key, path in finished.items() if key in models_file.RESULT_KEYS
    }  # an eval off the board is never published
    if ran:
        print(f"\n{plan.name}:")
    for note in notes:
        print(printable(f"  {note}"))
    if not plan.publishing:
        why = "--no-build" if args.no_build else "smoke test or reference run"
        print(f"  {why}: models.json left alone")
        return finished, []
    if not board:
        print("  nothing finished so far: models.json left alone")
        return finished, []
    from evals.site import rebuild_site  # only when publishing: the site brings pydantic

    lines = publish(
        plan.name,
        board,
        metadata=metadata or None,
        kwh=_measured_kwh(board) if args.energy else None,
        allow_errors=args.allow_errors,
        models_path=plan.models_path,
        results_dir=plan.results_dir,
        rebuild=rebuild_site(plan.data),
        datasets=datasets,
    )
    for line in lines:
        print(printable(f"  {line}"))  # they name models.json's keys
    return finished, lines


def _measured_kwh(finished: dict[str, Path]) -> dict[str, float]:
    """The kilowattHour figures of models.json (`models_file.KWH_KEYS`: an eval's own, or one per
    band of an eval with bands) from the energy the result files record; a figure none records
    is left out, with a warning, so such an entry is not published as electricity-priced."""
    kwh: dict[str, float] = {}
    for key, path in finished.items():
        measured = read_result(path).get("energy") or {}
        figures = (
            measured.get("bands", {})
            if TASKS[models_file.RESULT_KEYS[key]].bands
            else {key: measured.get("kWh")}
        )
        kwh.update({k: v for k, v in figures.items() if v is not None})
    for key in models_file.KWH_KEYS:
        if key not in kwh:
            print(
                f"  warning: no energy measured for {key} (its requests ran without --energy, or "
                "the source took no readings then)"
            )
    return kwh
