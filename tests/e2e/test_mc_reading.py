"""What a model finally says, read end to end: `pytest -m multiple_choice --provider live`
against a loopback model that answers in other languages, with full-width punctuation, or with
a caveat after its answer; and a run graded before this reading (the extractor of commit
BEFORE, version 1) is told apart by verify as one to regrade, never as tampered.

`pytest` starts warm (tests/support/warm.py) against a model on a thread of the test; the run
graded the old way is a real exec, its plugin on a PYTHONPATH the interpreter reads as it starts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evals.tasks import TASKS
from evals.verify import compare

LETTERS = TASKS["multiple_choice"].graders["letters"]  # today's
from tests.support.harness import (
    ROOT,
    harness_env,
    questions,
    read_result,
    result_files,
    run_harness,
)
from tests.support.loopback import Answer, OpenAIServer, last_user_text

BEFORE = "b9b4a3d"  # the last commit whose letter extractor is version 1
MC = questions("multiple_choice")


def wide(letter: str) -> str:
    return chr(ord(letter) + 0xFEE0)  # "B" -> "Ｂ"


# How the model answers, in turn: {L} the right letter, {O} another; None: it commits to none.
STYLES = [
    ("Analicemos cada opción una por una.\n\nLa respuesta correcta es la {L}.", "L"),
    ("Vamos analisar cada alternativa.\n\nResposta: {L}", "L"),
    ("逐一分析每个选项。\n\n答案：{L}", "L"),
    ("それぞれの選択肢を検討します。\n\n正解は {L} です。", "L"),
    ("Prüfen wir jede Option.\n\nAntwort: {L}", "L"),
    ("Examinons chaque option.\n\nRéponse : {L}", "L"),
    ("Let me weigh each option.\n\nAnswer：{L}", "L"),
    ("逐一分析。\n\n最终答案：{W}", "L"),
    (
        "Answer: {L}\n\n(Note: option {O} would be correct if you only needed the legacy behaviour.)",
        "L",
    ),
    ("**Answer: {L}**\n\nFor the opposite direction, {O} would be the best choice.", "L"),
    ("{L} is correct. {O} is correct only if you target legacy code.", "L"),
    (
        "If you need the modern API, {L} would be the right call; for the opposite direction, {O} would be.",
        None,
    ),
]


class Polyglot:
    """A model that knows every answer and says it in the style of its turn (`STYLES`)."""

    def __call__(self, request) -> Answer:
        prompt = last_user_text(request.body)
        for i, q in enumerate(MC):
            if q["question"] in prompt:
                style, _ = STYLES[i % len(STYLES)]
                other = "ABCD"[("ABCD".index(q["answer"]) + 1) % 4]
                return Answer(
                    style.format(L=q["answer"], O=other, W=wide(q["answer"])),
                    input_tokens=120,
                    output_tokens=30,
                )
        return Answer("I do not know this question.")


def expected_answer(i: int, question: dict) -> str | None:
    return question["answer"] if STYLES[i % len(STYLES)][1] else None


@pytest.fixture(scope="module")
def server():
    with OpenAIServer(Polyglot()) as server:
        yield server


def live(
    server, tmp: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    done = run_harness(
        "--provider=live",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        "-m",
        "multiple_choice",
        *extra,
        run_dir=tmp / "runs",
        results_dir=tmp / "results",
        env=env,
        timeout=300,
    )
    assert result_files(tmp / "results", "multiple_choice"), (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    return done


def test_replies_in_other_languages_and_with_caveats_are_read_end_to_end(server, tmp_path):
    live(server, tmp_path)

    result = read_result(tmp_path / "results", "multiple_choice")
    rows = {row["id"]: row for row in result["results"]}
    for i, q in enumerate(MC):
        row, answer = rows[q["id"]], expected_answer(i, q)
        assert (row["answer"], row["status"]) == (answer, "correct" if answer else "unparseable"), (
            q["id"],
            STYLES[i % len(STYLES)][0],
        )
    assert result["summary"]["unparseable"] == sum(
        expected_answer(i, q) is None for i, q in enumerate(MC)
    )
    assert result["graders"]["letters"] == LETTERS


@pytest.fixture
def old_letters(tmp_path) -> Path:
    """A plugin that grades with the extractor of commit BEFORE, as version 1 did."""
    folder = tmp_path / "old"
    folder.mkdir()
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BEFORE}:evals/grading/multiple_choice.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / "old_extractor.py").write_text(source)
    (folder / "old_letters.py").write_text(
        "import old_extractor\nfrom evals.tasks import multiple_choice\n\n"
        "multiple_choice.extract_letter = old_extractor.extract_letter\n"
        'multiple_choice.MultipleChoice.graders = {"letters": "1"}\n'
    )
    return folder


def test_a_run_graded_by_the_old_reading_is_a_regrade_not_a_diff(server, tmp_path, old_letters):
    live(server, tmp_path, "-p", "old_letters", env=harness_env(PYTHONPATH=str(old_letters)))
    (path,) = result_files(tmp_path / "results", "multiple_choice")
    old = json.loads(path.read_text())
    assert old["graders"]["letters"] == "1"
    rows = {row["id"]: row for row in old["results"]}
    misread = sorted(
        q["id"] for i, q in enumerate(MC) if rows[q["id"]]["answer"] != expected_answer(i, q)
    )
    assert misread  # the old reading got these wrong: 'no letter', or the caveat's letter

    status, detail = compare(path, run_root=tmp_path / "runs")

    assert status == "REGRADE", detail
    assert (
        detail.startswith(f"today's graders differ (letters 1 -> {LETTERS}): ")
        and misread[0] in detail
    )
