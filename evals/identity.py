"""The run identity, declared once: every flag that decides which answers a run holds.

`FIELDS` is the one table (`TABLE`, the shared fields, then each provider's own). From it come the
pytest options and `evaluate`'s arguments
(`add_identity_options`), the `RunConfig` keys that are hashed into the run folder's name,
the slug, the flags that ask for an identity again (`to_flags`), the way back from a result
file's config (`identity_from_config`), and the keys that must agree across a model's three
result files (`model_keys`). Which fields a provider takes is the provider's own business
(`evals.providers.PROVIDERS`); `check` refuses a field the provider would not send, so a run
never records what it did not ask for."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from evals.datasets import evals_served, is_local_file, source_of
from evals.entry_points import Registry
from evals.errors import DatasetError, UsageError
from evals.flags import Field
from evals.grading.judge_spec import JudgeSpec
from evals.providers import (
    PROVIDERS,
    ProviderInfo,
    ProviderSpec,
    effective_spec,
    is_openrouter,
    unknown_provider,
)
from evals.tasks import TAGS
from evals.words import did_you_mean
from evals.urls import without_credentials
from evals.words import either

SPLITS = ("test", "train")


TABLE: tuple[Field, ...] = (  # the fields every provider shares (or none sends: the items')
    Field(
        "provider", "provider", "one of {providers}", slug="{}"
    ),  # the registered ones, when the flag is declared
    Field(
        "model",
        "model",
        "model id, as the provider names it; local: a checkpoint folder (write --model=DIR)",
        slug="{}",
    ),
    Field(
        "base_url",
        "baseUrl",
        "endpoint URL: required for live (OpenRouter, vLLM, llama.cpp), optional for openai and anthropic",
    ),
    Field(
        "effort",
        "effort",
        "reasoning effort (openai, live: none ... xhigh; anthropic: low ... max)",
        slug="{}",
    ),
    Field(
        "thinking",
        "thinking",
        "extended thinking (anthropic) or enable_thinking (live)",
        kind=bool,
        slug="thinking",
        default=False,
    ),
    Field(
        "route", "route", "live on OpenRouter: pin one upstream provider, e.g. deepinfra", slug="{}"
    ),
    Field("max_tokens", "maxTokens", "cap on the candidate's completion tokens", kind=int),
    Field(
        "adapter",
        "adapter",
        "local: a PEFT (LoRA) adapter folder put on the checkpoint (write --adapter=DIR)",
        slug="adapter",
    ),
    Field(
        "dtype",
        "dtype",
        "local: weights dtype, auto (the checkpoint's), float32, bfloat16 or float16",
    ),
    Field(
        "system_prompt_prefix",
        "systemPromptPrefix",
        "text put before the harness's system prompt",
        on_spec=False,
    ),
    Field(
        "epochs",
        "epochs",
        "answer each item K times (distinct answers, each cached; a seed per epoch where the API takes one): "
        "the summary gives the mean, its interval clustered by question, and an eval's pass@1 and "
        "pass@K where it gives them",
        kind=int,
        on_spec=False,
        slug="epochs{}",
    ),
    Field(
        "limit",
        "limit",
        "smoke test: only the first N items of each eval (never published)",
        kind=int,
        on_spec=False,
        slug="limit{}",
    ),
    Field(
        "split",
        "split",
        "RobloxQA split: test (scores) or train (smoke tests; never published)",
        on_spec=False,
        slug="{}",
        default="test",
    ),
)


class _Fields(Sequence[Field]):
    """The table, then every registered provider's own fields (`ProviderInfo.fields`): read
    when first iterated, as the registry is. The table's come first, so a config's keys keep
    their order whatever is installed."""

    def _all(self) -> tuple[Field, ...]:
        shared = {f.name for f in TABLE}
        own = {
            f.name: f for info in PROVIDERS.values() for f in info.fields if f.name not in shared
        }
        return (*TABLE, *own.values())

    def __getitem__(self, index):
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self):
        return iter(self._all())


FIELDS: Sequence[Field] = _Fields()
FIELD: Registry[Field] = Registry(lambda: {f.name: f for f in FIELDS})


def model_keys() -> tuple[str, ...]:
    """The config keys that say which model answered and how: equal across a model's result files."""
    return tuple(f.key for f in FIELDS if f.name not in ("limit", "split"))


