"""Which judges grade the freeform eval, as the command line names them and the run identity
records them (`JudgeSpec`: `--judge provider:model[@base_url]`), the default panel, and what
every judge call is pinned to. The interface of the judges: the identity, `evaluate` and the
pytest options read it; the prompt and the vote are `evals.grading.judges`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from evals.providers import PROVIDERS, ProviderSpec, effective_spec
from evals.urls import without_credentials

PROMPT_VERSION = "judge-v1"  # the version of the prompt in judges.py: bump it with the prompt
TEMPERATURE = 0.0
SEED = 0


# The key part of a --judge: the variable holding the judge's API key, at the end.
_KEY = re.compile(r",key=([A-Za-z_][A-Za-z0-9_]*)\Z")


@dataclass(frozen=True)
class JudgeSpec:
    """A judge as given to `--judge provider:model[@base_url][,key=VAR]`: VAR names the
    environment variable holding its API key (the provider's own variable when left out). The
    variable is how to reach the judge, not who it is: not in its name nor the run identity."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = field(default=None, compare=False)
    # A cap on each verdict's tokens (--judge-max-tokens): None sends none (the server's default).
    max_tokens: int | None = None

    @classmethod
    def parse(cls, text: str) -> JudgeSpec:
        key = _KEY.search(text)
        if key:
            return replace(cls.parse(text[: key.start()]), api_key_env=key.group(1))
        if ",key=" in text:
            raise ValueError(
                f"--judge {text.partition(',key=')[0]!r}: ,key= takes the name of an environment"
                " variable (letters, digits and _), e.g. ,key=MY_JUDGE_KEY"
            )
        head, at, base_url = text.partition("@")
        provider, sep, model = (part.strip() for part in head.partition(":"))
        base_url = without_credentials(base_url.strip())  # a secret, kept apart (`evals.urls`)
        text = head + at + base_url  # what a message may show
        if not sep or not provider or not model:
            raise ValueError(
                f"--judge {text!r}: expected provider:model or provider:model@base_url"
            )
        if at and not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--judge {text!r}: the part after '@' must be an http(s) base URL")
        return cls(provider, model, base_url or None)

    def provider_spec(self) -> ProviderSpec:
        return ProviderSpec(
            self.provider,
            self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            max_tokens=self.max_tokens,
        )

    def flagged(self) -> tuple[str, ProviderSpec]:
        """(its --judge flag, its provider spec): as `evals.providers.check_keys` names what it checks."""
        return f"--judge {self.flag}", self.provider_spec()

    def effective(self) -> JudgeSpec:
        """The judge with the endpoint it will really call (see `effective_spec`)."""
        return replace(self, base_url=effective_spec(self.provider_spec()).base_url)

    def with_key(self, api_key_env: str | None) -> JudgeSpec:
        return replace(self, api_key_env=api_key_env)

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    @property
    def flag(self) -> str:
        """What --judge is given to ask it again: its name and its key's variable."""
        return self.name + (f",key={self.api_key_env}" if self.api_key_env else "")

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "prompt": PROMPT_VERSION,
        }
        info = PROVIDERS.get(self.provider)
        if info is None or info.sampling:  # what the provider does not send is not recorded
            ident |= {"temperature": TEMPERATURE, "seed": SEED}
        if self.base_url:
            ident["baseUrl"] = self.base_url
        if self.max_tokens is not None:  # absent: the identity runs published before it had
            ident["maxTokens"] = self.max_tokens
        return ident


def capped(judges: tuple[JudgeSpec, ...], max_tokens: int | None) -> tuple[JudgeSpec, ...]:
    """The judges with --judge-max-tokens, when it is given."""
    if max_tokens is None:
        return judges
    return tuple(replace(judge, max_tokens=max_tokens) for judge in judges)


DEFAULT_JUDGES = (
    JudgeSpec("openai", "gpt-5-mini"),
    JudgeSpec("anthropic", "claude-haiku-4-5"),
    JudgeSpec("live", "deepseek/deepseek-v3.2", "https://openrouter.ai/api/v1"),
)
REFERENCE_JUDGES = (JudgeSpec("reference", "exact-match"),)


def default_judges(candidate_provider: str) -> tuple[JudgeSpec, ...]:
    """Offline runs are judged offline, by the exact-match reference judge."""
    return REFERENCE_JUDGES if candidate_provider == "reference" else DEFAULT_JUDGES
