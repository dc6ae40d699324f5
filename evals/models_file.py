"""data/models.json: the leaderboard's models, validated on load and updated under a lock.

Each entry: name, provider, url (http or https), releaseDate (YYYY-MM-DD), size (bytes or
null), price ({"input", "output"} USD per million tokens, or {"electricity"} USD per kWh),
optional kilowattHour (`KWH_KEYS`: each board eval's key, or its bands),
resultFiles (`RESULT_KEYS`: each board eval's key: file names under
data/results/<eval>/), set only when every eval on the board has one (an entry is written
only then: until something is published its metadata waits in the plan,
`evals.evaluate.saved_plans`), and allowErrors (true when they were published with --allow-errors).
The file keeps the
hand-edited key order, two-space indent and a trailing newline, so that diffs stay small.

Packages come and go: resultFiles may also name the result of an eval no installed package
puts on the board (`others`; its kilowattHour figures with it). Such a key is kept in the file
as written and left out of everything else (the board, verify, what is published), and every
command that reads the file says so once, in one warning line naming the key and its files
(`warn_others`); installing the package that registers the eval brings it back. Publishing
refuses to add results then (`evals.publish`): a model without that eval's result would make
the file invalid once the package is back.

`update_entry` is all or nothing: under the lock it validates the new list and renders the
site from it before it writes anything, then writes models.json and the site page."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from evals import bounded
from evals.atomic import write_json_atomic, write_text_atomic
from evals.entry_points import Registry
from evals.errors import DataFileError, FileLimitError
from evals.scrub import printable
from evals.tasks import on_board, on_board_keys, tasks

DATA = Path(__file__).resolve().parents[1] / "data"
MODELS = DATA / "models.json"
RESULTS = DATA / "results"
ENTRY_ORDER = (
    "name",
    "provider",
    "url",
    "releaseDate",
    "size",
    "price",
    "kilowattHour",
    "resultFiles",
    "allowErrors",
)
# The evals on the board (`Task.on_board`), read from the registry of evals at first use:
# resultFiles key -> the eval's results folder (its name)
RESULT_KEYS: Registry[str] = Registry(on_board_keys)
# kilowattHour key (a band, or the eval's key) -> its eval's name, in the board's order
KWH_KEYS: Registry[str] = Registry(
    lambda: {key: task.name for task in on_board().values() for key in task.kilowatt_hour_keys()}
)

# The models list after an update -> what writes the site with it (data.js and the model pages),
# computed in full (every error raised) before it is called; None when the site is already so.
Render = Callable[[list[dict[str, Any]]], Callable[[], None] | None]


def load_models(path: Path = MODELS, *, results: Path = RESULTS) -> list[dict[str, Any]]:
    """Every entry, validated; an error names the entry and the field."""
    try:
        models = bounded.load_json(path)
    except FileNotFoundError:
        return []
    except FileLimitError as error:
        raise DataFileError(f"{path}: {error}; fix or restore it from git") from None
    except UnicodeDecodeError:
        raise DataFileError(f"{path}: not UTF-8 text; fix or restore it from git") from None
    except json.JSONDecodeError as error:
        raise DataFileError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}); fix or restore it from git"
        ) from None
    except ValueError as error:  # e.g. a number of more than 4300 digits
        raise DataFileError(
            f"{path}: not valid JSON ({error}); fix or restore it from git"
        ) from None
    if not isinstance(models, list):
        raise DataFileError(f"{path}: expected a JSON array of model entries")
    names = set()
    for index, entry in enumerate(models):
        _check_in(path, index, entry, results)
        if entry["name"] in names:
            raise DataFileError(f"{path}: {entry['name']!r} appears twice; names must be unique")
        names.add(entry["name"])
    warn_others(path, models)
    return models


def others(entry: dict[str, Any]) -> dict[str, str]:
    """The entry's resultFiles of evals not on the board (key -> file name): kept, left out."""
    return {
        key: file
        for key, file in (entry.get("resultFiles") or {}).items()
        if key not in RESULT_KEYS
    }


# The warnings said, as digests, in the environment: said once by a command and not again by
# the processes it starts (evaluate's pytest runs, their xdist workers).
WARNED = "ROBLOX_EVALS_WARNED"
SHOWN_ENTRIES = 3


