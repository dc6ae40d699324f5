"""Which judges grade the freeform eval, as the command line names them and the run identity
records them (`JudgeSpec`: `--judge provider:model[@base_url]`), the default panel, and what
every judge call is pinned to. The interface of the judges: the identity, `evaluate` and the
pytest options read it; the prompt and the vote are `evals.grading.judges`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.providers import PROVIDERS, ProviderSpec, effective_spec
from evals.urls import without_credentials

PROMPT_VERSION = "judge-v1"  # the version of the prompt in judges.py: bump it with the prompt
TEMPERATURE = 0.0
SEED = 0


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
            raise ValueError(
                f"--judge {text!r}: expected provider:model or provider:model@base_url"
            )
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
