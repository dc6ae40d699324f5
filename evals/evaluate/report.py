"""What `evaluate` prints of its plan (each eval's command, run folder and result file; with
--dry-run the requests left) and, after the run, the summary: one table, an eval a row (its
score and interval, its errors, its cost, what models.json says of it now), then what is
left to do."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from evals import models_file
from evals.budget import CAPPED, total_cost
from evals.datasets import find_kept, is_local_file, kept_folder
from evals.evaluate.plan import Eval, Plan
from evals.evaluate.status import estimate_of, requests
from evals.results import TokenPrices, read_result


def show_plan(plan: Plan, *, dry_run: bool, price: dict[str, float] | None = None) -> None:
    """The plan; with `dry_run` each eval's requests and budget (`evals.budget`), in dollars
    at `price` (models.json's form) when it is per token, and their total."""
    print(f"{plan.name}:")
    prices = token_prices(price)
    estimates = []
    for e in plan.selected:
        shown = (
            "published: reproduced offline, not run again"
            if e.published
            else "finished: reproduced offline from its run folder, not run again"
            if e.finished
            else subprocess.list2cmdline(plan.commands[e.tag][3:])
        )
        print(f"  {e.tag}: {shown}")
        print(f"      run folder  {e.run_folder}")
        print(f"      results     {e.result_file}")
        if dry_run:
            estimated = estimate_of(e)  # every record read, every request built: once
            print(f"      requests    {requests(e, estimated)}")
            if estimated:
                estimates.append(estimated)
                print(f"      budget      {estimated.line(prices)}")
            if plan.publishing and (kept := _kept_dataset(plan, e)):
                print(f"      dataset     {kept}")
    if len(estimates) > 1:
        total = sum(e.requests for e in estimates)
        dollars = f", about ${total_cost(estimates, prices):,.4f}" if prices else ""
        print(f"  budget in all: about {total:,} requests{dollars}")


def token_prices(price: dict[str, float] | None) -> TokenPrices | None:
    """models.json's price as prices per token, or None (none, or priced per kWh)."""
    return TokenPrices(price["input"], price["output"]) if price and "input" in price else None


def price_of(plan: Plan, metadata: dict[str, Any]) -> dict[str, float] | None:
    """The model's price: the flags', else the saved plan's, else models.json's."""
    return (
        metadata.get("price")
        or ((plan.saved or {}).get("metadata") or {}).get("price")
        or (plan.entry or {}).get("price")
    )


def _kept_dataset(plan: Plan, e: Eval) -> str | None:
    """Where the eval's local dataset file is kept once published (`evals.datasets.keep`),
    for the maintainer who commits it with the result files; None for any other dataset."""
    identity = e.planned.config.dataset
    if not is_local_file(identity):
        return None
    folder = kept_folder(plan.data)
    if kept := find_kept(identity, folder):
        return f"kept as {kept}"
    return f"{identity['name']}: copied into {folder}/ when published (commit it with the result files)"


def show_summary(
    plan: Plan,
    args: argparse.Namespace,
    finished: dict[str, Path],
    lines: list[str],
    codes: dict[str, int],
    metadata: dict[str, Any],
) -> bool:
    """The table, then what a rerun can do: `finished` the result files by key, `lines` what
    publishing said, `codes` the pytest exits. Whether the command failed: models.json refused
    the results, or an eval did not finish that no batch is still working on."""
    unfinished = [e.tag for e in plan.selected if e.key not in finished]
    from evals.askers.batch import has_batches

    waiting = [tag for tag in unfinished if has_batches(plan.evals[tag].run_folder)]
    fate = _fate(plan.publishing, args.no_build, lines)
    price = price_of(plan, metadata)
    for line in _table(
        plan.selected,
        finished,
        {tag: "waiting in a batch" if tag in waiting else "did not finish" for tag in unfinished},
        fate,
        price,
    ):
        print(line)
    refused = any(line.startswith("not published:") for line in lines)
    if waiting and waiting == unfinished:
        print(
            f"  {', '.join(waiting)}: waiting in batches; `evaluate {plan.name!r}` collects them when they are done "
            f"(`evaluate {plan.name!r} --status` shows their progress)"
        )
        return refused
    if unfinished:
        failed = ", ".join(
            f"{tag} (pytest exit {codes[tag]})" if tag in codes else tag for tag in unfinished
        )
        print(
            f"error: {failed} did not finish (see the log above); {_next_step(plan.name, unfinished, codes)}",
            file=sys.stderr,
        )
        return True
    return refused


def _fate(publishing: bool, no_build: bool, lines: list[str]) -> str:
    """What happened to models.json, in a few words for the summary's last column."""
    if not publishing:
        return (
            "left alone (--no-build)"
            if no_build
            else "not publishable (smoke test or reference run)"
        )
    for line in lines:
        for start, words in (
            ("still published", "still published"),
            ("published", "published"),
            ("not published yet", "waits for the other evals"),
            ("not published", "not published (above)"),
        ):
            if line.startswith(start):
                return words
    return "left alone (nothing finished)"


def _table(
    shown: list[Eval],
    finished: dict[str, Path],
    unfinished: dict[str, str],
    fate: str,
    price: dict[str, float] | None,
) -> list[str]:
    """The run in one table, an eval a row: its score and interval, its errors, its cost (the
    model's tokens at its price per token, as the board counts it; else its tokens or the
    energy measured), and what models.json says of it now (the lines above say why)."""
    rows = [("eval", "score", "95% CI", "errors", "cost", "models.json")]
    for e in shown:
        if e.key not in finished:
            rows.append((e.tag, "-", "-", "-", "-", unfinished.get(e.tag, "did not finish")))
            continue
        result = read_result(finished[e.key])
        summary = result["summary"]
        overall = summary.get("overall", summary)
        low, high = overall["ci95"]
        errors = f"{overall['apiErrors']} API"
        for key, word in (
            ("unparseable", "unparseable"),
            ("judgeUnparseable", "unparseable verdicts"),
        ):
            if key in overall:
                errors += f", {overall[key]} {word}"
        cost = _cost(overall, result.get("energy"), price)
        if (prices := token_prices(price)) and (estimated := estimate_of(e, left=False)):
            cost += (
                f" (estimated ${estimated.cost(prices):,.3f})"  # the dry run's, for all its items
            )
        where = fate if e.key in models_file.RESULT_KEYS else "off the board"
        rows.append(
            (e.tag, f"{overall['accuracy']:.1%}", f"{low:.1%}-{high:.1%}", errors, cost, where)
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in rows
    ]


def _cost(
    overall: dict[str, Any], energy: dict[str, Any] | None, price: dict[str, float] | None
) -> str:
    tokens = overall["tokens"]
    if price and "input" in price:
        batched = (overall.get("batch") or {}).get("tokens")
        return f"${TokenPrices(price['input'], price['output']).cost(tokens, batched):,.3f}"
    if price and energy and energy.get("kWh") is not None:
        return f"${energy['kWh'] * price['electricity']:,.3f}"
    return f"{tokens['input'] + tokens['output']:,} tokens"


def spent(e: Eval, prices: TokenPrices | None) -> float:
    """What the eval's run spent, as its result file counts it at `prices`; 0 without one."""
    if prices is None or not e.result_file.is_file():
        return 0.0
    overall = read_result(e.result_file)["summary"]
    overall = overall.get("overall", overall)
    return prices.cost(overall["tokens"], (overall.get("batch") or {}).get("tokens"))


# pytest's exits that a resume would meet again: the answers cached so far do not change them.
NOT_RESUMABLE = {
    3: "stopped at an internal error (above), which a resume would meet again",
    5: "collected no item",
}


def _next_step(name: str, unfinished: list[str], codes: dict[str, int]) -> str:
    """What helps the evals that did not finish: a resume, only where one can (an interrupted
    run, API errors, an eval not reached), and the cause for the others."""
    stuck = {
        tag: NOT_RESUMABLE[codes[tag]] for tag in unfinished if codes.get(tag) in NOT_RESUMABLE
    }
    causes = "; ".join(f"{tag} {why}" for tag, why in stuck.items())
    if any(codes.get(tag) == CAPPED for tag in unfinished):
        return f"stopped at the --max-cost cap (above): raise --max-cost and `evaluate {name!r}` resumes"
    if not stuck:
        return f"`evaluate {name!r}` resumes"
    return causes + (
        f"; `evaluate {name!r}` resumes the others" if len(stuck) < len(unfinished) else ""
    )
