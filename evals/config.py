"""A run's identity: the normalised config that decides which answers it holds.

Two commands with the same identity share one run folder (and so resume each other); any
difference in identity is a different run, in a different folder, with its own result file.
How a run is executed (workers, API key variable, Responses API, retries) is not identity."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.identity import Identity, config_fields, slug_parts

HARNESS_VERSION = 1


@dataclass(frozen=True)
class RunConfig:
    eval: str
    identity: Identity
    prompt_version: str
    dataset: dict[str, Any]
    judges: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(
        default_factory=dict
    )  # per-eval identity (`Task.identity_extra`), e.g. a work budget

    def to_dict(self) -> dict[str, Any]:
        """camelCase, no unset values: the form stored in result files and hashed."""
        raw = {
            "eval": self.eval,
            **config_fields(self.identity),
            "dataset": self.dataset,
            "promptVersion": self.prompt_version,
            "judges": list(self.judges) or None,
            **self.extra,
            "harnessVersion": HARNESS_VERSION,
        }
        return {k: v for k, v in raw.items() if v is not None}

    @property
    def is_smoke_test(self) -> bool:
        """--limit and train-split runs check that things work; they never score a model."""
        return self.identity.limit is not None or self.identity.split != "test"

    @property
    def run_name(self) -> str:
        return run_name(self.to_dict())


def run_name(config: dict[str, Any]) -> str:
    """A readable slug plus a short stable hash of the whole identity."""
    digest = hashlib.sha256(
        json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9.]+", "-", "-".join(slug_parts(config)).lower()).strip("-.")[:80]
    return f"{slug}-{digest}"


def run_dir(root: Path, config: RunConfig) -> Path:
    return root / config.eval / config.run_name


def results_path(root: Path, config: RunConfig) -> Path:
    return root / config.eval / f"{config.run_name}.json"
