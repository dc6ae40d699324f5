"""What `evaluate NAME` last planned for a model, kept until it is published and after.

A bare `evaluate NAME` resumes the identity last planned for NAME, whether or not anything
of it finished or was published, and the metadata flags given with it (a new model's prices,
say, kept here until something is published) and the how-to-run flags a resume needs to send
its requests as the first attempt did (`Flag.resume`: --api-key-env's variable name, never a
key), so that nothing typed once has to be typed again. One JSON file per display name under
`data/plans/`, named by `evals.names.file_name` (any name, spaces or slashes included, maps to
a file of its own), written atomically."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from evals import bounded
from evals.atomic import write_json_atomic
from evals.errors import DataFileError, FileLimitError
from evals.names import file_name, file_name_before

FORMAT = 1


def path_for(plans_dir: Path, name: str) -> Path:
    return plans_dir / f"{file_name(name)}.json"


def load(plans_dir: Path, name: str) -> dict[str, Any] | None:
    """{"evals": {eval: {"config": ..., "dataset": source}}, "metadata": {...}, "howToRun": {flag: value},
    "picked": [tag, ...]} or None (a plan saved before howToRun or picked were kept has none)."""
    path = path_for(plans_dir, name)
    if not path.exists() and (before := file_name_before(name)) is not None:
        path = plans_dir / f"{before}.json"  # saved before names kept off Windows' devices
    try:
        plan = bounded.load_json(path)
    except FileNotFoundError:
        return None
    except FileLimitError as error:
        raise DataFileError(
            f"{path}: {error}; delete the saved plan of {name!r} and pass the model's flags again"
        ) from None
    except (ValueError, UnicodeDecodeError):
        raise DataFileError(
            f"{path}: the saved plan of {name!r} is corrupt; delete it and pass the model's flags again"
        ) from None
    if (
        not isinstance(plan, dict)
        or plan.get("format") != FORMAT
        or plan.get("name") != name
        or not isinstance(plan.get("evals"), dict)
    ):
        raise DataFileError(
            f"{path}: not a saved plan of {name!r}; delete it and pass the model's flags again"
        )
    return plan


def save(
    plans_dir: Path,
    name: str,
    evals: dict[str, dict[str, Any]],
    metadata: dict[str, Any],
    how_to_run: dict[str, Any],
    picked: list[str],
) -> Path:
    """`how_to_run`: the how-to-run flags a bare resume passes again (`evals.flags.remembered`);
    `picked`: the evals `--evals` picked (their tags), which a bare resume runs again."""
    path = path_for(plans_dir, name)
    write_json_atomic(
        path,
        {
            "format": FORMAT,
            "name": name,
            "plannedAt": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "evals": evals,
            "metadata": metadata,
            "howToRun": how_to_run,
            "picked": picked,
        },
        indent=2,
    )
    return path
