"""The how-to-run flags, declared once: the flags that say how to run, not which run it is
(those are `evals.identity.FIELDS`).

`FLAGS` is the one table. From it come the pytest options (`plugins/options.py`), `evaluate`'s
arguments and the flags `evaluate` passes on to each eval's pytest process (`forwarded`). A row
says whether `evaluate` takes the flag too, under which name and help, and whether it hands it
on: `--concurrency` is one name in both (`evaluate --workers`, its old name, too), `evaluate
--processes` is pytest-xdist's `-n` (and takes `-n` too), and the flags about where files go
or what is published are pytest's own (`evaluate` decides them from its NAME and --data-dir).

An eval's own flags (`Task.flags`), a provider's (`--responses-api`, `--device`) and a power
source's (`--energy-log`) are rows too, declared by the eval, the provider (`ProviderInfo.flags`)
or the source (`PowerSourceInfo.flags`) where it registers, and gathered after these by
`evals.command_line.how_to_run()`, which also gives --energy-source the registered power sources
as its choices. This module reads no registry: it is the table, and what a row does."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # argparse only for what the table's functions are handed: a row imports none
    import argparse

SAME = "same"  # evaluate_help: evaluate shows pytest's help
OWN = "own"  # resume: as its owner's flags are (see `Flag.resume`)
HIDDEN = "==SUPPRESS=="  # argparse.SUPPRESS's value: a help that keeps the flag out of --help
LONGEST_WAIT = 86_400.0  # seconds: a wait past a day is a typo, and past ~1e9 s the OS refuses it


def seconds(value: float) -> str | None:
    """Why `value` is no number of seconds to wait (nan, inf, 0, negative, 1e308), or None."""
    if math.isfinite(value) and 0 < value <= LONGEST_WAIT:
        return None
    return f"must be a number of seconds above 0 and at most {LONGEST_WAIT:g} (a day)"


def at_least_one(value: int) -> str | None:
    return None if value >= 1 else "must be at least 1"


def usd(value: float) -> str | None:
    return (
        None if math.isfinite(value) and value >= 0 else "must be a finite number of USD, 0 or more"
    )


def cap_usd(value: float) -> str | None:
    """A spending cap: a cap of 0 could only stop the run before its first item (which the
    items asked ahead would still pass)."""
    return None if math.isfinite(value) and value > 0 else "must be a finite number of USD above 0"


@dataclass(frozen=True)
class Field:
    """An identity flag (`evals.identity.FIELDS`): a different value is a different run. The
    shared ones are identity's table; a provider declares those only it sends in its own
    `ProviderInfo.fields`."""

    name: str  # attribute on ProviderSpec (on_spec) or on Identity; a provider's own: a key of ProviderSpec.extra
    key: str  # camelCase key in a result file's config
    help: str
    kind: type = str  # str, int or bool (a switch)
    on_spec: bool = True  # sent by the provider, vs. shaping the prompts and items
    slug: str | None = None  # how it shows in the run folder's name: "{}" is the value
    default: Any = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Flag:
    name: str  # "--concurrency": pytest's name, and evaluate's unless `evaluate` names another
    help: str  # pytest's help
    type: Callable[[str], Any] | None = None  # None: a switch (store_true)
    default: Any = None  # pytest's default (evaluate's is None, False for a switch: "not given")
    env: str | None = None  # pytest's default is this environment variable, when it is set
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    nargs: str | None = None
    const: Any = None
    # evaluate: True takes it under the same name, a string under that name, False: pytest only.
    evaluate: bool | str = True
    evaluate_help: str | None = SAME
    evaluate_group: str = "how"  # "how", or "meta" (with the models.json metadata)
    # evaluate's other names for it: an older one, or pytest's (`-n` for --processes)
    aliases: tuple[str, ...] = ()
    pytest: bool = True  # declared as a pytest option (False: evaluate's name for another's)
    # evaluate passes its value on to every eval's pytest process: True as `name`, or as
    # `forward_as` (written apart from its value, as in `-n 2`).
    forward: bool = False
    forward_as: str | None = None
    # Why a value of the right type is still refused (`seconds`, `at_least_one`, `usd`), or
    # None: both commands apply it before anything runs (`refusal`).
    check: Callable[[Any], str | None] | None = None
    # A bare resume (`evaluate NAME`) passes it again, from the saved plan, so that the resumed
    # requests go out as the first ones did: "run", or "provider" when it belongs to the
    # candidate's provider (dropped when --provider names another); None: not kept. OWN, the
    # default, is the owner's: a provider's own flag is "provider", a power source's or an
    # eval's "run", and a row of this table None (`evals.command_line.how_to_run` decides).
    # Only a name, a path or a setting is ever remembered this way, never a secret (a key's
    # variable, not its value): a flag whose value may be one says resume=None.
    resume: str | None = OWN
    # An eval's own flag whose value can change how its rows are graded (a time limit): a run
    # records a value other than `default` in its result file (`gradedWith`), and verify and
    # `evaluate --regrade` rescore with what the file recorded (the default when it says none).
    graded: bool = False
    # How `refusal` words a value the check turns down: {name}, {value} and {problem}.
    refused: str = "{name} {problem} (got {value})"

    @property
    def switch(self) -> bool:
        return self.type is None

    @property
    def unset(self) -> Any:
        """Its value when not given, the environment aside: its default, False for a switch without one."""
        return False if self.switch and self.default is None else self.default

    @property
    def dest(self) -> str:
        """The attribute pytest's options (and argparse's namespace) keep it under."""
        return self.name.removeprefix("--").replace("-", "_")

    @property
    def evaluate_name(self) -> str | None:
        return (
            None
            if self.evaluate is False
            else self.name
            if self.evaluate is True
            else self.evaluate
        )

    @property
    def evaluate_dest(self) -> str | None:
        name = self.evaluate_name
        return name.removeprefix("--").replace("-", "_") if name else None

    def pytest_attrs(self) -> dict[str, Any]:
        """The keyword arguments of pytest's `addoption` (argparse's `add_argument`)."""
        default = os.environ.get(self.env) if self.env else self.default
        if self.switch:
            return {
                "action": "store_true",
                "default": False if default is None else default,
                "help": self.help,
            }
        attrs = {
            "type": self.type,
            "default": default,
            "help": self.help,
            "choices": self.choices,
            "metavar": self.metavar,
            "nargs": self.nargs,
            "const": self.const,
        }
        if self.type is str:
            del attrs["type"]
        return {k: v for k, v in attrs.items() if v is not None or k == "default"}

    def evaluate_attrs(self) -> dict[str, Any]:
        """`add_argument`'s keyword arguments for evaluate: no default, so that a flag left out
        is not passed on."""
        help = self.help if self.evaluate_help == SAME else self.evaluate_help
        if self.switch:
            return {"action": "store_true", **({"help": help} if help is not None else {})}
        attrs = {"type": self.type, "help": help, "choices": self.choices, "metavar": self.metavar}
        if self.type is str:
            del attrs["type"]
        return {k: v for k, v in attrs.items() if v is not None}

    def refusal(self, value: Any, name: str | None = None) -> str | None:
        """The one line refusing `value` given as `name` (pytest's name unless evaluate's), or None."""
        problem = None if value is None or self.check is None else self.check(value)
        return problem and self.refused.format(name=name or self.name, problem=problem, value=value)

    def forwarded(self, value: Any) -> list[str]:
        """What evaluate writes on a pytest command line for `value` (nothing when not given)."""
        if value is None or value is False:
            return []
        if self.forward_as:
            return [self.forward_as, str(value)]
        return [self.name] if self.switch else [f"{self.name}={value}"]


FLAGS: tuple[Flag, ...] = (
    Flag(
        "--api-key-env",
        "environment variable holding the API key (OPENROUTER_API_KEY is picked for openrouter.ai)",
        str,
        forward=True,
        resume="provider",
    ),
    Flag(
        "--concurrency",
        "model requests in flight at once, across all workers (default 8)",
        int,
        8,
        evaluate_help="model requests in flight per eval (default 8; --workers, its old name, too)",
        aliases=("--workers",),
        forward=True,
        check=at_least_one,
    ),
    # "{local}": the evals that grade locally (`Task.grades_locally`), filled in by `evals.command_line`.
    Flag(
        "--processes",
        "pytest-xdist processes per eval (pytest -n); helps {local} grading only",
        int,
        pytest=False,
        evaluate_help="pytest-xdist processes per eval (-n, as pytest names it); helps {local} grading only",
        aliases=("-n", "--numprocesses"),
        forward=True,
        forward_as="-n",
        check=at_least_one,
    ),
    Flag(
        "--batch",
        "send the model calls through the provider's Batch API (half price): submit, then end; "
        "rerun the same command to collect",
        evaluate_help="through the provider's Batch API (half price): submit and end; rerun to collect",
        forward=True,
    ),
    Flag(
        "--batch-wait",
        "--batch, waiting for the batches (polling, with backoff) to finish the run",
        evaluate_help="--batch, waiting for the batches to finish",
        forward=True,
    ),
    Flag(
        "--force",
        "start the run over; the old run folder is kept, renamed",
        evaluate_help="start the runs over (the old run folders and result files are kept, renamed)",
        forward=True,
    ),
    # evaluate publishes itself, after its pytest processes: it decides on the errors there.
    Flag(
        "--allow-errors",
        "with --publish: publish despite more than 5%% API errors or unparseable verdicts",
        evaluate_help="publish despite more than 5%% API errors or unparseable judge verdicts",
    ),
    # evaluate puts them under --data-dir.
    Flag(
        "--run-dir",
        "where run folders live (default data/runs); write --run-dir=PATH",
        Path,
        evaluate=False,
    ),
    Flag(
        "--results-dir",
        "where result files are written (default data/results); write --results-dir=PATH",
        Path,
        evaluate=False,
    ),
    # evaluate: the price models.json records (and the cost of its summary).
    Flag(
        "--price-input",
        "USD per million input tokens, for the cost in the summary",
        float,
        evaluate_help="USD per million input tokens",
        evaluate_group="meta",
        check=usd,
    ),
    Flag(
        "--price-output", "USD per million output tokens", float, evaluate_group="meta", check=usd
    ),
    # Not identity: a cap stops a run, it never changes what is asked (`evals.budget`).
    Flag(
        "--max-cost",
        "stop asking new items once the model's spend reaches USD (needs --price-input and "
        "--price-output); everything answered is kept, and a higher cap resumes",
        float,
        metavar="USD",
        evaluate_help="stop once the model's spend on the evals run reaches USD (at the model's "
        "price per token); a higher cap resumes",
        # evaluate hands it on itself, with what the evals before spent (`evaluate.children`)
        check=cap_usd,
    ),
    # Not passed on: evaluate's is its whole plan's, before any eval's pytest would start.
    Flag(
        "--dry-run",
        "ask nothing: each selected eval's requests and budget (tokens, and dollars with "
        "--price-input/--price-output) for the items not answered yet",
        evaluate_help="print the plan (commands, run folders, result files, the requests and budget "
        "of what is left), then every problem found; exit as the command would: 2 for a usage "
        "error, 1 for another problem",
    ),
    # evaluate's own: --verify [NAME], and its NAME.
    Flag(
        "--verify-published",
        "rescore every published run (or only model NAME's: --verify-published=NAME) offline and "
        "compare it with its result file",
        str,
        nargs="?",
        const=True,
        metavar="NAME",
        evaluate=False,
    ),
    Flag(
        "--publish",
        "at the end, publish the finished results into data/models.json as model NAME",
        str,
        metavar="NAME",
        evaluate=False,
    ),
    Flag(
        "--wrong-fails",
        "a wrong answer fails its item and the run (exit 1), for a gate on a perfect score; by "
        "default it is reported as W (wrong) and a run whose every item was answered exits 0",
        evaluate=False,
        resume=None,
    ),
    Flag(
        "--energy",
        "measure the energy the model's requests used (local models), into the result files as kWh",
        evaluate_help="measure the energy of the model's requests (local models) and publish the five kWh figures",
        forward=True,
        resume="run",
    ),
    Flag(
        "--energy-source",
        "with --energy: Linux RAPL counters (default), NVIDIA's GPU energy counters, or a HWiNFO "
        "CSV log (--energy-log)",
        # its choices: the registered power sources; none named: the one whose flags are given
        # (evals.energy.chosen)
        str,
        evaluate_help="with --energy: rapl (default), nvml or hwinfo (with --energy-log)",
        forward=True,
        resume="run",
    ),
    Flag(
        "--request-timeout",
        "seconds one model request may take, connect to last byte, before it is retried (default 600)",
        float,
        600.0,
        forward=True,
        check=seconds,
    ),
)
FLAGS = tuple(
    dataclasses.replace(flag, resume=None) if flag.resume == OWN else flag for flag in FLAGS
)  # the table's own: not kept


def add_pytest_options(add: Callable[..., Any], flags: Iterable[Flag]) -> None:
    for flag in flags:
        if flag.pytest:
            add(flag.name, **flag.pytest_attrs())


def add_evaluate_arguments(add: Callable[..., Any], flags: Iterable[Flag], group: str) -> None:
    for flag in flags:
        if flag.evaluate_name and flag.evaluate_group == group:
            add(flag.evaluate_name, *flag.aliases, **flag.evaluate_attrs())


def refusals(
    value_of: Callable[[str], Any], flags: Iterable[Flag], evaluate: bool = False
) -> list[str]:
    """The refusal of every value given that its flag's check turns down: pytest's options
    (`value_of(dest)`), or with `evaluate` evaluate's arguments, under evaluate's names."""
    named = (
        (flag, flag.evaluate_name, flag.evaluate_dest)
        if evaluate
        else (flag, flag.name if flag.pytest else None, flag.dest)
        for flag in flags
        if flag.check
    )
    return [
        line
        for flag, name, dest in named
        if name and dest and (line := flag.refusal(value_of(dest), name))
    ]


def remembered(args: argparse.Namespace, flags: Iterable[Flag]) -> dict[str, Any]:
    """The `resume` flags given in evaluate's `args`, as a plan keeps them: name -> value (a path as text)."""
    given = (
        (flag, getattr(args, flag.evaluate_dest))
        for flag in flags
        if flag.resume and flag.evaluate_dest
    )
    return {
        flag.name: str(value) if isinstance(value, Path) else value
        for flag, value in given
        if value is not None and value is not False
    }


def resume(
    args: argparse.Namespace, flags: Iterable[Flag], kept: dict[str, Any], *, same_provider: bool
) -> None:
    """Give evaluate's `args` the `resume` flags a plan kept (`remembered`) that they leave
    out; a provider's own only while the candidate's provider is the one they were given for."""
    for flag in flags:
        if not (flag.resume and flag.evaluate_dest and flag.name in kept) or getattr(
            args, flag.evaluate_dest
        ) not in (None, False):
            continue
        if flag.resume == "provider" and not same_provider:
            continue
        setattr(args, flag.evaluate_dest, True if flag.type is None else flag.type(kept[flag.name]))


def forwarded(args: argparse.Namespace, flags: Iterable[Flag]) -> list[str]:
    """The pytest flags that pass evaluate's `args` on to an eval's pytest process."""
    return [
        part
        for flag in flags
        if flag.forward and flag.evaluate_dest
        for part in flag.forwarded(getattr(args, flag.evaluate_dest))
    ]
