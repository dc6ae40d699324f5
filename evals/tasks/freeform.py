"""RobloxQA freeform: the same kind of question without choices; an ensemble of LLM judges
compares the reply with the reference answer (majority vote), and an unparseable verdict is
counted, never a pass."""

from __future__ import annotations

import dataclasses

from evals.datasets import robloxqa
from evals.grading import judge_spec
from evals.messages import Request, Usage
from evals.tasks import Shown, Task, register_task


@register_task
class Freeform(Task):
    name = "freeform"
    tag = "ff"
    key = "freeform"
    title = "Freeform"
    description = "RobloxQA freeform answers (graded by a panel of LLM judges)"
    marker_help = "RobloxQA freeform items, graded by LLM judges"
    position = 10
    prompt_version = "ff-v1"
    uses_judges = True
    named_datasets = ("robloxqa-openended-v1", "robloxqa-v2")
    # verdicts 2: judges who say it their own way; a verdict read without the judge's reasoning
    # block (evals.reasoning). verdicts 3: plain-text thinking markers; the forms of issue 29.
    graders = {"verdicts": "3"}  # evals.grading.judges.parse_verdict and the majority vote
    graded_fields = ("verdicts", "agreed", "note")

    def serves(self, columns):
        return "test" not in columns and (
            not columns & {"choices", "options"} or "incorrect_0" in columns
        )

    def dataset_source(self, identity):
        return robloxqa.source_of(identity)

    def load(self, source: str, split: str):
        return robloxqa.load_freeform(source, split)

    def prompt(self, sample: robloxqa.FreeformQuestion) -> str:
        return f"Answer the following question about Roblox development precisely and concisely.\n\n{sample.question}"

    def judge_request(self, sample, completion):
        # The reply as recorded: without its reasoning block since this version kept it apart
        # (`Completion.kept`). A record of an older version still holds it in its text, and its
        # judges are asked as they were: the question changed, verify (which asks no model)
        # could not reproduce the published verdicts from the run folder.
        reply = completion.text
        if not reply.strip():
            return None
        from evals.grading import judges  # its rules compile when first used, not to plan a run

        return Request(
            prompt=judges.judge_prompt(sample.question, sample.answer, reply),
            temperature=judge_spec.TEMPERATURE,
            seed=judge_spec.SEED,
            context={"reply": reply, "reference": sample.answer},
        )

    def score(self, sample, completion, scoring):
        from evals.grading import judges  # as in judge_request

        request = self.judge_request(sample, completion)
        if request is None:
            return {
                "status": "wrong",
                "correct": False,
                "verdicts": [],
                "agreed": True,
                "note": "empty reply",
            }
        replies = [scoring.judge(sample.id, i, request) for i in range(len(scoring.judge_names))]
        verdicts = [judges.parse_verdict(reply.text) for reply in replies]
        correct = judges.majority(verdicts)
        return {
            "status": "correct" if correct else "wrong",
            "correct": correct,
            "verdicts": [
                {"judge": name, "verdict": None if v is None else ("CORRECT" if v else "INCORRECT")}
                for name, v in zip(scoring.judge_names, verdicts)
            ],
            "agreed": judges.unanimous(verdicts),
            "judgeUsage": dataclasses.asdict(sum((reply.usage for reply in replies), Usage())),
        }

    def shown(self, row, calls):
        """Each judge's verdict and its own reply (what the verdict was read from), and whether
        they agreed; of an unfinished run, the judges' replies stored so far."""
        verdicts = (row or {}).get("verdicts") or []
        asked = sorted(
            (int(role[6:]), record)
            for role, record in calls.items()
            if role.startswith("judge-") and role[6:].isdigit()
        )
        count = max(len(verdicts), max((i + 1 for i, _ in asked), default=0))
        stored = dict(asked)
        parts = []
        for i in range(count):
            record = stored.get(i) or {}
            provider = record.get("request", {}).get("provider") or {}
            name = (
                verdicts[i]["judge"]
                if i < len(verdicts)
                else (
                    f"{provider.get('provider')}:{provider.get('model')}"
                    if provider
                    else f"judge {i + 1}"
                )
            )
            if i < len(verdicts):
                verdict = verdicts[i]["verdict"]
                mark = {"CORRECT": "correct", "INCORRECT": "wrong"}.get(
                    verdict or "", "unparseable"
                )
                parts.append(
                    Shown(f"Judge {name}", verdict or "unparseable: no verdict read", mark=mark)
                )
            if "response" in record:
                parts.append(
                    Shown(f"{name} replied", record["response"].get("text") or "", block=True)
                )
            elif "error" in record:
                parts.append(Shown(f"{name}'s call failed", record["error"].get("message", "")))
        if verdicts:
            parts.append(
                Shown(
                    "Judges",
                    "unanimous" if row and row.get("agreed") else "split: the majority decides",
                )
            )
        if row and row.get("note"):
            parts.append(Shown("Note", row["note"]))
        return parts

    def explain(self, row):
        if not row["verdicts"]:
            return row.get("note", "wrong")
        votes = ", ".join(f"{v['judge']}: {v['verdict'] or 'unparseable'}" for v in row["verdicts"])
        return f"judged wrong by majority ({votes})"

    def summarize(self, rows):
        graded = [r for r in rows if "verdicts" in r and r["verdicts"]]
        unparseable = sum(v["verdict"] is None for r in graded for v in r["verdicts"])
        agreement = round(sum(r["agreed"] for r in graded) / len(graded), 4) if graded else None
        return {"judgeUnparseable": unparseable, "judgeAgreement": agreement}
