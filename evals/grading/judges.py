"""Freeform grading by an ensemble of LLM judges: the prompt, strict verdict parsing, the vote.

An unparseable verdict is counted and never read as a pass: it simply is not a CORRECT vote."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evals.providers import PROVIDERS, ProviderSpec, effective_spec
from evals.urls import without_credentials

PROMPT_VERSION = "judge-v1"
TEMPERATURE = 0.0
SEED = 0

_PROMPT = """You are grading an answer to a question about Roblox game development and the Luau language.

Question:
{question}

Reference answer (correct by definition):
{reference}

Candidate answer:
{reply}

Decide whether the candidate answer is correct. It is correct when it states the same key facts as the reference answer: extra correct detail is fine, wording does not matter. It is incorrect when it contradicts the reference, misses a key point the question asks for, hedges between several answers, or does not answer.

Explain your reasoning in at most three sentences. Then end your reply with one final line that is exactly
VERDICT: CORRECT
or
VERDICT: INCORRECT"""

# Possessive runs (*+): none of them can give back what the next token needs, and a long line
# that ends wrong fails at once instead of trying every shorter run.
_VERDICT_LINE = re.compile(r"^[\s*_`#>]*+VERDICT[\s*_`]*+:[\s*_`]*+(CORRECT|INCORRECT)[\s*_`.]*+$", re.IGNORECASE)
# The word, case-insensitive (a verdict line holds it once). It starts with a class, not under
# IGNORECASE, so that the regex engine skips to the v's instead of trying every position.
_VERDICT_WORD = re.compile(r"[Vv](?i:ERDICT)")
# Where str.splitlines splits a line.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def judge_prompt(question: str, reference: str, reply: str) -> str:
    return _PROMPT.format(question=question.strip(), reference=reference.strip(), reply=reply.strip())


def format_verdict(correct: bool) -> str:
    return f"VERDICT: {'CORRECT' if correct else 'INCORRECT'}"


def parse_verdict(text: str) -> bool | None:
    """True / False from a judge's reply, or None when it is not strictly one verdict.

    The verdict must be the last non-empty line, and no other verdict line may disagree
    with it: a judge that wrote both is unparseable, never a pass. Linear in the reply's
    length (`bench/parse.py`); the other lines are read only when the word VERDICT is in
    the reply more than once."""
    text = text.strip()  # so the last line is not blank
    last_break = _LINE_BREAK.search(text[::-1])
    last = _VERDICT_LINE.match(text[len(text) - last_break.start() :] if last_break else text)
    if not last:
        return None
    verdict = last.group(1).upper()
    first = _VERDICT_WORD.search(text)
    if first and _VERDICT_WORD.search(text, first.end()):
        if {m.group(1).upper() for m in filter(None, map(_VERDICT_LINE.match, text.splitlines()))} != {verdict}:
            return None
    return verdict == "CORRECT"


@dataclass(frozen=True)
class JudgeSpec:
    """A judge as given to `--judge provider:model[@base_url]`."""

    provider: str
    model: str
    base_url: str | None = None

    @classmethod
    def parse(cls, text: str) -> JudgeSpec:
        head, at, base_url = text.partition("@")
        provider, sep, model = (part.strip() for part in head.partition(":"))
        base_url = without_credentials(base_url.strip())  # a secret, kept apart (`evals.urls`)
        text = head + at + base_url  # what a message may show
        if not sep or not provider or not model:
            raise ValueError(f"--judge {text!r}: expected provider:model or provider:model@base_url")
        if at and not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--judge {text!r}: the part after '@' must be an http(s) base URL")
        return cls(provider, model, base_url or None)

    def provider_spec(self) -> ProviderSpec:
        return ProviderSpec(self.provider, self.model, base_url=self.base_url)

    def flagged(self) -> tuple[str, ProviderSpec]:
        """(its --judge flag, its provider spec): as `evals.providers.check_keys` names what it checks."""
        return f"--judge {self.name}", self.provider_spec()

    def effective(self) -> JudgeSpec:
        """The judge with the endpoint it will really call (see `effective_spec`)."""
        return JudgeSpec(self.provider, self.model, effective_spec(self.provider_spec()).base_url)

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"provider": self.provider, "model": self.model, "prompt": PROMPT_VERSION}
        info = PROVIDERS.get(self.provider)
        if info is None or info.sampling:  # what the provider does not send is not recorded
            ident |= {"temperature": TEMPERATURE, "seed": SEED}
        if self.base_url:
            ident["baseUrl"] = self.base_url
        return ident


DEFAULT_JUDGES = (
    JudgeSpec("openai", "gpt-5-mini"),
    JudgeSpec("anthropic", "claude-haiku-4-5"),
    JudgeSpec("live", "deepseek/deepseek-v3.2", "https://openrouter.ai/api/v1"),
)
REFERENCE_JUDGES = (JudgeSpec("reference", "exact-match"),)


def default_judges(candidate_provider: str) -> tuple[JudgeSpec, ...]:
    """Offline runs are judged offline, by the exact-match reference judge."""
    return REFERENCE_JUDGES if candidate_provider == "reference" else DEFAULT_JUDGES


def majority(verdicts: list[bool | None]) -> bool:
    """Correct only when more than half of all judges said CORRECT."""
    return sum(v is True for v in verdicts) * 2 > len(verdicts)


def unanimous(verdicts: list[bool | None]) -> bool:
    return None not in verdicts and len(set(verdicts)) == 1