JUDGE_HELP = (
    "a judge of the judged evals, PROVIDER:MODEL[@BASE_URL][,key=VAR], VAR the environment "
    "variable holding its API key (repeatable; default: three judges from different vendors)"
)


def dataset_help() -> str:
    """--dataset's help: what a source is, and the evals' tags."""
    return f"bundled, a published dataset name, or a .jsonl/.parquet path; EVAL is {either(list(TAGS))} (repeatable)"


@dataclass(frozen=True)
class Identity:
    """Everything that decides a run, besides which eval it is."""

    spec: ProviderSpec
    system_prompt_prefix: str | None = None
    epochs: int | None = None  # None: one answer per item (--epochs 1 is the same run)
    limit: int | None = None
    split: str = "test"
    datasets: tuple[tuple[str, str], ...] = ()  # (eval name, source); missing: bundled
    judges: tuple[JudgeSpec, ...] = ()

    def value(self, field: Field) -> Any:
        return self.spec.value(field.name) if field.on_spec else getattr(self, field.name)

    def fields(self) -> dict[str, Any]:
        """field name -> value, for every field of the table."""
        return {f.name: self.value(f) for f in FIELDS}

    def replace(self, **values: Any) -> Identity:
        """A copy with some table fields (and datasets or judges) changed."""
        on_spec = {k: v for k, v in values.items() if k in FIELD and FIELD[k].on_spec}
        rest = {k: v for k, v in values.items() if k not in on_spec}
        return dataclasses.replace(self, spec=self.spec.with_values(**on_spec), **rest)


def add_identity_options(add: Callable[..., Any], *, defaults: bool) -> None:
    """Declare the identity flags with `add` (pytest's `addoption` or argparse's
    `add_argument`). Without `defaults`, an unset flag stays None, so that `evaluate` can
    tell "not given" from "given as the default"."""
    for f in FIELDS:
        default = f.default if defaults else None
        help = f.help.format(providers=", ".join(PROVIDERS)) if f.name == "provider" else f.help
        if f.kind is bool:
            add(f.flag, action="store_true", default=default, help=help)
        else:
            add(f.flag, type=f.kind, default=default, help=help)
    add(
        "--dataset",
        action="append",
        default=[] if defaults else None,
        metavar="[EVAL=]SOURCE",
        help=dataset_help(),
    )
    add(
        "--judge",
        action="append",
        default=[] if defaults else None,
        metavar="PROVIDER:MODEL[@BASE_URL][,key=VAR]",
        help=JUDGE_HELP,
    )
    add(
        "--judge-max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="cap on each judge's verdict tokens (default: none sent, the server's own)",
    )


def from_values(
    values: dict[str, Any],
    *,
    datasets=(),
    judges=(),
    api_key_env=None,
    responses_api=False,
    device=None,
    options=(),
) -> Identity:
    """An identity from field name -> value (None: the field's default), checked; then with
    what the provider will really call (`effective_spec`: an endpoint, a checkpoint's hash)."""
    given: dict[str, Any] = {
        f.name: (values.get(f.name) if values.get(f.name) is not None else f.default)
        for f in FIELDS
    }
    given["base_url"] = without_credentials(
        given["base_url"]
    )  # a secret, kept apart (`evals.urls`)
    if given["epochs"] == 1:  # one answer per item is the run without the flag
        given["epochs"] = None
    if given["provider"] == "reference" and not given["model"]:
        given["model"] = "gold"
    spec = ProviderSpec(
        given["provider"],
        given["model"],
        api_key_env=api_key_env,
        responses_api=responses_api,
        device=device,
        options=tuple(options),
    ).with_values(**{f.name: given[f.name] for f in FIELDS if f.on_spec})
    ident = Identity(
        spec=spec,
        **{f.name: given[f.name] for f in FIELDS if not f.on_spec},
        datasets=tuple(datasets),
        judges=tuple(judges),
    )
    check(ident)
    return dataclasses.replace(
        ident, spec=effective_spec(ident.spec), judges=tuple(j.effective() for j in ident.judges)
    )


