"""Agreement of the judge-verdict parser with hand labels, per class.

    uv run python bench/judge_agreement.py [--smoke]

The corpus is the repository's own (`tests/support/verdict_tables.py`: judge replies grouped
by class, each labelled with the verdict a careful reader takes: CORRECT, INCORRECT, or none
when the reply does not state one clearly). Each reply is read as the freeform grader reads it
(`parse_verdict`, after its reasoning block). Prints, per class, "agree N/M", then the total,
the false passes (read CORRECT where the reader takes INCORRECT or none: the misreading that
matters, since it scores a wrong answer right), the false fails (read INCORRECT or none where
the reader takes CORRECT) and the rest, then each disagreement; the table's known misreads
(strict xfails) are marked as such. `--smoke` runs the same: it is fast already.
"""

from __future__ import annotations

import argparse

from bench._common import parse_args
from tests.support.verdict_tables import CLASSES, graded

SMOKE: dict[str, object] = {}  # a few hundred replies: well under a second as it is


def shown(verdict: bool | None) -> str:
    return {True: "CORRECT", False: "INCORRECT", None: "none"}[verdict]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse_args(parser, SMOKE)
    wrong = []  # (class, id, reply, expected, got, note)
    total = 0
    for name, cases in CLASSES.items():
        missed = 0
        for case in cases:
            reply, expected = case.values
            got = graded(reply)
            if got is not expected:
                missed += 1
                xfail = next((m.kwargs["reason"] for m in case.marks if m.name == "xfail"), None)
                note = f" (known misread: {xfail})" if xfail else ""
                wrong.append((name, case.id, reply, expected, got, note))
        total += len(cases)
        print(f"{name:<22} agree {len(cases) - missed}/{len(cases)}")
    false_passes = sum(got is True for *_, got, _ in wrong)
    false_fails = sum(expected is True for *_, expected, _, _ in wrong)
    print(
        f"total: agree {total - len(wrong)}/{total}; false passes {false_passes}, "
        f"false fails {false_fails}, other {len(wrong) - false_passes - false_fails}"
    )
    for name, id, reply, expected, got, note in wrong:
        text = reply if len(reply) <= 100 else "..." + reply[-97:]
        print(f"  {name}-{id}: expected {shown(expected)}, got {shown(got)}{note}\n    {text!r}")


if __name__ == "__main__":
    main()
