"""The models.json entry fields `evaluate NAME` sets: the metadata flags given for NAME (earlier
ones kept in its saved plan, then today's), a price per token or per kWh, the weights' size;
for a new model what is left out looked up (OpenRouter, Hugging Face: `evals.metadata`), then
required. Checked as the entry they would make before anything runs."""

from __future__ import annotations

import argparse
from typing import Any

from evals import models_file
from evals.errors import DataFileError, UsageError
from evals.evaluate.plan import Eval, Plan
from evals.scrub import printable


def entry_fields(args: argparse.Namespace, plan: Plan) -> dict[str, Any]:
    """The entry fields the command sets: checked as the entry they would make when it
    publishes; otherwise kept in the plan for the run that publishes, which checks them."""
    if plan.publishing:
        return _metadata(args, plan.saved, plan.entry, next(iter(plan.evals.values())))
    return given_fields(args, plan)


def given_fields(args: argparse.Namespace, plan: Plan) -> dict[str, Any]:
    """The entry fields the flags give (earlier ones for NAME, then today's), nothing looked
    up: what a dry run whose lookup failed still prices its budget at."""
    return _given_metadata(args, plan.saved, plan.entry)


def _metadata(
    args: argparse.Namespace, saved: dict[str, Any] | None, entry: dict[str, Any] | None, ff: Eval
) -> dict[str, Any]:
    """The entry fields this command sets (earlier flags for NAME, then today's), checked as
    the entry they would make; a new model's missing ones are looked up, then required."""
    fields = _given_metadata(args, saved, entry)
    if entry is None:
        _look_up_missing(fields, ff.planned.config.to_dict())
    try:
        models_file.check_entry({**(entry or {"name": args.name, "size": None}), **fields})
    except DataFileError as error:  # the flags' values: a usage error, as a wrong flag is
        raise UsageError(str(error)) from None
    return fields


def _given_metadata(
    args: argparse.Namespace, saved: dict[str, Any] | None, entry: dict[str, Any] | None
) -> dict[str, Any]:
    """The entry fields given for NAME: earlier flags (kept in its plan), then today's."""
    fields: dict[str, Any] = dict((saved or {}).get("metadata") or {})
    for key, value in (
        ("provider", args.provider_name),
        ("url", args.url),
        ("releaseDate", args.release_date),
    ):
        if value is not None:
            fields[key] = value
    if args.size is not None:
        fields["size"] = _size(args.size)
    if args.price_electricity is not None:
        fields["price"] = {"electricity": args.price_electricity}
    elif args.price_input is not None or args.price_output is not None:
        fields["price"] = _token_price(
            args, fields.get("price") or (entry or {}).get("price"), entry is not None
        )
    return fields


def _token_price(
    args: argparse.Namespace, before: dict[str, Any] | None, existing: bool
) -> dict[str, Any]:
    """The price per token after --price-input and/or --price-output: one of them alone updates
    that price of an entry priced per token, keeping the other; a new model needs both."""
    given = {
        key: value
        for key, value in (("input", args.price_input), ("output", args.price_output))
        if value is not None
    }
    if len(given) == 2:
        return given
    alone = "--price-input" if "input" in given else "--price-output"
    if not existing:
        raise UsageError(
            "--price-input and --price-output go together for a new model: pass both, in USD per "
            f"million tokens (got {alone} alone)"
        )
    if not before or "electricity" in before:
        raise UsageError(
            f"{alone} alone updates one price per token, and {args.name!r} is priced per kWh: "
            "pass --price-input and --price-output together"
        )
    return {**before, **given}


# The models.json fields a new model needs, and the flags that give them.
NEEDED = (
    ("provider", "--provider-name"),
    ("url", "--url"),
    ("releaseDate", "--release-date"),
    ("price", "--price-input/--price-output or --price-electricity"),
)


def _look_up_missing(fields: dict[str, Any], config: dict[str, Any]) -> None:
    from evals import metadata

    if all(key in fields for key, _ in NEEDED):
        return  # size is optional: unknown for closed models
    missing = [flag for key, flag in NEEDED if key not in fields]
    try:
        found = metadata.lookup(config, fields.get("url"))
    except metadata.MetadataError as error:
        # Offline, the lookup can only fail: the flags it stands in for need no network.
        raise metadata.MetadataError(
            f"{error}; or pass {_and(missing)}, and nothing is looked up"
        ) from None
    for key in (*(key for key, _ in NEEDED), "size"):
        if key not in fields and key in found:
            fields[key] = found[key]
            print(printable(f"  looked up {key}: {found[key]}"))  # the server's text
    if missing := [flag for key, flag in NEEDED if key not in fields]:
        raise UsageError(f"a new model needs {', '.join(missing)} (not found by lookup either)")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _size(values: list[str]) -> int:
    from evals import metadata

    total = 0
    for value in values:
        try:
            size = int(value) if value.isdigit() else metadata.weights_size(value)
        except metadata.MetadataError as error:
            raise metadata.MetadataError(
                f"{error}; or pass --size as a number of bytes, and nothing is looked up"
            ) from None
        if not value.isdigit():
            print(printable(f"  looked up --size {value}: {size:,} bytes"))
        total += size
    return total