def check(ident: Identity) -> None:
    """Refuse an identity the provider would not send as recorded: one line naming the flag."""
    spec = ident.spec
    if spec.provider is None:
        raise UsageError(f"--provider is required: one of {', '.join(PROVIDERS)}")
    if spec.provider not in PROVIDERS:
        raise UsageError(unknown_provider(spec.provider))
    info = PROVIDERS[spec.provider]
    if not spec.model:
        example = "a checkpoint folder: --model=DIR" if info.recorder else "e.g. --model gpt-5.5"
        raise UsageError(
            f"--model is required with --provider {spec.provider} ({example}), or use --provider "
            "reference for an offline run"
        )
    if spec.effort and spec.thinking:
        raise UsageError("--effort and --thinking exclude each other: pass one")
    for f in FIELDS:
        value = ident.value(f)
        if (
            f.on_spec
            and f.name not in ("provider", "model")
            and value not in (None, False)
            and f.name not in sent_by(info)
        ):
            takers = [name for name, other in PROVIDERS.items() if f.name in sent_by(other)]
            raise UsageError(
                f"{f.flag} is not sent by --provider {spec.provider}, so it cannot be part of its "
                f"run; it applies to {', '.join(takers) or 'no provider'}"
            )
    if spec.effort and spec.effort not in info.efforts:
        raise UsageError(
            f"--effort {spec.effort!r} is not one {spec.provider} takes; choose one of {', '.join(info.efforts)}"
        )
    if info.needs_base_url and not spec.base_url:
        raise UsageError(
            f"--provider {spec.provider} needs --base-url (e.g. https://openrouter.ai/api/v1 or http://127.0.0.1:8000/v1)"
        )
    if spec.base_url and not _is_http_url(spec.base_url):
        raise UsageError(f"--base-url {spec.base_url!r} is not an http(s) URL")
    if spec.route and not is_openrouter(spec.base_url):
        raise UsageError(
            "--route pins an OpenRouter upstream: it needs --provider live --base-url https://openrouter.ai/api/v1"
        )
    for name in ("max_tokens", "epochs", "limit"):
        value = ident.value(FIELD[name])
        if value is not None and value < 1:
            raise UsageError(f"{FIELD[name].flag} must be at least 1 (got {value})")
    if ident.split not in SPLITS:
        raise UsageError(f"--split {ident.split!r} is unknown; choose {' or '.join(SPLITS)}")
    for judge in ident.judges:
        if judge.provider not in PROVIDERS:
            raise UsageError(
                f"--judge {judge.name}: provider {judge.provider!r} is unknown"
                f"{did_you_mean(judge.provider, list(PROVIDERS))}; choose one of {', '.join(PROVIDERS)}"
            )
        if judge.max_tokens is None:
            continue
        if judge.max_tokens < 1:
            raise UsageError(f"--judge-max-tokens must be at least 1 (got {judge.max_tokens})")
        if "max_tokens" not in sent_by(PROVIDERS[judge.provider]):
            raise UsageError(
                f"--judge-max-tokens is not sent by --judge {judge.name} (provider {judge.provider}), "
                "so it cannot be part of its run; leave it out, or name judges that take it"
            )


def sent_by(info: ProviderInfo) -> frozenset[str]:
    """The identity fields a provider sends: the shared ones it takes, and its own."""
    return info.takes | {f.name for f in info.fields}


