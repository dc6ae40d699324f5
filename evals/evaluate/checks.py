"""Every check before the first paid request: the data folder writable, each provider's API
keys (all missing ones in one line) and the provider built, the power source able to measure,
--force not over a published run, a --max-cost with a price per token to count at. The first
mistake stops the command; with --dry-run each is kept (`found`), and the plan is printed
before them all."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evals.atomic import why_unwritable
from evals.errors import EvalError, UsageError
from evals.evaluate.plan import Eval
from evals.providers import check_keys, make_provider
from evals.tasks import TASKS


def found(problems: list[EvalError] | None, check, *values: Any) -> Any:
    """`check(*values)`: its mistake stops the command, or with --dry-run (`problems` a list)
    is kept there and the checks go on."""
    try:
        return check(*values)
    except EvalError as error:
        if problems is None:
            raise
        problems.append(error)
        return None


def check_writable(data: Path) -> None:
    if why := why_unwritable(data):
        raise UsageError(
            f"{data}: {why}; the plan, run folders, result files and models.json are written there"
        )


def check_api_keys(selected: list[Eval]) -> None:
    """Every provider the command will call: its API keys, all missing ones in one line, then
    the candidate built, before anything is paid for. A published eval calls nothing."""
    running = [e for e in selected if not (e.published or e.finished)]
    candidates = [(f"--provider {e.identity.spec.provider}", e.identity.spec) for e in running]
    judges = [
        judge.flagged() for e in running if TASKS[e.name].uses_judges for judge in e.identity.judges
    ]
    check_keys([*candidates, *judges])
    for e in running:
        make_provider(e.identity.spec)


def check_energy(args: argparse.Namespace) -> None:
    """The energy flags, and the power source they name able to measure now (a RAPL zone, a
    HWiNFO log being written): each eval's pytest would stop at it, after the evals before it."""
    from evals import energy

    if source := energy.chosen(lambda dest: getattr(args, dest, None)):
        try:
            source.check()
        except EvalError as error:
            raise UsageError(f"--energy: {error}") from None


def check_cap(cap: float | None, price: dict[str, float] | None) -> None:
    """--max-cost counts the model's tokens at its price per token: one it has not is refused."""
    if cap is not None and not (price and "input" in price):
        raise UsageError(
            "--max-cost counts dollars at the model's price per token: give --price-input and "
            "--price-output (USD per million tokens), or publish the model with them first"
        )


def check_force(args: argparse.Namespace, selected: list[Eval]) -> None:
    if args.force and (published := [e for e in selected if e.published]):
        raise UsageError(
            f"{', '.join(e.tag for e in published)}: the run is published in models.json and stays as it is; "
            "--force would start over a published run (remove its resultFiles from models.json first)"
        )
