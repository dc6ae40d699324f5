"""Every how-to-run flag of the command line, gathered: the table's (`evals.flags.FLAGS`),
then each registered extension's own, as `evals.identity.FIELDS` gathers the identity fields.

`evals/flags.py` is only the table and what a row does; the gathering reads the registries,
so it sits up here, above the parts. Each kind of extension that may declare flags of its
own (`flags`: `Flag` rows, on what it registers) is one entry of `OWNERS`: its registry,
read when first asked: an eval's (`Task.flags`), a provider's, a power source's. pytest
declares them (`plugins/options.py`), `evaluate` takes and hands them on, a bare resume passes
the remembered ones again (an owner's own flag unless its row says `resume=None`); a provider's
own flag given with another provider is refused (`takers`). `own_values` gives an eval its own
flags' values, for `Task.resources`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Protocol

from evals.energy import sources
from evals.flags import FLAGS, OWN, Flag
from evals.providers import providers
from evals.tasks import kilowatt_hour_keys, tasks
from evals.words import either, in_words


class Owner(Protocol):
    """What an extension registers, when it may declare how-to-run flags of its own."""

    @property
    def flags(self) -> tuple[Flag, ...]: ...


# Kind of extension -> its registry (name -> what it registered), in the order their flags
# are taken, after the table's.
OWNERS: dict[str, Callable[[], Mapping[str, Owner]]] = {
    "eval": tasks,
    "provider": providers,
    "power source": sources,
}
# What a bare resume does with an owner's flag that leaves `resume` as it is (`Flag.resume`):
# a provider's goes with its provider, the others' with the run.
RESUMED_AS = {"provider": "provider"}


def how_to_run() -> tuple[Flag, ...]:
    """Every how-to-run flag: the table's, then each registered owner's own (`OWNERS`)."""
    kwh = f"{in_words(len(kilowatt_hour_keys()))} kWh figures"  # one per board eval or band
    local = (
        either([task.title or task.name for task in tasks().values() if task.grades_locally])
        or "local"
    )
    table = tuple(
        dataclasses.replace(flag, choices=tuple(sources()))
        if flag.name == "--energy-source"
        else dataclasses.replace(
            flag, evaluate_help=flag.evaluate_help.replace("five kWh figures", kwh)
        )
        if flag.name == "--energy" and flag.evaluate_help
        else dataclasses.replace(
            flag,
            help=flag.help.format(local=local),
            evaluate_help=(flag.evaluate_help or "").format(local=local),
        )
        if flag.name == "--processes"
        else flag
        for flag in FLAGS
    )
    own = {
        flag.name: dataclasses.replace(flag, resume=RESUMED_AS.get(kind, "run"))
        if flag.resume == OWN
        else flag
        for kind, registry in OWNERS.items()
        for info in registry().values()
        for flag in info.flags
    }
    return (*table, *own.values())


def takers(flag: str, kind: str = "provider") -> list[str]:
    """The extensions of `kind` (a provider, by default) that declare the how-to-run flag
    `flag` as their own (none: it is not such an extension's)."""
    return [
        name for name, info in OWNERS[kind]().items() if any(f.name == flag for f in info.flags)
    ]
