"""Making providers and what is checked first: `make_provider(spec)`, `PROVIDERS` (the
registry's view), the API keys a command needs (`check_keys`) and the ones it redacts, and
the endpoint a spec really calls (`effective_spec`). Re-exported by `evals.providers`."""

from __future__ import annotations

import dataclasses
import importlib
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from evals import urls
from evals.entry_points import Registry
from evals.errors import UsageError
from evals.words import did_you_mean, in_words

from . import _registry
from ._base import Completion, Provider, ProviderSpec, Request, api_key_from_env, is_openrouter
from ._registry import ProviderInfo, providers


# Every registered provider by name (`providers()`), read when first asked.
PROVIDERS = Registry(providers, _registry._known)


def batch_providers() -> str:
    """The providers with a Batch API, as the --batch refusal names them ("a, b, and c")."""
    names = [
        info.batch_name or name for name, info in PROVIDERS.items() if info.batch_price is not None
    ]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])}, and {names[-1]}"


def effective_spec(spec: ProviderSpec) -> ProviderSpec:
    """What a provider will really call. The endpoint: with no --base-url, the one its SDK
    takes from the environment (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), so that a run through a
    proxy or a mock never shares the real endpoint's run folder. The files: for a provider
    with a `recorder` (local), what the named folders hold (`ProviderSpec.recorded`)."""
    info = PROVIDERS.get(spec.provider)
    if info is None:
        return spec
    if info.recorder:
        module, function = info.recorder.split(":")
        spec = dataclasses.replace(
            spec, recorded=tuple(getattr(importlib.import_module(module), function)(spec).items())
        )
    if spec.base_url or not info.base_url_env or not os.environ.get(info.base_url_env):
        return spec
    return dataclasses.replace(
        spec, base_url=urls.without_credentials(os.environ[info.base_url_env])
    )


def make_provider(spec: ProviderSpec) -> Provider:
    return provider_class(spec.provider)(spec)


def deferred_provider(spec: ProviderSpec) -> Provider:
    """`make_provider(spec)` made at its first call: a run whose calls a child process makes
    (`evals.askers.processes`) never imports the SDK in pytest's process. Its key is checked now."""
    check_key(spec)
    return _Deferred(spec) if _info(spec.provider).network else make_provider(spec)


class _Deferred(Provider):
    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        self._made: Provider | None = None
        self._lock = threading.Lock()

    @property
    def secrets(self) -> tuple[str, ...]:
        return configured_secrets(self.spec)

    def complete(self, request: Request, *, timeout: float) -> Completion:
        return self._provider().complete(request, timeout=timeout)

    def batch_api(self):
        return self._provider().batch_api()

    def _provider(self) -> Provider:
        with self._lock:
            if self._made is None:
                self._made = make_provider(self.spec)
            return self._made


def provider_class(provider: str) -> type[Provider]:
    module, cls = _info(provider).path.split(":")
    return getattr(importlib.import_module(module), cls)


def check_key(spec: ProviderSpec) -> None:
    """Raise what making the provider would raise for an unknown provider or a missing API
    key, without making it (and so without importing its SDK)."""
    _info(spec.provider)
    if variable := key_variable(spec):
        api_key_from_env(variable, required=True)


CANDIDATE_KEY_HINT = " (or name another variable with --api-key-env)"
JUDGE_KEY_HINT = "; or pick judges you have keys for with --judge PROVIDER:MODEL"


@dataclass(frozen=True)
class Missing:
    """A provider a command will call that `check_key` refuses: the flag that named it
    ("--provider openai", "--judge openai:gpt-5-mini"), the key's variable (None: another
    problem, such as an unknown provider) and the refusal."""

    flag: str
    variable: str | None
    message: str


def missing_keys(calls: Iterable[tuple[str, ProviderSpec]]) -> list[Missing]:
    """What `check_key` finds for every (flag, spec) of `calls`, once per flag."""
    found: dict[str, Missing] = {}
    for flag, spec in calls:
        try:
            check_key(spec)
        except UsageError as error:
            known = spec.provider in PROVIDERS  # else the refusal is not about a key
            found.setdefault(flag, Missing(flag, key_variable(spec) if known else None, str(error)))
    return list(found.values())


def check_keys(calls: Iterable[tuple[str, ProviderSpec]]) -> None:
    """Every missing key (or unknown provider) of `calls` in one UsageError: the main command
    needs three keys, and a user who meets them one failed run at a time exports them one at
    a time."""
    if missing := missing_keys(calls):
        raise UsageError(keys_message(missing))


def keys_message(missing: list[Missing]) -> str:
    """One line for what `missing_keys` found, each variable once with the flags that need
    it, and the fixes that apply: another variable for the candidate's key, other judges for
    theirs."""
    judges = [m for m in missing if m.flag.startswith("--judge")]
    hints = (CANDIDATE_KEY_HINT if len(judges) < len(missing) else "") + (
        JUDGE_KEY_HINT if judges else ""
    )
    if len(missing) == 1:  # as it always was: the candidate's bare, a judge's named by its --judge
        (only,) = missing
        return (f"{only.flag}: {only.message}" if judges else only.message) + (
            hints if only.variable or judges else ""
        )
    unset: dict[str, list[str]] = {}
    for m in missing:
        if m.variable:
            unset.setdefault(m.variable, []).append(m.flag)
    keys = ", ".join(f"{variable} ({', '.join(flags)})" for variable, flags in unset.items())
    parts = (
        [
            f"{in_words(len(unset))} API {'keys are' if len(unset) > 1 else 'key is'} not set: "
            f"{keys}, export each in its variable"
        ]
        if unset
        else []
    )
    return "; ".join(parts + [f"{m.flag}: {m.message}" for m in missing if not m.variable]) + hints


def unknown_provider(provider: str) -> str:
    """The line refusing a --provider that no installed package registered."""
    return (
        f"--provider {provider!r} is unknown{did_you_mean(provider, list(PROVIDERS))}; "
        f"choose one of {', '.join(PROVIDERS)}"
    )


def _info(provider: str) -> ProviderInfo:
    if provider not in PROVIDERS:
        raise UsageError(unknown_provider(provider))
    return PROVIDERS[provider]


def key_variable(spec: ProviderSpec) -> str | None:
    """The environment variable holding the API key `spec` is sent with; None when it sends none."""
    info = PROVIDERS[spec.provider]
    if not (info.key_env or info.openrouter_key_env):
        return None
    return spec.api_key_env or (
        info.openrouter_key_env
        if info.openrouter_key_env and is_openrouter(spec.base_url)
        else info.key_env
    )


def configured_secrets(spec: ProviderSpec) -> tuple[str, ...]:
    """The API key `spec` would be sent with, when its variable is set, without making the
    provider (or importing its SDK): a run that never calls a judge still redacts its key."""
    variable = key_variable(spec)
    return (
        (os.environ[variable],) if variable and os.environ.get(variable) else ()
    ) + urls.secrets(spec.base_url)
