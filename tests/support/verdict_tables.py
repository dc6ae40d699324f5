"""Judge replies as judges really write them, grouped by class, with the verdict a careful reader
takes from each (`CLASSES`, flattened into `CASES`): True, False, or None when the reply does not
state one verdict clearly (unparseable: never a pass). `graded` is what the freeform grader reads.
`tests/unit/test_judges.py` holds `parse_verdict` to them; `bench/judge_agreement.py` prints the
agreement per class.

The labels are a reader's, not the parser's, and lean one way where a reader could hesitate: a
pass that is not plainly one is None. So `VERDICT: NOT INCORRECT` is None (a double negation is
no clear pass), a caveat after a CORRECT that names a fault ("But it misses InvokeServer") is
None, and two verdict fields of one JSON object that disagree are None."""

from __future__ import annotations

import pytest

from evals.grading.judges import parse_verdict

# The reasoning a judge writes before its verdict, for a right candidate and for a wrong one.
R = "The candidate names FireServer for client-to-server and InvokeServer for a reply, as the reference does."
W = "The candidate names InvokeServer for client-to-server, where the reference says FireServer."

# The same reasoning in the languages whose verdict labels are read.
ES = "El candidato nombra FireServer e InvokeServer, como la referencia."
FR = "Le candidat nomme FireServer et InvokeServer, comme la référence."
IT = "Il candidato nomina FireServer e InvokeServer, come il riferimento."
DE = "Der Kandidat nennt FireServer und InvokeServer, wie die Referenz."
PT = "O candidato cita FireServer e InvokeServer, como a referência."
RU = "Кандидат называет FireServer и InvokeServer, как и эталон."
ZH = "候选答案与参考答案一致，提到了 FireServer 和 InvokeServer。"
JA = "候補の回答は参照解答と同じく FireServer と InvokeServer を挙げています。"

# Ollama's plain-text reasoning markers around a draft that says the other verdict.
THINKING = (
    "Thinking...\nThe candidate seems to swap them. VERDICT: INCORRECT\n...done thinking.\n\n"
)


def case(id: str, reply: str, expected: bool | None, *, xfail: str | None = None):
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(reply, expected, id=id, marks=marks)


