"""A reply's reasoning is never graded; here, the splitter's table: a `<think>`, `<thinking>` or
`<reasoning>` block at the start of a reply's text (or the end of one a chat template opened) is
the reasoning and the rest the answer, a reply that is only an unclosed block has none, and a
block anywhere else is part of the answer. Each eval reading only the answer is
tests/e2e/test_reasoning.py."""

from __future__ import annotations

import pytest

from evals.reasoning import split


@pytest.mark.parametrize(
    "text, reasoning, answer",
    [
        ("Answer: B", None, "Answer: B"),
        ("<think>the answer is A</think>\n\nAnswer: C", "the answer is A", "Answer: C"),
        ("  \n<thinking> I'll go with B </thinking>Answer: C", "I'll go with B", "Answer: C"),
        ("<reasoning>B?</reasoning>\nC", "B?", "C"),
        ("<THINK>a</Think> C", "a", "C"),
        (
            "draft: A\n</think>\n\nAnswer: C",
            "draft: A",
            "Answer: C",
        ),  # the template opened the block
        (
            "<think>a</think>\n<thinking>b</thinking></think>\nC",
            "a\n\nb",
            "C",
        ),  # blocks, then a stray closing
        ("<think></think>Answer: B", None, "Answer: B"),  # thinking off: an empty block
        ("<think>the answer is A", "the answer is A", ""),  # never closed: no answer
        (
            "<thinking>Answer: A</think>",
            "Answer: A</think>",
            "",
        ),  # its own closing tag, not another's
        (
            "Answer: B <think>later</think>",
            None,
            "Answer: B <think>later</think>",
        ),  # not at the start: the answer's
        ("Sure. <think>x</think> Answer: B", None, "Sure. <think>x</think> Answer: B"),
        ("I think <thinking> is a tag", None, "I think <thinking> is a tag"),
        # Ollama's plain-text markers, when both are there
        (
            "Thinking...\nThe answer is A.\n...done thinking.\n\nAnswer: C",
            "The answer is A.",
            "Answer: C",
        ),
        ("  thinking\u2026\r\nA?\r\n\u2026Done thinking.\r\nC", "A?", "C"),
        ("Thinking...\nA\n...done thinking.\n<think>B</think>C", "A\n\nB", "C"),
        ("Thinking...\nIt is A.", None, "Thinking...\nIt is A."),  # prose, not a block
        (
            "Thinking... it is A.\n...done thinking.\nB",
            None,
            "Thinking... it is A.\n...done thinking.\nB",
        ),
        (
            "Answer: B\nThinking...\nA\n...done thinking.",
            None,
            "Answer: B\nThinking...\nA\n...done thinking.",
        ),
    ],
)
def test_split(text, reasoning, answer):
    assert split(text) == (reasoning, answer)
    assert split(answer) == (None, answer)  # what was split once holds no block


# -- multiple choice ------------------------------------------------------------------------------


# -- freeform: the judges see the answer, never the thoughts ----------------------------------------


# -- LeetCode: a draft in the thinking is not the solution --------------------------------------------


# -- a run published before this rule -----------------------------------------------------------------
