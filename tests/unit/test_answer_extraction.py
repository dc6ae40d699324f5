"""`extract_letter`: the letter a model finally commits to in its reply to a Roblox
multiple choice question, or None when it commits to none, to several, or to a letter
that is not one of the choices.

The table is replies as models really write them, by shape: where the letter stands and what
marks it, then hedges, distractors and lists that commit to nothing. A reasonable reply that
the function misreads is kept in the table as a strict xfail with the reason, not bent to fit.
Every letter of a 26-choice question is read in each of several shapes (`SHAPES`).
A reasoning block before the answer is read as the grader reads it, without (`graded`).
`bench/mc_agreement.py` prints the agreement on this table and on real MMLU-Pro replies."""

from __future__ import annotations

import json
import string

import pytest

from evals.grading.multiple_choice import extract_letter
from tests.support.answer_tables import (
    ALPHABET,
    CASES,
    REFERENCE_REPLIES,
    SHAPES,
    WAIT,
    graded,
    shaped,
)


@pytest.mark.parametrize("reply, choices, expected", CASES)
def test_extract_letter(reply, choices, expected):
    assert graded(reply, choices) == expected


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("letter", list(string.ascii_uppercase))
def test_every_letter_in_every_shape(shape, letter):
    reply = shaped(shape, letter)
    assert graded(reply, ALPHABET) == letter


def test_table_is_varied():
    """The table covers every letter as an answer, and None, with at least 150 replies."""
    assert len(CASES) >= 150
    assert {c.values[2] for c in CASES} >= {"A", "B", "C", "D", None}


def test_valid_range_follows_the_number_of_choices():
    """E is out of range for four choices and in range for five."""
    assert extract_letter("Answer: E", WAIT) is None
    assert extract_letter("Answer: E", [*WAIT, "coroutine.yield()"]) == "E"


def test_real_replies_from_mmlu_pro():
    """39 real GPT-4o and DeepSeek replies to 10-option questions, labelled by hand."""
    if not REFERENCE_REPLIES.is_file():
        pytest.skip(
            f"{REFERENCE_REPLIES} is not there (shared/ sits beside the repository; set ROBLOX_EVALS_MC_REFERENCE)"
        )
    records = [
        json.loads(line)
        for line in REFERENCE_REPLIES.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert records, f"{REFERENCE_REPLIES} holds no records"
    wrong = [
        f"{r['id']}: expected {r['expected']!r}, got {got!r} ({', '.join(r.get('tags', []))})"
        for r in records
        if (got := graded(r["response"], r["options"])) != r["expected"]
    ]
    assert not wrong, f"{len(wrong)} of {len(records)} real replies misread:\n" + "\n".join(wrong)