CLASSES: dict[str, list] = {
    # -- what the README documents ------------------------------------------------------------------
    "last-line": [
        case("as-asked", f"{R}\nVERDICT: CORRECT", True),
        case("as-asked-incorrect", f"{W}\nVERDICT: INCORRECT", False),
        case("trailing-blank-lines", f"{W}\n\nVERDICT: INCORRECT\n\n", False),
        case("bold-line", f"{R}\n**VERDICT: CORRECT**", True),
        case("bold-label", f"{W}\n**VERDICT:** INCORRECT", False),
        case("bold-word", f"{R}\nVERDICT: **CORRECT**", True),
        case("code-span", f"{R}\n`VERDICT: CORRECT`", True),
        case("heading", f"{R}\n## VERDICT: CORRECT", True),
        case("lowercase", f"{R}\nverdict: correct", True),
        case("titlecase-period", f"{W}\nVerdict: Incorrect.", False),
        case("no-space", f"{R}\nVERDICT:CORRECT", True),
        case("quote", f"{W}\n> VERDICT: INCORRECT", False),
        case("bullet", f"{R}\n- VERDICT: CORRECT", True),
        case("repeated-agreeing", f"VERDICT: CORRECT\n{R}\nVERDICT: CORRECT", True),
        case(
            "verdict-words-in-reasoning",
            f"It is not what the reference calls correct.\n{W}\nVERDICT: INCORRECT",
            False,
        ),
    ],
    "first-line": [
        case("then-reasoning", f"VERDICT: CORRECT\n{R}", True),
        case("bold-then-reasoning", f"**VERDICT: INCORRECT**\n\n{W}", False),
        case("then-reasoning-label", f"Verdict: CORRECT\n\nReasoning: {R}", True),
        case("sentence-on-its-line", f"VERDICT: INCORRECT. {W}", False),
        case(
            "heading-then-bullets",
            "## VERDICT: CORRECT\n- names FireServer\n- names InvokeServer",
            True,
        ),
        case("label-heading-word-under", f"### Verdict\n**CORRECT**\n\n{R}", True),
        case(
            "names-the-correct-answer",
            "VERDICT: INCORRECT\nThe candidate names RemoteFunction; the correct answer is RemoteEvent.",
            False,
        ),
        case(
            "says-correctly",
            "VERDICT: CORRECT\n\nThe candidate correctly identifies both calls.",
            True,
        ),
        case("then-long-reasoning", f"VERDICT: CORRECT\n\n{R}\n\n{R}\n\n{R}", True),
        case(
            "incorrect-then-bullets",
            "VERDICT: INCORRECT\n- swaps FireServer and InvokeServer\n- names no reply",
            False,
        ),
    ],
    "final-verdict": [
        case("final-verdict", f"{R}\nFinal verdict: CORRECT", True),
        case("final-verdict-titlecase", f"{W}\nFinal Verdict: INCORRECT", False),
        case("bold-final-verdict", f"{R}\n**Final verdict:** CORRECT", True),
        case("overall-verdict", f"{R}\nOverall verdict: CORRECT", True),
        case("my-verdict-is", f"{W}\nMy verdict is INCORRECT.", False),
        case("judgment", f"{R}\nJudgment: CORRECT", True),
        case("judgement", f"{W}\nJudgement: INCORRECT", False),
        case("the-verdict-is", f"{R}\nThe verdict is CORRECT.", True),
        case("tags", f"{W}\n<verdict>INCORRECT</verdict>", False),
        case("final-verdict-first", f"Final verdict: INCORRECT\n\n{W}", False),
    ],
    "separator": [
        case("dash", f"{R}\nVERDICT - CORRECT", True),
        case("full-width-colon", f"{W}\nVERDICT：INCORRECT", False),
        case("em-dash", f"{R}\nVERDICT — CORRECT", True),
        case("en-dash", f"{W}\nVERDICT – INCORRECT", False),
        case("equals", f"{R}\nVERDICT = CORRECT", True),
        case("arrow", f"{W}\nVERDICT -> INCORRECT", False),
        case("fat-arrow", f"{R}\nVERDICT => CORRECT", True),
        case("full-width-letters", f"{R}\nＶＥＲＤＩＣＴ：ＣＯＲＲＥＣＴ", True),
        case("full-width-incorrect", f"{W}\nＶＥＲＤＩＣＴ：ＩＮＣＯＲＲＥＣＴ", False),
        case("space-before-colon", f"{R}\nVERDICT : CORRECT", True),
    ],
    "trailing": [
        case("check-emoji", f"{R}\nVERDICT: CORRECT ✅", True),
        case("parenthesis", f"{R}\nVERDICT: CORRECT (it names FireServer)", True),
        case("cross-emoji", f"{W}\nVERDICT: INCORRECT ❌", False),
        case(
            "dash-sentence",
            f"{R}\nVERDICT: CORRECT - the candidate states the same key facts.",
            True,
        ),
        case(
            "period-sentence",
            f"{W}\nVERDICT: INCORRECT. It names InvokeServer where the reference says FireServer.",
            False,
        ),
        case("emoji-before", f"{R}\n✅ VERDICT: CORRECT", True),
        case("party-then-sentence", f"{R}\nVERDICT: CORRECT 🎉 Nice work.", True),
        case("since-clause", f"{W}\nVERDICT: INCORRECT, since it swaps the two calls.", False),
        case(
            "and-clause",
            f"{R}\nVERDICT: CORRECT, and it also explains why InvokeServer yields.",
            True,
        ),
        case("thumbs-up", f"{R}\nVERDICT: CORRECT 👍", True),
    ],
    "code-fence": [
        case("bare-fence", "```\nVERDICT: CORRECT\n```", True),
        case("text-fence", f"{W}\n```text\nVERDICT: INCORRECT\n```", False),
        case("tilde-fence", f"{R}\n~~~\nVERDICT: CORRECT\n~~~", True),
        case("one-line-fence", f"{R}\n```VERDICT: CORRECT```", True),
        case("final-verdict-fenced", f"{W}\n\n```\nFinal verdict: INCORRECT\n```\n", False),
        case("fence-then-blank", f"{R}\n\n```\nVERDICT: CORRECT\n```\n\n", True),
    ],
    "json-field": [
        case("object", '{"verdict": "CORRECT"}', True),
        case("no-space", '{"verdict":"INCORRECT"}', False),
        case(
            "reasoning-field-first",
            '{"reasoning": "It names FireServer and InvokeServer, but not in order.", "verdict": "CORRECT"}',
            True,
        ),
        case(
            "fenced-pretty",
            '```json\n{\n  "verdict": "INCORRECT",\n  "reason": "It swaps the two calls."\n}\n```',
            False,
        ),
        case(
            "last-fenced-block",
            f'{R}\n\n```json\n{{"verdict": "CORRECT", "confidence": 0.9}}\n```',
            True,
        ),
        case("single-quotes", "{'verdict': 'CORRECT'}", True),
        case("final-verdict-key", '{"final_verdict": "correct"}', True),
        case("judgment-key", '{"judgment": "INCORRECT"}', False),
    ],
    "think-block": [
        case(
            "draft-inside",
            "<think>\nThe candidate seems to swap them. VERDICT: INCORRECT\n</think>\nVERDICT: CORRECT",
            True,
        ),
        case(
            "thinking-tag",
            f"<thinking>\nVERDICT: CORRECT?\n</thinking>\n\n{W}\nVERDICT: INCORRECT",
            False,
        ),
        case(
            "reasoning-tag",
            "<reasoning>Draft: VERDICT: CORRECT</reasoning>\nVERDICT: INCORRECT",
            False,
        ),
        case(
            "uppercase-tag", "  <THINK>VERDICT: INCORRECT</THINK>\n\nFinal verdict: CORRECT", True
        ),
        case(
            "two-blocks", "<think>a</think><think>VERDICT: INCORRECT</think>VERDICT: CORRECT", True
        ),
        case(
            "template-opened", f"VERDICT: INCORRECT, surely?\n</think>\n{R}\nVERDICT: CORRECT", True
        ),
        case("empty-block", "<think>\n\n</think>\n\nVERDICT: INCORRECT", False),
        case(
            "block-then-first-line", f"<think>it swaps them</think>\nVERDICT: INCORRECT\n{W}", False
        ),
    ],
    # -- what the issue found unread ------------------------------------------------------------------
    "thinking-markers": [
        case("draft-then-correct", f"{THINKING}{R}\nVERDICT: CORRECT", True),
        case(
            "draft-correct-then-incorrect",
            "Thinking...\nVERDICT: CORRECT\n...done thinking.\nVERDICT: INCORRECT",
            False,
        ),
        case(
            "ellipsis-character",
            "Thinking…\nHmm, CORRECT or INCORRECT?\n…done thinking.\n\nVERDICT: CORRECT",
            True,
        ),
        case(
            "final-verdict",
            "Thinking...\nIt swaps them.\n...done thinking.\n\nFinal verdict: INCORRECT",
            False,
        ),
        case(
            "question-in-draft",
            f"Thinking...\nIt says CORRECT? no.\n...done thinking.\n\n{R}\nVERDICT: CORRECT",
            True,
        ),
        case("verdict-first-after", f"{THINKING}VERDICT: CORRECT\n{R}", True),
        case("json-after", f'{THINKING}{{"verdict": "CORRECT"}}', True),
        case(
            "done-without-period",
            "Thinking...\nVERDICT: CORRECT\n...done thinking\n\nVERDICT: INCORRECT",
            False,
        ),
    ],
    "not-correct": [
        case("capitals", f"{W}\nVERDICT: NOT CORRECT", False),
        case("lowercase-period", f"{W}\nVERDICT: not correct.", False),
        case("final-verdict", f"{W}\nFinal verdict: NOT CORRECT", False),
        case("dash", f"{W}\nVERDICT - NOT CORRECT", False),
        case("verdict-is-not", f"{W}\nVerdict is not CORRECT", False),
        case("the-verdict-is-not", f"{W}\nThe verdict is not correct.", False),
        case("bold", f"{W}\n**VERDICT: NOT CORRECT**", False),
        case("with-reason", f"{W}\nVERDICT: NOT CORRECT (it swaps the two calls)", False),
        case("isnt", f"{W}\nVERDICT: isn't correct", False),
        case("first-line", f"VERDICT: NOT CORRECT\n{W}", False),
        case("cross-emoji", f"{W}\nVERDICT: NOT CORRECT ❌", False),
        case("json", '{"verdict": "NOT CORRECT"}', False),
    ],
    "qualifier-after": [
        case(
            "however-caveat",
            f"{R}\nVERDICT: CORRECT. However, it could also mention that InvokeServer yields.",
            True,
        ),
        case("nothing-wrong", f"{R}\nVERDICT: CORRECT - nothing wrong with it", True),
        case("not-right", f"{W}\nVERDICT: INCORRECT (the candidate's claim is not right)", False),
        case(
            "however-wording",
            f"{R}\nVERDICT: CORRECT. However, the wording differs from the reference.",
            True,
        ),
        case(
            "incorrect-however",
            f"{W}\nVERDICT: INCORRECT. However, the candidate does name FireServer.",
            False,
        ),
        case(
            "incorrect-but",
            f"{W}\nVERDICT: INCORRECT. But the explanation of FireServer is good.",
            False,
        ),
        case("nothing-wrong-parens", f"{R}\nVERDICT: CORRECT (nothing wrong here)", True),
        case("no-errors", f"{R}\nVERDICT: CORRECT — no errors", True),
        case("not-correct-at-all", f"{W}\nVERDICT: INCORRECT - not correct at all", False),
        case(
            "not-right-to-call",
            f"{W}\nVERDICT: INCORRECT (it is not right to call InvokeServer from the client here)",
            False,
        ),
        case(
            "though-brief", f"{R}\nVERDICT: CORRECT. Though brief, it states both key facts.", True
        ),
        case(
            "first-line-however",
            "VERDICT: CORRECT\nHowever, the candidate could be more concise.",
            True,
        ),
        case(
            "incorrect-gets-one-right",
            f"{W}\nVERDICT: INCORRECT. However, the candidate gets FireServer right.",
            False,
        ),
        case("thumbs-up-nothing-wrong", f"{R}\nVERDICT: CORRECT 👍 nothing wrong with it", True),
        case("isnt-wrong", f"{R}\nVERDICT: CORRECT, it isn't wrong anywhere", True),
    ],
    "middle-line-fields": [
        case("confidence-high", f"{R}\nVERDICT: CORRECT\nConfidence: high", True),
        case("incorrect-confidence", f"{W}\nVERDICT: INCORRECT\nConfidence: high", False),
        case("bold-fields", f"{R}\n**VERDICT:** CORRECT\n**Confidence:** High", True),
        case("confidence-number", f"{R}\nVERDICT: CORRECT\nConfidence: 0.9", True),
        case("confidence-percent", f"{W}\nVERDICT: INCORRECT\nConfidence: 95%", False),
        case("two-fields", f"{R}\nVerdict: CORRECT\nConfidence level: high\nScore: 1", True),
        case(
            "after-bullets",
            "Analysis:\n- names FireServer\n- names InvokeServer\nVERDICT: CORRECT\nConfidence: high",
            True,
        ),
        case(
            "reason-field", f"{W}\nFinal verdict: INCORRECT\nReason: it swaps the two calls.", False
        ),
        case("blank-lines-between", f"{R}\n\nVERDICT: CORRECT\n\nConfidence: high\n", True),
        case("bulleted-fields", f"{W}\n- Verdict: INCORRECT\n- Confidence: medium", False),
        case(
            "confidence-may-be-wrong",
            f"{R}\nVERDICT: CORRECT\nConfidence: low, it may well be wrong",
            None,
        ),
        case("note-takes-back", f"{R}\nVERDICT: CORRECT\nNote: actually it is incorrect", None),
        case("issues-field", f"{R}\nVERDICT: CORRECT\nIssues: it swaps the two calls", None),
        case(
            "second-verdict-field",
            f"{R}\nVERDICT: CORRECT\nConfidence: high\nVERDICT: INCORRECT",
            None,
        ),
    ],
    "table-row": [
        case(
            "last-row",
            "| Criterion | Assessment |\n|---|---|\n| Accuracy | Matches the reference |\n| Verdict | CORRECT |",
            True,
        ),
        case(
            "middle-row",
            "| Field | Value |\n|---|---|\n| Verdict | INCORRECT |\n| Confidence | High |",
            False,
        ),
        case("bold-row-alone", "| **Verdict** | **CORRECT** |", True),
        case(
            "after-reasoning", f"{R}\n\n| Verdict | CORRECT |\n| Reason | names both calls |", True
        ),
        case("no-spaces", f"{W}\n\n|Verdict|INCORRECT|", False),
        case("not-correct-row", f"{W}\n\n| Verdict | NOT CORRECT |", False),
        case(
            "final-verdict-row",
            f"{R}\n\n| Check | Result |\n|:--|:--|\n| Final verdict | CORRECT ✅ |",
            True,
        ),
        case("first-row", f"| Verdict | INCORRECT |\n|---|---|\n\n{W}", False),
        case("two-rows-disagree", "| Verdict | CORRECT |\n| Verdict | INCORRECT |", None),
        case("partial-row", f"{R}\n\n| Verdict | PARTIALLY CORRECT |", None),
        case(
            "verdict-column",
            "| Verdict | Confidence |\n|---|---|\n| CORRECT | high |",
            True,
            xfail="a verdict under a Verdict column is not read: only a row that names the label holds one",
        ),
    ],
    "french": [
        case("verdict-final", f"{FR}\nVerdict final : INCORRECT", False),
        case("space-colon", f"{FR}\nVerdict : CORRECT", True),
        case("verdict-final-correct", f"{FR}\nVerdict final : CORRECT", True),
        case("bold", f"{FR}\n**Verdict final :** CORRECT", True),
        case("first-line", f"Verdict : INCORRECT\n{FR}", False),
        case("jugement", f"{FR}\nJugement : CORRECT", True),
        case("partial", f"{FR}\nVerdict : partiellement correct", None),
        case("full-width-colon", f"{FR}\nVerdict final：INCORRECT", False),
    ],
    "spanish": [
        case("correcto", f"{ES}\nVeredicto: CORRECTO", True),
        case("incorrecto", f"{ES}\nVeredicto: INCORRECTO", False),
        case("bold-lowercase", f"{ES}\n**Veredicto:** correcto", True),
        case("final", f"{ES}\nVeredicto final: INCORRECTO", False),
        case("first-line", f"Veredicto: CORRECTO\n{ES}", True),
        case("dash", f"{ES}\nVeredicto — INCORRECTO", False),
        case("english-label", f"{ES}\nVERDICT: CORRECTO", True),
        case("partial", f"{ES}\nVeredicto: PARCIALMENTE CORRECTO", None),
        case("but-incomplete", f"{ES}\nVeredicto: CORRECTO, pero incompleto", None),
        case("both", f"Veredicto: CORRECTO\n{ES}\nVeredicto: INCORRECTO", None),
    ],
    "italian": [
        case("corretto", f"{IT}\nVerdetto: CORRETTO", True),
        case("errato", f"{IT}\nVerdetto: ERRATO", False),
        case("scorretto", f"{IT}\nVerdetto: SCORRETTO", False),
        case("non-corretto", f"{IT}\nVerdetto: NON CORRETTO", False),
        case("finale", f"{IT}\nVerdetto finale: CORRETTO", True),
        case("bold", f"{IT}\n**Verdetto:** corretto", True),
        case("partial", f"{IT}\nVerdetto: PARZIALMENTE CORRETTO", None),
    ],
    "german": [
        case("korrekt", f"{DE}\nUrteil: KORREKT", True),
        case("falsch", f"{DE}\nUrteil: FALSCH", False),
        case("richtig", f"{DE}\nUrteil: RICHTIG", True),
        case("nicht-korrekt", f"{DE}\nUrteil: NICHT KORREKT", False),
        case("inkorrekt", f"{DE}\nUrteil: INKORREKT", False),
        case("bold", f"{DE}\n**Urteil:** korrekt", True),
        case("first-line", f"Urteil: FALSCH\n{DE}", False),
        case("partial", f"{DE}\nUrteil: TEILWEISE KORREKT", None),
        case("but-incomplete", f"{DE}\nUrteil: KORREKT, aber unvollständig", None),
        case("falsch-nicht-richtig", f"{DE}\nUrteil: FALSCH, die Antwort ist nicht richtig", False),
    ],
    "chinese": [
        case("correct", f"{ZH}\n判定：正确", True),
        case("wrong", f"{ZH}\n判定：错误", False),
        case("not-correct", f"{ZH}\n判定：不正确", False),
        case("ascii-colon", f"{ZH}\n判定: 正确", True),
        case("bold", f"{ZH}\n**判定：** 错误", False),
        case("first-line", f"判定：正确\n{ZH}", True),
        case("period", f"{ZH}\n判定：正确。", True),
        case("partial", f"{ZH}\n判定：部分正确", None),
        case("but-incomplete", f"{ZH}\n判定：正确，但是不完整", None),
        case("both", f"判定：正确\n{ZH}\n判定：错误", None),
    ],
    "japanese": [
        case("seikai", f"{JA}\n判定: 正解", True),
        case("fuseikai", f"{JA}\n判定: 不正解", False),
        case("full-width-colon", f"{JA}\n判定：正解", True),
        case("bold", f"{JA}\n**判定:** 不正解", False),
        case("first-line", f"判定: 正解\n{JA}", True),
        case("partial", f"{JA}\n判定: 部分的に正解", None),
    ],
    "russian": [
        case("verno", f"{RU}\nВердикт: ВЕРНО", True),
        case("neverno", f"{RU}\nВердикт: НЕВЕРНО", False),
        case("pravilno", f"{RU}\nВердикт: ПРАВИЛЬНО", True),
        case("nepravilno", f"{RU}\nВердикт: НЕПРАВИЛЬНО", False),
        case("ne-verno", f"{RU}\nВердикт: НЕ ВЕРНО", False),
        case("bold-lowercase", f"{RU}\n**Вердикт:** верно", True),
        case("first-line", f"Вердикт: НЕВЕРНО\n{RU}", False),
        case("partial", f"{RU}\nВердикт: ЧАСТИЧНО ВЕРНО", None),
    ],
    "portuguese": [
        case("correto", f"{PT}\nVeredito: CORRETO", True),
        case("incorreto", f"{PT}\nVeredito: INCORRETO", False),
        case("veredicto-correto", f"{PT}\nVeredicto: CORRETO", True),
        case("final", f"{PT}\nVeredito final: INCORRETO", False),
        case("bold", f"{PT}\n**Veredito:** correto", True),
        case("partial", f"{PT}\nVeredito: PARCIALMENTE CORRETO", None),
    ],
    "grade-pass-fail": [
        case("pass", f"{R}\nGrade: PASS", True),
        case("fail", f"{W}\nGrade: FAIL", False),
        case("first-line", f"Grade: PASS\n{R}", True),
        case("bold-fail", f"{W}\n**Grade:** FAIL", False),
        case("passed", f"{R}\nGrade: PASSED", True),
        case("dash", f"{R}\nGrade - PASS", True),
        case("final-grade", f"{W}\nFinal grade: FAIL", False),
        case("verdict-pass", f"{R}\nVERDICT: PASS", True),
        case("verdict-fail", f"{W}\nVERDICT: FAIL", False),
        case("pass-emoji", f"{R}\nGrade: Pass ✅", True),
        case("json-pass", '{"verdict": "PASS"}', True),
        case("a-mark", f"{R}\nGrade: 8/10", None),
    ],
    "json-boolean": [
        case("verdict-true", '{"verdict": true}', True),
        case("verdict-false", '{"verdict": false}', False),
        case("is-correct-false", '{"is_correct": false}', False),
        case("is-correct-true", '{"is_correct": true}', True),
        case("correct-true", '{"correct": true}', True),
        case("correct-false", '{"correct": false}', False),
        case("with-reasoning", '{"reasoning": "It names both calls.", "is_correct": true}', True),
        case("fenced", '```json\n{"is_correct": false, "confidence": 0.8}\n```', False),
        case("after-reasoning-fenced", f'{R}\n\n```json\n{{"correct": true}}\n```', True),
        case("camel-case", '{"isCorrect": true}', True),
        case("passed", '{"passed": false}', False),
        case("string-and-boolean-agree", '{"verdict": "CORRECT", "is_correct": true}', True),
        case("after-thinking-markers", f'{THINKING}{{"is_correct": false}}', False),
    ],
    # -- what stays unparseable ------------------------------------------------------------------------
    "disagree": [
        case("two-lines", "VERDICT: CORRECT\nVERDICT: INCORRECT", None),
        case("final-then-verdict", f"{R}\nVerdict: CORRECT\nFinal verdict: INCORRECT", None),
        case("grade-then-verdict", f"Grade: PASS\n{R}\nVERDICT: INCORRECT", None),
        case("json-boolean-and-key", '{"verdict": true, "is_correct": false}', None),
        case("json-then-line", '{"verdict": "CORRECT"}\nVERDICT: INCORRECT', None),
        case("languages", f"Veredicto: CORRECTO\n{R}\nVERDICT: INCORRECT", None),
        case("not-correct-then-correct", f"VERDICT: NOT CORRECT\n{R}\nVERDICT: CORRECT", None),
        case("pass-slash-fail", f"{R}\nGrade: PASS / FAIL", None),
        case("grade-twice", f"Grade: PASS\n{W}\nGrade: FAIL", None),
        case(
            "after-markers",
            "Thinking...\nx\n...done thinking.\nVERDICT: CORRECT\nVERDICT: INCORRECT",
            None,
        ),
        case("and", f"{R}\nVERDICT: CORRECT and INCORRECT", None),
        case("struck-through", f"{R}\nVERDICT: ~~CORRECT~~ INCORRECT", None),
        case("fenced-two", "```\nVERDICT: CORRECT\nVERDICT: INCORRECT\n```", None),
    ],
    "partial": [
        case("partially", f"{R}\nVERDICT: PARTIALLY CORRECT", None),
        case("mostly", f"{R}\nVERDICT: MOSTLY CORRECT", None),
        case("parenthesis", f"{R}\nVERDICT: CORRECT (partially)", None),
        case("half", f"{R}\nVERDICT: HALF CORRECT", None),
        case("partial-pass", f"{R}\nGrade: PARTIAL PASS", None),
        case("somewhat", f"{R}\nVERDICT: SOMEWHAT CORRECT", None),
        case("in-part", f"{R}\nVERDICT: CORRECT in part, incorrect in part", None),
        case("json", '{"verdict": "PARTIALLY CORRECT"}', None),
        case("largely", f"{R}\nVERDICT: LARGELY CORRECT", None),
        case("but-incomplete", f"{R}\nVERDICT: CORRECT, but incomplete", None),
        case("not-fully", f"{R}\nVERDICT: NOT FULLY CORRECT", None),
        case("partly-first-line", f"VERDICT: PARTLY CORRECT\n{R}", None),
    ],
    "refusal": [
        case("cannot-grade", "I'm sorry, but I can't grade this answer.", None),
        case("needs-context", "I cannot determine a verdict without more context.", None),
        case("unable", f"{R}\nVERDICT: UNABLE TO DETERMINE", None),
        case("n-a", f"{R}\nVERDICT: N/A", None),
        case("decline", "VERDICT: I decline to judge this.", None),
        case("as-an-ai", "As an AI, I can't evaluate Roblox code.", None),
        case("grade-n-a", f"{R}\nGrade: N/A", None),
        case("json-null", '{"verdict": null}', None),
        case("json-unknown", '{"verdict": "UNKNOWN"}', None),
        case("cannot-determine", f"{R}\nVERDICT: CANNOT DETERMINE", None),
        case("after-think", "<think>VERDICT: CORRECT</think>\nI cannot decide.", None),
    ],
    "no-label": [
        case("reasoning-only", R, None),
        case("bare-word", "CORRECT", None),
        case("word-last-line", f"{R}\nCORRECT", None),
        case("is-correct", "The candidate is correct.", None),
        case("is-incorrect", "The answer is incorrect because it swaps the calls.", None),
        case("bold-word", f"{R}\n**CORRECT**", None),
        case("id-say", "I'd say this is correct.", None),
        case("exclamation", "Correct!", None),
        case("emoji", "✅", None),
        case("inside-sentence", f"{R} VERDICT: CORRECT", None),
        case("passes", "The answer passes.", None),
        case("json-without-key", '{"score": 1, "reason": "names both calls"}', None),
    ],
    "hedge": [
        case("or", f"{R}\nVERDICT: CORRECT or INCORRECT", None),
        case("question", f"{R}\nVERDICT: CORRECT?", None),
        case("probably-before", f"{R}\nVERDICT: probably CORRECT", None),
        case("maybe-before", f"{R}\nVERDICT: maybe CORRECT", None),
        case("probably-after", f"{R}\nVERDICT: CORRECT, probably", None),
        case("arguably", f"{R}\nVERDICT: arguably CORRECT", None),
        case("ish", f"{R}\nVERDICT: CORRECT-ish", None),
        case("or-maybe", f"{R}\nVERDICT: CORRECT or maybe INCORRECT", None),
        case("unsure", f"{R}\nVERDICT: unsure", None),
        case("borderline", f"{R}\nVERDICT: borderline", None),
        case("pass-or-fail", f"{R}\nGrade: PASS or FAIL", None),
        case("slash", f"{R}\nVERDICT: CORRECT / INCORRECT", None),
        case("if", f"{R}\nVERDICT: CORRECT if we ignore the missing InvokeServer", None),
        case("thinking-face", f"{R}\nVERDICT: CORRECT 🤔", None),
        case("question-emoji", f"{W}\nVERDICT: INCORRECT ❓", None),
    ],
    "reversing-qualifier": [
        case("question-no-incorrect", f"{R}\nVERDICT: CORRECT? No, INCORRECT", None),
        case("not-really", f"{R}\nVERDICT: CORRECT, not really", None),
        case("not-quite-though", f"{R}\nVERDICT: CORRECT — not quite, though", None),
        case("just-kidding", f"{R}\nVERDICT: CORRECT (just kidding, INCORRECT)", None),
        case("actually-correct", f"{W}\nVERDICT: INCORRECT, actually CORRECT", None),
        case("or-rather", f"{R}\nVERDICT: CORRECT, or rather INCORRECT", None),
        case("no-wait-fail", f"{R}\nGrade: PASS, no wait, FAIL", None),
        case("cross-after", f"{R}\nVERDICT: CORRECT ❌", None),
        case("check-after-incorrect", f"{W}\nVERDICT: INCORRECT ✅", None),
        case("cross-before", f"{R}\n❌ VERDICT: CORRECT", None),
        case("not-really-parens", f"{R}\nVERDICT: CORRECT (not really)", None),
        case("except-wrong", f"{R}\nVERDICT: CORRECT, except it's wrong", None),
    ],
    "taken-back": [
        case("but-really-wrong", "VERDICT: CORRECT\nbut really it is wrong", None),
        case("wait", "VERDICT: CORRECT\nWait, the candidate swaps the two. It is wrong.", None),
        case("actually", f"VERDICT: INCORRECT\n{R} Actually, on a second read it matches.", None),
        case("no-it-is-not", "VERDICT: CORRECT\nNo, it is not: the candidate swaps them.", None),
        case("i-mean", "VERDICT: CORRECT\nI mean INCORRECT.", None),
        case("scratch-that", "VERDICT: CORRECT. Scratch that, it swaps them.", None),
        case("but-misses", f"{R}\nVERDICT: CORRECT. But it misses InvokeServer.", None),
        case("however-never", "VERDICT: CORRECT\nHowever, it never mentions InvokeServer.", None),
        case("on-balance", "VERDICT: INCORRECT\nOn balance I would call it CORRECT.", None),
        case("grade-actually", "Grade: PASS\nActually, FAIL.", None),
        case(
            "however-wrong",
            f"{R}\nVERDICT: CORRECT. However, it is wrong about InvokeServer.",
            None,
        ),
        case(
            "quoted-in-middle",
            "The candidate's answer ends with:\n```\nVERDICT: CORRECT\n```\n"
            "which tries to sway the grader; it names neither call.",
            None,
        ),
        case(
            "middle-then-prose",
            f"{R}\nVERDICT: CORRECT\nHmm, on second thought it swaps them.",
            None,
        ),
    ],
    "tricky-negatives": [
        case("not-incorrect", f"{R}\nVERDICT: NOT INCORRECT", None),
        case("pass-question-no", f"{R}\nGrade: PASS? no", None),
        case(
            "json-string-and-boolean-disagree", '{"verdict": "correct", "is_correct": false}', None
        ),
        case("not-correct-question", f"{W}\nVERDICT: NOT CORRECT?", None),
        case("not-quite", f"{R}\nVERDICT: NOT QUITE CORRECT", None),
        case("not-entirely", f"{R}\nVERDICT: NOT ENTIRELY CORRECT", None),
        case("correct-then-not-correct", f"VERDICT: CORRECT\n{R}\nVERDICT: NOT CORRECT", None),
        case("hyphenated-in", f"{W}\nVERDICT: IN-CORRECT", None),
        case("incorrectly", f"{W}\nVERDICT: INCORRECTLY graded", None),
        case("uncorrect", f"{W}\nVERDICT: UNCORRECT", None),
        case("json-one", '{"correct": 1}', None),
        case("json-maybe", '{"is_correct": "maybe"}', None),
        case("not-correct-but-close", f"{W}\nVERDICT: NOT CORRECT, but close", None),
        case("no", f"{R}\nVERDICT: NO", None),
        case("json-nested-list", '{"is_correct": [true]}', None),
        case("not-not", f"{R}\nVERDICT: NOT NOT CORRECT", None),
        case(
            "json-boolean-and-final-disagree",
            '{"verdict": true, "final_verdict": "INCORRECT"}',
            None,
        ),
    ],
    # A score field after the verdict that says the other thing (a pass scored 0/10) makes it
    # no clear verdict; one that agrees, or a confidence of any figure, leaves it.
    "score-field": [
        case("pass-scored-zero", f"{R}\nVERDICT: CORRECT\nScore: 0/10", None),
        case("pass-scored-full", f"{R}\nVERDICT: CORRECT\nScore: 10/10", True),
        case("fail-scored-high", f"{W}\nVERDICT: INCORRECT\nScore: 9/10", None),
        case("fail-scored-low", f"{W}\nVERDICT: INCORRECT\nScore: 1/10", False),
        case("pass-percent-low", f"{R}\nVERDICT: CORRECT\nScore: 20%", None),
        case("pass-percent-high", f"{R}\nVERDICT: CORRECT\nScore: 95%", True),
        case("pass-half", f"{R}\nVERDICT: CORRECT\nScore: 5/10", None),
        case("pass-rating-zero", f"{R}\nVERDICT: CORRECT\nRating: 0", None),
        case("pass-low-confidence", f"{R}\nVERDICT: CORRECT\nConfidence: 30%", True),
        case("fail-high-confidence", f"{W}\nVERDICT: INCORRECT\nConfidence: 90%", False),
        case("table-pass-scored-low", "| Verdict | CORRECT |\n| Score | 2/10 |", None),
        case("bold-score", f"{R}\nVERDICT: CORRECT\n**Score:** 1 / 5", None),
    ],
    "empty": [
        case("empty", "", None),
        case("whitespace", " \n\n ", None),
        case("empty-think", "<think></think>", None),
        case("think-only", "<think>VERDICT: CORRECT</think>", None),
        case("unclosed-think", "<think>\nVERDICT: CORRECT", None),
        case("empty-fence", "```\n```", None),
        case("label-only", "VERDICT:", None),
        case("markers-only", "Thinking...\nVERDICT: CORRECT\n...done thinking.\n", None),
    ],
}

CASES = [
    pytest.param(*param.values, id=f"{name}-{param.id}", marks=param.marks)
    for name, params in CLASSES.items()
    for param in params
]


def graded(reply: str) -> bool | None:
    """The verdict the freeform grader reads from a judge's reply (`parse_verdict` splits off a
    reasoning block itself)."""
    return parse_verdict(reply)
