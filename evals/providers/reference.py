"""`reference`: answers with the dataset's gold answer, offline, at no cost.

It validates datasets and graders end to end. As a judge it writes a verdict in the real
verdict format, correct only when the reply is the reference answer verbatim, so an offline
run still goes through the whole judge path (prompt, parse, vote). Its runs are never
publishable."""

from __future__ import annotations

from evals.providers import ProviderInfo, register_provider

from ._base import Completion, Provider, Request

register_provider(
    "reference",
    ProviderInfo("evals.providers.reference:ReferenceProvider", network=False, position=40),
)


class ReferenceProvider(Provider):
    def complete(self, request: Request, *, timeout: float) -> Completion:
        context = request.context
        if "reply" in context:
            same = context["reply"].strip() == context["reference"].strip()
            reason = (
                "The reply is the reference answer verbatim."
                if same
                else "The reply differs from the reference answer."
            )
            from evals.grading.judges import (
                format_verdict,
            )  # the verdict parser's rules load with it

            return Completion(text=f"{reason}\n{format_verdict(same)}", model="reference")
        return Completion(text=context["gold"], model="reference", finish_reason="stop")
