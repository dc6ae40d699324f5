"""The plan of one `evaluate NAME`: each eval's identity, planned run, run folder, result file
and pytest command, from what was last planned for NAME (`saved_plans`) or published, with
today's flags on top; and the plan a bare `evaluate NAME` resumes, saved before anything runs.

An eval's URLs given with credentials are planned, never saved: the saved plan says which
were, and a resume refuses them until they are given again."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import models_file, urls
from evals.config import results_path, run_dir
from evals.datasets import kept_folder
from evals.errors import EvalError, UsageError
from evals.evaluate import saved_plans
from evals.command_line import how_to_run
from evals.flags import forwarded, remembered, resume
from evals.grading.judge_spec import JudgeSpec, capped, default_judges
from evals.identity import (
    FIELDS,
    Identity,
    from_values,
    identity_from_config,
    parse_datasets,
    to_flags,
)
from evals.plan import Planned
from evals.providers import PROVIDERS, unknown_provider
from evals.plan import plan as plan_run
from evals.results import read_result
from evals.tasks import TAGS, TASKS, on_board, recorded_values

EVALS = TAGS  # tag -> eval name, in the order the evals run


@dataclass
class Eval:
    """One eval of the command: its identity, its planned run, where it lands."""

    tag: str
    identity: Identity
    dataset: str
    planned: Planned
    run_folder: Path
    result_file: Path
    published: bool  # its result file is named by models.json: reproduced, never run again
    # its result file is reproduced by its run folder now and nothing is left to retry: not run again
    finished: bool = False

    @property
    def name(self) -> str:
        return EVALS[self.tag]

    @property
    def key(self) -> str:
        return TASKS[self.name].key


@dataclass
class Plan:
    """What the command does for NAME: its models.json entry and saved plan, and each eval's run."""

    name: str
    data: Path
    entry: dict[str, Any] | None
    saved: dict[str, Any] | None
    evals: dict[str, Eval]  # the board's evals, and any other picked by --evals
    selected: list[Eval]  # those --evals picks, in its order
    commands: dict[str, list[str]]  # tag -> the eval's pytest command
    publishing: (
        bool  # not a smoke test, a reference run or --no-build: what finishes goes to models.json
    )

    @property
    def models_path(self) -> Path:
        return self.data / "models.json"

    @property
    def results_dir(self) -> Path:
        return self.data / "results"

    @property
    def runs_dir(self) -> Path:
        return self.data / "runs"

    def to_run(self) -> dict[str, list[str]]:
        """The commands of the evals that run: neither published nor finished already."""
        return {
            tag: command
            for tag, command in self.commands.items()
            if not (self.evals[tag].published or self.evals[tag].finished)
        }


def plan_command(args: argparse.Namespace, data: Path) -> Plan:
    """The command's plan: NAME's entry and saved plan read, each eval planned, and (but for
    --status, which only reads) which of the picked ones are finished already."""
    models_path, results_dir, runs_dir = data / "models.json", data / "results", data / "runs"
    models = models_file.load_models(models_path, results=results_dir)
    entry = models_file.find_entry(models, args.name)
    saved = saved_plans.load(data / "plans", args.name)
    if saved:
        _resume_how_to_run(args, saved)
    bare = not (args.dataset or args.judge or args.judge_max_tokens) and all(
        getattr(args, f.name) is None for f in FIELDS
    )
    args.tags = picked(args.tags, saved if bare else None)
    published = models_file.published_files(models_path, results=results_dir)
    # The board's evals are planned (and remembered) even when --evals picks some of them: a
    # model is published once it has them all. An eval off the board only when picked.
    evals = {
        tag: _plan_eval(tag, args, saved, entry, published, results_dir, runs_dir)
        for tag in EVALS
        if tag in args.tags or TASKS[EVALS[tag]].on_board
    }
    smoke = any(e.planned.config.is_smoke_test for e in evals.values())
    reference = any(e.identity.spec.provider == "reference" for e in evals.values())
    selected = [evals[tag] for tag in args.tags]
    if not args.status:
        for e in selected:
            e.finished = _reproduced(e, args, runs_dir)
    commands = {e.tag: _command(e, args, data) for e in selected}
    return Plan(
        args.name,
        data,
        entry,
        saved,
        evals,
        selected,
        commands,
        publishing=not (smoke or reference or args.no_build),
    )


