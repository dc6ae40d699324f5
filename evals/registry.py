"""data/models.json: the leaderboard's models, validated on load and updated under a lock.

Each entry: name, provider, url (http or https), releaseDate (YYYY-MM-DD), size (bytes or
null), price ({"input", "output"} USD per million tokens, or {"electricity"} USD per kWh),
optional kilowattHour (freeform, multipleChoice, easy, medium, hard), resultFiles (freeform,
multipleChoice, leetcode: file names under data/results/<eval>/), set only when all three
exist, and allowErrors (true when they were published with --allow-errors). The file keeps the
hand-edited key order, two-space indent and a trailing newline, so that diffs stay small.

`update_entry` is all or nothing: under the lock it validates the new list and renders the
site from it before it writes anything, then writes models.json and the site page."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from filelock import FileLock

from evals.atomic import write_json_atomic, write_text_atomic
from evals.errors import RegistryError

DATA = Path(__file__).resolve().parents[1] / "data"
MODELS = DATA / "models.json"
RESULTS = DATA / "results"
ENTRY_ORDER = ("name", "provider", "url", "releaseDate", "size", "price", "kilowattHour", "resultFiles", "allowErrors")
# resultFiles key -> the eval's results folder
RESULT_KEYS = {"freeform": "freeform", "multipleChoice": "multiple_choice", "leetcode": "leetcode"}
KWH_KEYS = ("freeform", "multipleChoice", "easy", "medium", "hard")
PRICES = ({"input", "output"}, {"electricity"})
MAX_EXACT = 2**53  # integers are exact in JavaScript (the site) below this
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# The models list after an update -> what writes the site with it (data.js and the model pages),
# computed in full (every error raised) before it is called.
Render = Callable[[list[dict[str, Any]]], Callable[[], None]]


def load_models(path: Path = MODELS, *, results: Path = RESULTS) -> list[dict[str, Any]]:
    """Every entry, validated; an error names the entry and the field."""
    try:
        models = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text; fix or restore it from git") from None
    except json.JSONDecodeError as error:
        raise RegistryError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}); fix or restore it from git") from None
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text; fix or restore it from git") from None
    except ValueError as error:  # e.g. a number of more than 4300 digits
        raise RegistryError(f"{path}: not valid JSON ({error}); fix or restore it from git") from None
    if not isinstance(models, list):
        raise RegistryError(f"{path}: expected a JSON array of model entries")
    names = set()
    for index, entry in enumerate(models):
        _check_in(path, index, entry, results)
        if entry["name"] in names:
            raise RegistryError(f"{path}: {entry['name']!r} appears twice; names must be unique")
        names.add(entry["name"])
    return models


def check_entry(entry: Any, *, results: Path | None = None) -> None:
    """Raise RegistryError when `entry` is not a valid models.json entry: one line naming the
    entry, the field and its value. With `results` (the results folder) the files resultFiles
    names must exist there; without, only their form is checked, so metadata can be checked
    before anything runs."""
    if not isinstance(entry, dict) or not _is_text(entry.get("name")):
        raise RegistryError(f"an entry has no name: name must be a non-empty string, not {_shown(entry.get('name') if isinstance(entry, dict) else entry)}")
    where = repr(entry["name"])

    def refuse(field: str, should: str) -> RegistryError:
        return RegistryError(f"{where}: {field} must be {should}, not {_shown(_field(entry, field))}")

    for field in ("provider", "url"):
        if not _is_text(entry.get(field)):
            raise refuse(field, "a non-empty string")
    if not _is_web_url(entry["url"]):
        raise refuse("url", "an http(s) URL with a host")
    if not _is_date(entry.get("releaseDate")):
        raise refuse("releaseDate", "a real date written YYYY-MM-DD")
    size = entry.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or not 0 < size < MAX_EXACT):
        raise refuse("size", "a byte count from 1 to 2**53 - 1, or null")
    price = entry.get("price")
    if not isinstance(price, dict) or set(price) not in PRICES:
        raise refuse("price", '{"input", "output"} in USD per million tokens or {"electricity"} in USD per kWh')
    for key in price:
        if not is_amount(price[key]):
            raise refuse(f"price.{key}", "a finite number >= 0")
    kwh = entry.get("kilowattHour")
    if kwh is not None:
        if not isinstance(kwh, dict) or set(kwh) - set(KWH_KEYS):
            raise refuse("kilowattHour", f"a map of some of {', '.join(KWH_KEYS)} to kWh")
        for key in kwh:
            if not is_amount(kwh[key]):
                raise refuse(f"kilowattHour.{key}", "a finite number of kWh >= 0")
    files = entry.get("resultFiles")
    if files is not None:
        if not isinstance(files, dict) or set(files) != set(RESULT_KEYS):
            raise refuse("resultFiles", f"a map of all of {', '.join(RESULT_KEYS)} to file names")
        for key in RESULT_KEYS:
            if not _is_file_name(files[key]):
                raise refuse(f"resultFiles.{key}", f"a file name in {RESULTS.name}/{RESULT_KEYS[key]}/")
            if results is not None and not (results / RESULT_KEYS[key] / files[key]).is_file():
                raise RegistryError(f"{where}: resultFiles.{key} names {files[key]}, which is not in {results / RESULT_KEYS[key]}")
    if not isinstance(entry.get("allowErrors", False), bool):
        raise refuse("allowErrors", "true or false")


def find_entry(models: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((m for m in models if m["name"] == name), None)


def published_files(path: Path = MODELS, *, results: Path = RESULTS) -> set[Path]:
    """Every result file models.json names: published, so never overwritten or rerun."""
    return {result_path(entry, key, results) for entry in load_models(path, results=results) if entry.get("resultFiles") for key in RESULT_KEYS}


def result_path(entry: dict[str, Any], key: str, results: Path = RESULTS) -> Path:
    return results / RESULT_KEYS[key] / entry["resultFiles"][key]


def update_entry(name: str, mutate: Callable[[dict[str, Any] | None], dict[str, Any]], path: Path = MODELS, *,
                 results: Path = RESULTS, render: Render | None = None) -> dict[str, Any]:
    """Replace (or add) the entry `name` with `mutate(old entry or None)`, all or nothing, under
    the file lock: the new list is validated and `render(new list)` (the site's files) computed
    before anything is written; an error in either (RegistryError, one line) writes nothing.
    Then models.json and the site are written, each file atomically; if the site cannot be
    written, models.json is put back (and `build --write` brings the site back in line)."""
    with lock(path):
        models = load_models(path, results=results)
        before = path.read_text(encoding="utf-8") if path.is_file() else None  # valid UTF-8: it loaded
        old = find_entry(models, name)
        new = ordered(mutate(dict(old) if old else None))
        if new.get("name") != name:
            raise RegistryError(f"update of {name!r} returned an entry named {new.get('name')!r}")
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
    return {k: entry[k] for k in ENTRY_ORDER if k in entry} | {k: v for k, v in entry.items() if k not in ENTRY_ORDER}


def is_amount(value: Any) -> bool:
    """A finite number >= 0: not a bool, not an int too large for a float."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value) and value >= 0
    except OverflowError:  # an int beyond any float
        return False


def _check_in(path: Path, index: int, entry: Any, results: Path) -> None:
    """`check_entry`, its message prefixed with the file (and the entry's place when it has no name)."""
    if not isinstance(entry, dict) or not _is_text(entry.get("name")):
        raise RegistryError(f"{path}: entry {index + 1} has no name")
    try:
        check_entry(entry, results=results)
    except RegistryError as error:
        raise RegistryError(f"{path}: {error}") from None


def _field(entry: dict[str, Any], field: str) -> Any:
    """entry["price"]["input"] for "price.input"."""
    value: Any = entry
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_web_url(value: str) -> bool:
    if any(c.isspace() or not c.isprintable() for c in value):
        return False
    try:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed [IPv6] host
        return False


def _is_date(value: Any) -> bool:
    """YYYY-MM-DD exactly (date.fromisoformat alone also takes 20260801 and 2026-W31-1)."""
    if not isinstance(value, str) or not DATE.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_file_name(value: Any) -> bool:
    return isinstance(value, str) and value not in ("", ".", "..") and Path(value).name == value and value.isprintable()


def _shown(value: Any) -> str:
    """A value for a one-line message: its repr, cut short."""
    try:
        text = repr(value)
    except ValueError:  # an int of more than 4300 digits
        text = "<a number too long to print>"
    return text if len(text) <= 60 else text[:57] + "..."
