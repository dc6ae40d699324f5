"""Agreement of the answer-letter extractor with hand labels.

    uv run python bench/mc_agreement.py [PATH] [--smoke]

PATH is the MMLU-Pro reference file (39 real GPT-4o and DeepSeek replies to 10-option
questions, each labelled with the letter the model finally commits to, or null); by default
`shared/reference/mc-replies-mmlu-pro.jsonl` beside the repository, or $ROBLOX_EVALS_MC_REFERENCE.
Where it is missing (CI) one line says so and the rest runs. Then the repository's own table
(`tests/support/answer_tables.py`: CASES, and every letter of a 26-choice question in each
shape). Each prints "agree N/M" and its disagreements; the table's known misreads (strict
xfails) are marked as such. Then CASES per section (its `# --` comments, a class of replies
each), with the disagreements counted by kind: a wrong letter, a letter guessed where a reader
takes none, none where a reader takes one. Run at an older commit with today's table copied in,
it gives that commit's figures per class. Replies are read as the grader reads them, without a reasoning
block at their start (`evals.reasoning`). `--smoke` runs the same: it is fast already.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import string
from collections import Counter
from pathlib import Path

from bench._common import ROOT, parse_args
from tests.support import answer_tables
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


def sections() -> dict[str, str]:
    """Each case's id -> the title of the `# -- title ---` comment above it in CASES."""
    source = Path(answer_tables.__file__).read_text(encoding="utf-8")
    lines = source.splitlines()
    cases = next(
        node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets)
    )
    assert isinstance(cases, ast.List)
    titles: dict[str, str] = {}
    title, line = "(before the first section)", cases.lineno
    for element in cases.elts:
        for text in lines[line : element.lineno - 1]:
            if header := re.match(r"\s*# -- (.*?)\s*-*$", text):
                title = header.group(1)
        line = element.lineno - 1
        assert isinstance(element, ast.Call) and isinstance(element.args[0], ast.Constant)
        titles[element.args[0].value] = title
    return titles


def report_sections(rows: list[tuple[str, str, list[str], str | None, str]]) -> None:
    """Agreement per section of CASES; a disagreement is a wrong letter, a guess (a letter
    where a reader takes none) or a miss (none where a reader takes one)."""
    titles = sections()
    by_title: dict[str, Counter[str]] = {}
    for id, reply, choices, expected, _ in rows:
        got = graded(reply, choices)
        counts = by_title.setdefault(titles[id], Counter())
        counts["cases"] += 1
        if got == expected:
            counts["agree"] += 1
        else:
            counts["guessed" if expected is None else "missed" if got is None else "wrong"] += 1
    print("case table per section: agree / cases (wrong letter, guessed, missed)")
    total: Counter[str] = Counter()
    for title, counts in by_title.items():
        total += counts
        print(
            f"  {counts['agree']:3}/{counts['cases']:<3} "
            f"({counts['wrong']}, {counts['guessed']}, {counts['missed']})  {title}"
        )
    print(
        f"  {total['agree']:3}/{total['cases']:<3} "
        f"({total['wrong']}, {total['guessed']}, {total['missed']})  all"
    )


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
    rows = table_rows()
    report("case table (tests/support/answer_tables.py CASES)", rows)
    report_sections(rows)
    report(f"every letter in every shape ({len(SHAPES)} shapes x 26 letters)", alphabet_rows())


if __name__ == "__main__":
    main()