def warn_others(path: Path, models: list[dict[str, Any]]) -> list[str]:
    """One line per key of `others` in `models`, printed to stderr as "warning: ..." unless
    this process (or the one that started it) said it already; the lines are returned."""
    by_key: dict[str, list[str]] = {}
    for entry in models:
        for key, file in others(entry).items():
            by_key.setdefault(key, []).append(f"{entry['name']!r} {file}")
    lines = []
    for key, named in by_key.items():
        shown = ", ".join(named[:SHOWN_ENTRIES]) + (
            f" and {len(named) - SHOWN_ENTRIES} more" if len(named) > SHOWN_ENTRIES else ""
        )
        task = next((t for t in tasks().values() if t.key == key), None)
        why = (
            f"eval {task.name!r} ({type(task).__module__}) is installed but not on the board"
            if task
            else "no installed package registers an eval with that key"
        )
        lines.append(
            f"{path}: resultFiles.{key} ({shown}) is left out: {why}; "
            f"it is kept, and installing the package that puts it on the board brings it back"
        )
    said = os.environ.get(WARNED, "").split()
    for line in lines:
        digest = hashlib.sha256(line.encode()).hexdigest()[:16]
        if digest not in said:
            said.append(digest)
            os.environ[WARNED] = " ".join(said)
            print(printable(f"warning: {line}"), file=sys.stderr)
    return lines


def check_entry(entry: Any, *, results: Path | None = None, label: str | None = None) -> None:
    """Raise DataFileError when `entry` is not a valid models.json entry (`schema.Entry`): one
    line naming the entry, the field, what it must be and its value. With `results` (the
    results folder) the files resultFiles names must exist there; without, only their form is
    checked, so metadata can be checked before anything runs (the files of `others` are not:
    their folder is their eval's name, which no installed package says). `label` names an
    entry without a name (default: its name)."""
    from evals import schema

    name = entry.get("name") if isinstance(entry, dict) else None
    where = f"entry {name!r}" if isinstance(name, str) and name.strip() else label or "an entry"
    if problem := schema.problem(schema.Entry, entry):
        raise DataFileError(f"{where}: {problem}")
    files = entry.get("resultFiles")
    if files and results is not None:
        for key, folder in RESULT_KEYS.items():
            if not (results / folder / files[key]).is_file():
                raise DataFileError(
                    f"{where}: resultFiles.{key}: names {files[key]}, which is not in {results / folder}"
                )


def find_entry(models: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((m for m in models if m["name"] == name), None)


def published_files(path: Path = MODELS, *, results: Path = RESULTS) -> set[Path]:
    """Every result file models.json names: published, so never overwritten or rerun."""
    return {
        result_path(entry, key, results)
        for entry in load_models(path, results=results)
        if entry.get("resultFiles")
        for key in RESULT_KEYS
    }


def result_path(entry: dict[str, Any], key: str, results: Path = RESULTS) -> Path:
    return results / RESULT_KEYS[key] / entry["resultFiles"][key]


def update_entry(
    name: str,
    mutate: Callable[[dict[str, Any] | None], dict[str, Any] | None],
    path: Path = MODELS,
    *,
    results: Path = RESULTS,
    render: Render | None = None,
) -> dict[str, Any] | None:
    """Replace (or add) the entry `name` with `mutate(old entry or None)`, all or nothing, under
    the file lock (a `mutate` that returns None leaves every file as it is): the new list is
    validated and `render(new list)` (the site's files) computed
    before anything is written; an error in either (DataFileError, one line) writes nothing.
    Then models.json and the site are written, each file atomically; if the site cannot be
    written, models.json is put back (and `build --write` brings the site back in line)."""
    with lock(path):
        models = load_models(path, results=results)
        before = bounded.read_text(path) if path.is_file() else None  # valid UTF-8: it loaded
        old = find_entry(models, name)
        new = mutate(dict(old) if old else None)
        if new is None:
            return None
        new = ordered(new)
        if new.get("name") != name:
            raise DataFileError(f"update of {name!r} returned an entry named {new.get('name')!r}")
        _check_in(path, len(models), new, results)
        models = [new if m is old else m for m in models] if old else [*models, new]
        write_site = render(models) if render else None
        write_json_atomic(path, models, indent=2)
        if write_site:
            try:
                write_site()
            except BaseException:
                if before is None:
                    path.unlink(missing_ok=True)
                else:
                    write_text_atomic(path, before)
                raise
    return new


def lock(path: Path = MODELS) -> FileLock:
    """The models.json lock: publishing and `build --write` take it."""
    return FileLock(path.with_name(path.name + ".lock"))


def ordered(entry: dict[str, Any]) -> dict[str, Any]:
    """The hand-edited key order, so a new entry reads like the others."""
    return {k: entry[k] for k in ENTRY_ORDER if k in entry} | {
        k: v for k, v in entry.items() if k not in ENTRY_ORDER
    }


def _check_in(path: Path, index: int, entry: Any, results: Path) -> None:
    """`check_entry`, its message prefixed with the file (and an entry without a name named by its place)."""
    try:
        check_entry(entry, results=results, label=f"entry {index + 1}")
    except DataFileError as error:
        raise DataFileError(f"{path}: {error}") from None
