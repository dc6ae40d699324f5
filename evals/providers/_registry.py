"""The registry of providers: every provider an installed package registers
(`register_provider(name, ProviderInfo(...))`), by what it is and takes, known without
importing its SDK. The modules the `roblox_evals` entry points name are imported on the first
question (`evals.entry_points.load`); `provider_ahead` imports one provider's alone."""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass

from evals import entry_points
from evals.flags import Field, Flag

_providers: dict[str, tuple[str, ProviderInfo]] = {}  # name -> (the registering module, what it is)


@dataclass(frozen=True)
class ProviderInfo:
    """What a provider is and what it sends, known without importing its SDK. A provider's
    module registers one (`register_provider`) and imports its SDK only
    inside its functions."""

    path: str  # "module:Class", imported on first use so that an offline run loads no SDK
    takes: frozenset[str] = frozenset()  # identity fields it sends, beyond provider and model
    efforts: tuple[str, ...] = ()
    sampling: bool = True  # takes a temperature and a seed (judges pin both)
    needs_base_url: bool = False
    base_url_env: str | None = None  # the variable its SDK reads when no base URL is given
    # "module:function" (spec -> what the identity records, `ProviderSpec.recorded`), for a
    # provider whose model is files: imported without the provider's own dependencies.
    recorder: str | None = None
    records: tuple[str, ...] = ()  # the config keys `recorder` sets (read back from a result file)
    # It loads the model into the process that asks: one process (-n 0), batching in it.
    in_process: bool = False
    # It asks over the network: its calls can be made by another process (`evals.askers.processes`).
    network: bool = True
    # The variable its API key is read from (--api-key-env overrides it), and the one it reads
    # on OpenRouter; neither: it sends no key. Known here so that redacting a judge's key
    # never imports the judge's SDK.
    key_env: str | None = None
    openrouter_key_env: str | None = None
    # How-to-run flags only it takes (`evals.flags.Flag` rows): pytest and evaluate take them
    # when it is registered, and refuse them with another provider.
    flags: tuple[Flag, ...] = ()
    # Identity flags only it sends (`evals.flags.Field` rows, on_spec): part of its runs'
    # identity (a different value, a different run folder), read with `ProviderSpec.value`,
    # refused with another provider.
    fields: tuple[Field, ...] = ()
    # A Batch API (`Provider.batch_api`): the share of the list price its calls cost, and how
    # the --batch refusal names the providers that have one. None: it has none.
    batch_price: float | None = None
    batch_name: str | None = None  # None: its name
    position: int = 100  # its place in lists of providers (then by name)
    # The modules its calls need, its SDK: imported ahead by the process that will ask, while
    # pytest starts (its module imports them only where they are used).
    sdk: tuple[str, ...] = ()


def register_provider(name: str, info: ProviderInfo) -> ProviderInfo:
    """Register a provider (`--provider NAME`) by what it is and takes (`ProviderInfo`), from
    the module that defines it; the module must not import its SDK at its top. Registering a
    name again from the same module (imported again) replaces it; from another, it is refused."""
    return entry_points.register_in(_providers, "provider", name, info, ProviderInfo)


def providers() -> dict[str, ProviderInfo]:
    """Every registered provider by name, in the order of their `position` (then name)."""
    entry_points.load()
    return _known()


def _known() -> dict[str, ProviderInfo]:
    """The providers registered so far, loading nothing (`entry_points.Registry`)."""
    return {name: info for name, (_, info) in _providers.items()}


def provider_ahead(
    name: str, found: list[tuple[str, str, str | None]] | None = None
) -> ProviderInfo | None:
    """The provider `name` as its own entry point (the one of that name; from `found`, else
    the installed ones) registers it, without loading the others: for the process that will
    ask the model (`evals.askers.processes.prestart`), which imports the SDK first. None when no
    entry point of that name registers it."""
    if name not in _providers:
        points = (
            entry_points.points_named(name)
            if found is None
            else [point for point in found if point[0] == name]
        )
        for _, value, _ in points:
            with contextlib.suppress(Exception):  # a broken one is reported by load(), in one line
                importlib.import_module(value.partition(":")[0].strip())
    found_info = _providers.get(name)
    return found_info[1] if found_info else None