def config_fields(ident: Identity) -> dict[str, Any]:
    """The table's part of a result file's config: camelCase, unset values left out; what
    the provider records (`ProviderSpec.recorded`: a checkpoint's hash) over the flags."""
    raw = {f.key: ident.value(f) for f in FIELDS}
    if raw["baseUrl"]:
        raw["baseUrl"] = raw["baseUrl"].rstrip("/")
    raw.update(ident.spec.recorded)
    return {k: v for k, v in raw.items() if v is not None and v is not False and v != ""}


def slug_parts(config: dict[str, Any]) -> list[str]:
    parts = []
    for f in FIELDS:
        value = config.get(f.key)
        if f.slug and value not in (None, False) and value != f.default:
            if isinstance(value, str) and value.startswith(
                "sha256:"
            ):  # a checkpoint's content hash: its head
                value = value[len("sha256:") :][:12]
            parts.append(f.slug.format(value))
    return parts


def identity_from_config(
    config: dict[str, Any], dataset_source: str | None = None, *, datasets: Path | None = None
) -> Identity:
    """The identity a result file's config records, its dataset from `dataset_source` (the
    `--dataset` source the run was given) or named again from the config (`source_of`: a
    local file by its copy in `datasets`, the data folder's, also where `dataset_source` is
    a local file no longer there); raises DatasetError when neither says where it is."""
    values: dict[str, Any] = {f.name: config.get(f.key) for f in FIELDS}
    judges = tuple(
        JudgeSpec(j["provider"], j["model"], j.get("baseUrl"), max_tokens=j.get("maxTokens"))
        for j in config.get("judges", ())
    )
    source = dataset_source
    if source is None or (is_local_file(config["dataset"]) and not Path(source).is_file()):
        source = source_of(config["dataset"], datasets) or source
    if source is None:
        raise DatasetError(
            f"the run used the dataset file {config['dataset']['name']!r}, which cannot be found "
            "again; pass it with --dataset"
        )
    info = PROVIDERS.get(values["provider"])
    recorded = tuple((key, config[key]) for key in (info.records if info else ()) if key in config)
    spec = ProviderSpec(values["provider"], values["model"], recorded=recorded).with_values(
        **{
            f.name: values[f.name] if values[f.name] is not None else f.default
            for f in FIELDS
            if f.on_spec
        }
    )
    rest: dict[str, Any] = {
        f.name: values[f.name] if values[f.name] is not None else f.default
        for f in FIELDS
        if not f.on_spec
    }
    return Identity(spec=spec, **rest, datasets=((config["eval"], source),), judges=judges)


def to_flags(ident: Identity) -> list[str]:
    """The pytest flags that ask for `ident`, each written as --flag=value."""
    flags = []
    for f in FIELDS:
        value = ident.value(f)
        if value is None or value == f.default:
            continue
        flags.append(f.flag if f.kind is bool else f"{f.flag}={value}")
    flags += [
        f"--dataset={name}={source}" for name, source in ident.datasets if source != "bundled"
    ]
    flags += [f"--judge={judge.flag}" for judge in ident.judges]
    caps = {judge.max_tokens for judge in ident.judges} - {None}
    flags += [f"--judge-max-tokens={cap}" for cap in caps]  # one flag caps them all
    return flags


def parse_datasets(values: list[str] | None) -> dict[str, str]:
    """--dataset values -> {eval name: source}. TAG=SOURCE (or EVAL=SOURCE) picks one eval;
    a bare source applies to the evals its name or columns fit."""
    chosen: dict[str, str] = {}
    for value in values or []:
        tag, sep, source = value.partition("=")
        if sep and (tag in TAGS or tag in TAGS.values()):
            chosen[TAGS.get(tag, tag)] = source
        elif (
            sep and len(tag) <= 16 and not any(c in tag for c in "/\\:")
        ):  # C:\runs=old\q.jsonl is a path
            raise UsageError(
                f"--dataset {value}: unknown eval {tag!r}; prefix with {', '.join(f'{t}=' for t in TAGS)}"
            )
        else:
            for name in evals_served(value):
                chosen.setdefault(name, value)
    return chosen


def _is_http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
