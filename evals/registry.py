"""data/models.json: the leaderboard's models, validated on load and updated under a lock.

Each entry: name, provider, url, releaseDate (YYYY-MM-DD), size (bytes or null), price
({"input", "output"} USD per million tokens, or {"electricity"} USD per kWh), optional
kilowattHour (freeform, multipleChoice, easy, medium, hard), and resultFiles (freeform,
multipleChoice, leetcode: file names under data/results/<eval>/), set only when all three
exist. The file keeps the hand-edited key order, two-space indent and a trailing newline,
so that diffs stay small."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from evals.atomic import write_json_atomic
from evals.errors import RegistryError

DATA = Path(__file__).resolve().parents[1] / "data"
MODELS = DATA / "models.json"
RESULTS = DATA / "results"
ENTRY_ORDER = ("name", "provider", "url", "releaseDate", "size", "price", "kilowattHour", "resultFiles")
# resultFiles key -> the eval's results folder
RESULT_KEYS = {"freeform": "freeform", "multipleChoice": "multiple_choice", "leetcode": "leetcode"}
KWH_KEYS = ("freeform", "multipleChoice", "easy", "medium", "hard")


def load_models(path: Path = MODELS, *, results: Path = RESULTS) -> list[dict[str, Any]]:
    """Every entry, validated; an error names the entry and the field."""
    try:
        models = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except json.JSONDecodeError as error:
        raise RegistryError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}); fix or restore it from git") from None
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text; fix or restore it from git") from None
    if not isinstance(models, list):
        raise RegistryError(f"{path}: expected a JSON array of model entries")
    names = set()
    for index, entry in enumerate(models):
        _validate(path, index, entry, results)
        if entry["name"] in names:
            raise RegistryError(f"{path}: {entry['name']!r} appears twice; names must be unique")
        names.add(entry["name"])
    return models


def find_entry(models: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((m for m in models if m["name"] == name), None)


def result_path(entry: dict[str, Any], key: str, results: Path = RESULTS) -> Path:
    return results / RESULT_KEYS[key] / entry["resultFiles"][key]


def update_entry(name: str, mutate: Callable[[dict[str, Any] | None], dict[str, Any]], path: Path = MODELS, *,
                 results: Path = RESULTS, after: Callable[[], None] | None = None) -> dict[str, Any]:
    """Replace (or add) the entry `name` with `mutate(old entry or None)`, under the file lock,
    validated, written atomically; `after()` runs under the same lock (the site rebuild)."""
    with lock(path):
        models = load_models(path, results=results)
        old = find_entry(models, name)
        new = ordered(mutate(dict(old) if old else None))
        if new.get("name") != name:
            raise RegistryError(f"update of {name!r} returned an entry named {new.get('name')!r}")
        _validate(path, len(models), new, results)
        models = [new if m is old else m for m in models] if old else [*models, new]
        write_json_atomic(path, models, indent=2)
        if after:
            after()
    return new


def lock(path: Path = MODELS) -> FileLock:
    return FileLock(path.with_name(path.name + ".lock"))


def ordered(entry: dict[str, Any]) -> dict[str, Any]:
    """The hand-edited key order, so a new entry reads like the others."""
    return {k: entry[k] for k in ENTRY_ORDER if k in entry} | {k: v for k, v in entry.items() if k not in ENTRY_ORDER}


def _validate(path: Path, index: int, entry: Any, results: Path) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise RegistryError(f"{path}: entry {index + 1} has no name")
    where = f"{path}: {entry['name']!r}"
    for field in ("provider", "url"):
        if not isinstance(entry.get(field), str) or not entry[field]:
            raise RegistryError(f"{where}: {field} must be a non-empty string")
    try:
        dt.date.fromisoformat(entry.get("releaseDate") or "")
    except (TypeError, ValueError):
        raise RegistryError(f"{where}: releaseDate {entry.get('releaseDate')!r} is not a YYYY-MM-DD date") from None
    size = entry.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size <= 0):
        raise RegistryError(f"{where}: size must be a byte count or null, not {size!r}")
    _validate_price(where, entry.get("price"))
    kwh = entry.get("kilowattHour")
    if kwh is not None:
        if not isinstance(kwh, dict) or set(kwh) - set(KWH_KEYS) or not all(_is_number(v) and v >= 0 for v in kwh.values()):
            raise RegistryError(f"{where}: kilowattHour must map {', '.join(KWH_KEYS)} to kWh numbers")
    files = entry.get("resultFiles")
    if files is not None:
        if not isinstance(files, dict) or set(files) != set(RESULT_KEYS):
            raise RegistryError(f"{where}: resultFiles must name all of {', '.join(RESULT_KEYS)}")
        for key in RESULT_KEYS:
            if not (results / RESULT_KEYS[key] / str(files[key])).is_file():
                raise RegistryError(f"{where}: resultFiles.{key} names {files[key]}, which is not in {results / RESULT_KEYS[key]}")


def _validate_price(where: str, price: Any) -> None:
    if isinstance(price, dict) and set(price) == {"input", "output"} and all(_is_number(v) and v >= 0 for v in price.values()):
        return
    if isinstance(price, dict) and set(price) == {"electricity"} and _is_number(price["electricity"]) and price["electricity"] >= 0:
        return
    raise RegistryError(f"{where}: price must be {{\"input\", \"output\"}} in USD per million tokens or {{\"electricity\"}} in USD per kWh, not {price!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
