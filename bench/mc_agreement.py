"""Agreement of the answer-letter extractor with hand labels.

    uv run python bench/mc_agreement.py [PATH] [--smoke]

PATH is the MMLU-Pro reference file (39 real GPT-4o and DeepSeek replies to 10-option
questions, each labelled with the letter the model finally commits to, or null); by default
`shared/reference/mc-replies-mmlu-pro.jsonl` beside the repository, or $ROBLOX_EVALS_MC_REFERENCE.
Where it is missing (CI) one line says so and the rest runs. Then the repository's own table
(`tests/support/answer_tables.py`: CASES, and every letter of a 26-choice question in each
shape). Each prints "agree N/M" and its disagreements; the table's known misreads (strict
xfails) are marked as such. Replies are read as the grader reads them, without a reasoning
block at their start (`evals.reasoning`). `--smoke` runs the same: it is fast already.
"""

from __future__ import annotations

import argparse
import json
import os
import string
from pathlib import Path

from bench._common import ROOT, parse_args
from tests.support.answer_tables import ALPHABET, CASES, SHAPES, graded, shaped

DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "mc-replies-mmlu-pro.jsonl"
SMOKE: dict[str, object] = {}  # a few hundred replies: a second as it is


def report(name: str, rows: list[tuple[str, str, list[str], str | None, str]]) -> None:
    """rows: (id, reply, choices, expected, note); prints the agreement and each disagreement."""
    wrong = [
        (id, reply, expected, got, note)
        for id, reply, choices, expected, note in rows
        if (got := graded(reply, choices)) != expected
    ]
    print(f"{name}: agree {len(rows) - len(wrong)}/{len(rows)}")
    for id, reply, expected, got, note in wrong:
        shown = reply if len(reply) <= 100 else "..." + reply[-97:]
        print(
            f"  {id}: expected {expected!r}, got {got!r}{f' ({note})' if note else ''}\n    {shown!r}"
        )


def reference_rows(path: Path) -> list[tuple[str, str, list[str], str | None, str]]:
    records = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [
        (r["id"], r["response"], r["options"], r["expected"], ", ".join(r.get("tags", [])))
        for r in records
    ]


def table_rows() -> list[tuple[str, str, list[str], str | None, str]]:
    rows = []
    for case in CASES:
        reply, choices, expected = case.values
        xfail = next((m.kwargs.get("reason", "") for m in case.marks if m.name == "xfail"), None)
        rows.append(
            (
                case.id,
                reply,
                choices,
                expected,
                f"known misread: {xfail}" if xfail is not None else "",
            )
        )
    return rows


def alphabet_rows() -> list[tuple[str, str, list[str], str | None, str]]:
    return [
        (f"{shape}-{letter}", shaped(shape, letter), ALPHABET, letter, "")
        for shape in SHAPES
        for letter in string.ascii_uppercase
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=Path(os.environ.get("ROBLOX_EVALS_MC_REFERENCE", DEFAULT_REFERENCE)),
    )
    args = parse_args(parser, SMOKE)
    if args.path.is_file():
        report(f"MMLU-Pro reference ({args.path.name})", reference_rows(args.path))
    else:
        print(
            f"MMLU-Pro reference: {args.path} is not there (pass its path, or set ROBLOX_EVALS_MC_REFERENCE)"
        )
    report("case table (tests/support/answer_tables.py CASES)", table_rows())
    report(f"every letter in every shape ({len(SHAPES)} shapes x 26 letters)", alphabet_rows())


if __name__ == "__main__":
    main()
