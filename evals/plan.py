"""From what a user asked for to the run of each eval: its samples and its `RunConfig`.

The pytest plugin, `evaluate` (for --dry-run and --status) and the verify mode all plan runs
here, so a run folder is named the same whoever asks. `identity_from_config` goes the other
way: from a published result file's config back to the flags that reproduce it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.config import RunConfig
from evals.datasets import source_of
from evals.errors import DatasetError
from evals.grading.judges import JudgeSpec
from evals.providers import ProviderSpec
from evals.tasks import Task


@dataclass(frozen=True)
class Identity:
    """Everything that decides a run, besides which eval it is."""

    spec: ProviderSpec
    system_prompt_prefix: str | None = None
    limit: int | None = None
    split: str = "test"
    datasets: tuple[tuple[str, str], ...] = ()  # (eval name, source); missing: bundled
    judges: tuple[JudgeSpec, ...] = ()


@dataclass(frozen=True)
class Planned:
    samples: list[Any]
    config: RunConfig


def plan(task: Task, ident: Identity) -> Planned:
    split = ident.split if task.has_splits else "test"
    samples, dataset = task.load(dict(ident.datasets).get(task.name, "bundled"), split)
    if ident.limit is not None:
        samples = samples[: ident.limit]
    spec = ident.spec
    config = RunConfig(
        eval=task.name,
        provider=spec.provider,
        model=spec.model,
        prompt_version=task.prompt_version,
        dataset=dataset,
        base_url=spec.base_url,
        effort=spec.effort,
        thinking=spec.thinking,
        route=spec.route,
        max_tokens=spec.max_tokens,
        system_prompt_prefix=ident.system_prompt_prefix,
        limit=ident.limit,
        split=split,
        judges=tuple(j.identity() for j in ident.judges) if task.uses_judges else (),
        extra=task.identity_extra(samples),
    )
    return Planned(samples, config)


def identity_from_config(config: dict[str, Any]) -> Identity:
    """The identity a result file's config records; raises DatasetError when its dataset
    cannot be named again (a local file known only by its name and hash)."""
    spec = ProviderSpec(
        provider=config["provider"],
        model=config["model"],
        base_url=config.get("baseUrl"),
        effort=config.get("effort"),
        thinking=bool(config.get("thinking")),
        route=config.get("route"),
        max_tokens=config.get("maxTokens"),
    )
    judges = tuple(JudgeSpec(j["provider"], j["model"], j.get("baseUrl")) for j in config.get("judges", ()))
    source = source_of(config["dataset"])
    if source is None:
        raise DatasetError(f"the run used the dataset file {config['dataset']['name']!r}, which cannot be found again; pass it with --dataset")
    return Identity(
        spec=spec,
        system_prompt_prefix=config.get("systemPromptPrefix"),
        limit=config.get("limit"),
        split=config.get("split", "test"),
        datasets=((config["eval"], source),),
        judges=judges,
    )


def to_flags(ident: Identity) -> list[str]:
    """The pytest flags that ask for `ident`, each written as --flag=value."""
    spec = ident.spec
    flags = [f"--provider={spec.provider}", f"--model={spec.model}"]
    for flag, value in (
        ("--base-url", spec.base_url),
        ("--effort", spec.effort),
        ("--route", spec.route),
        ("--max-tokens", spec.max_tokens),
        ("--system-prompt-prefix", ident.system_prompt_prefix),
        ("--limit", ident.limit),
    ):
        if value is not None:
            flags.append(f"{flag}={value}")
    if spec.thinking:
        flags.append("--thinking")
    if ident.split != "test":
        flags.append(f"--split={ident.split}")
    flags += [f"--dataset={name}={source}" for name, source in ident.datasets if source != "bundled"]
    flags += [f"--judge={judge.name}" for judge in ident.judges]
    return flags
