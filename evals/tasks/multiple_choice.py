"""RobloxQA multiple choice: a question with lettered choices; the answer letter is read from
the reply (`evals.grading.multiple_choice`), and a reply without one is counted as
unparseable, never guessed."""

from __future__ import annotations

import re

from evals.datasets import robloxqa
from evals.grading.multiple_choice import LETTERS, extract_letter
from evals.tasks import Shown, Task, register_task


@register_task
class MultipleChoice(Task):
    name = "multiple_choice"
    tag = "mc"
    key = "multipleChoice"
    title = "Multiple choice"
    description = "RobloxQA multiple choice"
    marker_help = "RobloxQA multiple choice items"
    position = 20
    prompt_version = "mc-v1"
    named_datasets = ("robloxqa-v1", "robloxqa-v2")
    # letters 2: the reply is read without its reasoning block (evals.reasoning). letters 3: the
    # plain-text thinking markers are a block; the readings of issue 29 (tests/graders pins them).
    graders = {"letters": "3"}  # evals.grading.multiple_choice.extract_letter
    graded_fields = ("answer",)

    def serves(self, columns):
        return "test" not in columns and bool(columns & {"choices", "options", "incorrect_0"})

    def dataset_source(self, identity):
        return robloxqa.source_of(identity)

    def load(self, source: str, split: str):
        return robloxqa.load_multiple_choice(source, split)

    def prompt(self, sample: robloxqa.MultipleChoiceQuestion) -> str:
        options = "\n".join(f"{LETTERS[i]}) {choice}" for i, choice in enumerate(sample.choices))
        return (
            "Answer the following multiple choice question about Roblox.\n\n"
            f"Question: {sample.question}\n\n{options}\n\n"
            'Think it through if you need to, then end your reply with a line of the form "Answer: X", '
            "where X is the letter of the single correct choice."
        )

    def gold_reply(self, sample: robloxqa.MultipleChoiceQuestion) -> str:
        return f"Answer: {sample.answer}"

    def score(self, sample, completion, scoring):
        letter = extract_letter(completion.apart().text, list(sample.choices))
        if letter is None:
            return {
                "status": "unparseable",
                "correct": False,
                "expected": sample.answer,
                "answer": None,
            }
        correct = letter == sample.answer
        return {
            "status": "correct" if correct else "wrong",
            "correct": correct,
            "expected": sample.answer,
            "answer": letter,
        }

    def summarize(self, rows):
        return {"unparseable": sum(r["status"] == "unparseable" for r in rows)}

    def shown(self, row, calls):
        """Each choice (from the prompt asked, so the page needs no dataset), the expected one
        and the one answered marked; then the letter read from the reply."""
        prompt = (calls.get("candidate") or {}).get("request", {}).get("prompt")
        expected, answer = (row or {}).get("expected"), (row or {}).get("answer")
        parts = []
        for letter, text in choices_asked(prompt) if isinstance(prompt, str) else []:
            marks = [
                m
                for m, hit in (("expected", letter == expected), ("answered", letter == answer))
                if hit
            ]
            mark = None if not marks else "correct" if letter == expected else "wrong"
            parts.append(
                Shown(f"{letter})", text + (f"  ({', '.join(marks)})" if marks else ""), mark=mark)
            )
        if row is not None and "expected" in row:
            read = answer or "none: no answer letter in the reply (unparseable, never guessed)"
            parts += [
                Shown("Letter read", read, mark=row["status"]),
                Shown("Expected", str(expected)),
            ]
        return parts

    def explain(self, row):
        if row["answer"] is None:
            return f"no answer letter found in the reply; expected {row['expected']}"
        return f"answered {row['answer']}, expected {row['expected']}"


_CHOICE = re.compile(r"^([A-Z])\) ", re.MULTILINE)


def choices_asked(prompt: str) -> list[tuple[str, str]]:
    """The lettered choices of a prompt of this eval's (`prompt`), or none when it is not laid
    out as one (a prompt of another version)."""
    head, cut, _ = prompt.rpartition("\n\nThink it through")
    start = head.find("\n\nA) ")
    if not cut or start < 0:
        return []
    parts = _CHOICE.split(head[start + 2 :])  # ["", "A", "text\n", "B", ...]
    letters, texts = parts[1::2], parts[2::2]
    if parts[0] or letters != list(LETTERS[: len(letters)]):
        return []
    return [(letter, text.rstrip("\n")) for letter, text in zip(letters, texts)]