def picked(given: list[str] | None, saved: dict[str, Any] | None) -> list[str]:
    """The evals to run: `--evals` when given, else those the saved plan picked, on a resume
    that gives no identity flag (a plan saved before it kept them has none; given the model's
    flags again, the command is read as the whole job): the board's."""
    if given is not None:
        return given
    kept = [tag for tag in (saved or {}).get("picked") or () if tag in EVALS]
    return kept or [task.tag for task in on_board().values()]


def save_plan(plan: Plan, metadata: dict[str, Any], args: argparse.Namespace) -> None:
    """What a bare `evaluate NAME` resumes: each eval's config and dataset, the metadata flags
    given so far, the how-to-run flags a resume passes again."""
    evals = {
        e.name: {
            "config": _remembered(e),
            "dataset": e.dataset,
            **_credentials_given(e),
            **_judge_keys(e),
        }
        for e in plan.evals.values()
    }
    saved_plans.save(
        plan.data / "plans",
        plan.name,
        evals,
        {**(plan.saved or {}).get("metadata", {}), **metadata},
        remembered(args, how_to_run()),
        picked=[e.tag for e in plan.selected],
    )


def _resume_how_to_run(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """The how-to-run flags the plan kept, for those left out today: a bare resume sends its
    requests as the first attempt did (the same key variable, the same API, the same meter)."""
    first: dict[str, Any] = next(iter(saved["evals"].values()), {})
    planned = first.get("config", {})
    resume(
        args,
        how_to_run(),
        saved.get("howToRun") or {},
        same_provider=args.provider in (None, planned.get("provider")),
    )


def _plan_eval(
    tag: str,
    args: argparse.Namespace,
    saved: dict[str, Any] | None,
    entry: dict[str, Any] | None,
    published: set[Path],
    results_dir: Path,
    runs_dir: Path,
) -> Eval:
    """The eval's run: what was last planned for the model (or published), flags on top."""
    name = EVALS[tag]
    base, source = _base_config(name, saved, entry, results_dir)
    given = {f.name: getattr(args, f.name) for f in FIELDS}
    if given["provider"] and given["provider"] not in PROVIDERS:  # before what it would need
        raise UsageError(unknown_provider(given["provider"]))
    if base is None and not (
        given["provider"] and (given["model"] or given["provider"] == "reference")
    ):
        raise UsageError(
            f"nothing is planned for {args.name!r}: a new model needs --model and --provider "
            f"(and --provider-name, --url, --release-date and prices, or they are looked up)"
        )
    datasets = parse_datasets(args.dataset)
    if base is not None:
        ident = identity_from_config(base, source, datasets=kept_folder(results_dir.parent))
        if (
            base["eval"] != name
        ):  # a sibling eval's identity: its dataset and judges are not this eval's
            ident = ident.replace(datasets=(), judges=())
        if given["provider"] and given["provider"] != ident.spec.provider:
            ident = ident.replace(
                base_url=None, effort=None, thinking=False, route=None
            )  # they belonged to the old provider
        values = {**ident.fields(), **{k: v for k, v in given.items() if v is not None}}
        keys = (saved or {}).get("evals", {}).get(name, {}).get("judgeKeys") or {}
        judges = tuple(judge.with_key(keys.get(judge.name)) for judge in ident.judges)
        datasets = {**dict(ident.datasets), **datasets}
    else:
        values, judges = given, ()
    if args.judge:
        judges = tuple(_judge(text) for text in args.judge)
    if not judges and TASKS[name].uses_judges:
        judges = default_judges(values["provider"])
    judges = capped(judges, args.judge_max_tokens)
    ident = from_values(
        values,
        datasets=datasets.items(),
        judges=judges,
        api_key_env=args.api_key_env,
        responses_api=args.responses_api,
        device=args.device,
    )
    _check_credentials(
        ident, (saved or {}).get("evals", {}).get(name, {}).get("credentialsGiven", ())
    )
    planned = plan_run(TASKS[name], ident)
    result_file = results_path(results_dir, planned.config)
    return Eval(
        tag,
        ident,
        datasets.get(name, "bundled"),
        planned,
        run_dir(runs_dir, planned.config),
        result_file,
        result_file in published,
    )


def _endpoints(ident: Identity) -> list[str]:
    return [
        url for url in (ident.spec.base_url, *(judge.base_url for judge in ident.judges)) if url
    ]


def _credentials_given(e: Eval) -> dict[str, Any]:
    """Which of the eval's URLs were given with credentials: never saved, so the plan says
    they must be given again (not which they were)."""
    given = [url for url in _endpoints(e.identity) if urls.given_with_credentials(url)]
    return {"credentialsGiven": given} if given else {}


def _judge_keys(e: Eval) -> dict[str, Any]:
    """The variable each judge's key is read from, where `,key=VAR` named one: a bare resume
    asks the judges as the first attempt did (the name of a variable, never a key)."""
    keys = {judge.name: judge.api_key_env for judge in e.identity.judges if judge.api_key_env}
    return {"judgeKeys": keys} if keys else {}


def _check_credentials(ident: Identity, needed: list[str]) -> None:
    """Refuse to resume an endpoint planned with credentials that were not given again."""
    for url in _endpoints(ident):
        if url in needed and not urls.given_with_credentials(url):
            raise UsageError(
                f"{url} was given with credentials (user info or a key in its query), which are never saved: "
                "pass the URL with them again (--base-url, or --judge PROVIDER:MODEL@URL)"
            )


def _remembered(e: Eval) -> dict[str, Any]:
    """The config a bare rerun starts from: a smoke test's --limit and --split are left out,
    so that `evaluate NAME --limit 3` then `evaluate NAME` is the check, then the real run."""
    config = {k: v for k, v in e.planned.config.to_dict().items() if k not in ("limit", "split")}
    # What a provider records in place of a flag (a local checkpoint's content hash for its
    # folder) cannot be asked for again: the flag as given is what a bare rerun passes.
    given = {f.key: e.identity.value(f) for f in FIELDS}
    return {
        **config,
        **{key: given[key] for key in dict(e.identity.spec.recorded) if given.get(key) is not None},
    }


def _base_config(
    name: str, saved: dict[str, Any] | None, entry: dict[str, Any] | None, results_dir: Path
) -> tuple[dict[str, Any] | None, str | None]:
    """The config to start from: the saved plan's, else the published result file's, else
    a sibling eval's of either; with the dataset source the plan recorded."""
    planned = (saved or {}).get("evals", {})
    if name in planned:
        return planned[name]["config"], planned[name].get("dataset")
    if entry and (files := entry.get("resultFiles")):
        key = (
            TASKS[name].key if TASKS[name].key in files else next(iter(files))
        )  # off the board: a sibling's
        return read_result(models_file.result_path(entry, key, results_dir))["config"], None
    sibling = next(iter(planned.values()), None)
    return (sibling["config"], None) if sibling else (None, None)


def _judge(text: str) -> JudgeSpec:
    try:
        return JudgeSpec.parse(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _regrades(e: Eval, args: argparse.Namespace, result: dict[str, Any]) -> bool:
    """Whether a flag of the eval's own given today (`Task.flags`) may change what its result
    file says: one that is not `graded` (where its tests run, say) whenever given, a graded
    one when it is not the value the file was graded with. The eval then runs again, from its cache."""
    task = TASKS[e.name]
    recorded = recorded_values(task, result)
    given = (
        (flag, getattr(args, flag.evaluate_dest, None)) for flag in task.flags if flag.evaluate_dest
    )
    return any(
        value is not None
        and value is not False
        and (not flag.graded or value != recorded[flag.dest])
        for flag, value in given
    )


def _reproduced(e: Eval, args: argparse.Namespace, runs_dir: Path) -> bool:
    """Whether a run of the eval could only write its result file again as it is: its run
    folder reproduces the file now (verify's rescoring, which the publish step needs anyway),
    no API error is left for a rerun to retry, and no flag given today changes what the file
    says. Such an eval is not run again: a pytest start-up for nothing (issue 19.14)."""
    if e.published or args.force or not e.result_file.is_file():
        return False
    from evals.verify import compare

    try:
        regrades = _regrades(e, args, read_result(e.result_file))
    except EvalError:  # verify's rescoring says what is wrong with the file
        regrades = False
    if regrades or compare(e.result_file, run_root=runs_dir, dataset=e.dataset)[0] != "ok":
        return False
    summary = read_result(e.result_file)["summary"]
    return not summary.get("overall", summary)["apiErrors"]


def _command(e: Eval, args: argparse.Namespace, data: Path) -> list[str]:
    """The eval's pytest command: shown by the plan, run by the run phase (`children`)."""
    command = [sys.executable, "-m", "pytest", "-m", e.name, *to_flags(e.identity)]
    command += [f"--run-dir={data / 'runs'}", f"--results-dir={data / 'results'}"]
    return command + forwarded(args, how_to_run())
