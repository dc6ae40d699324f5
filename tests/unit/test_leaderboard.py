"""models.json, in process: an invalid entry is an error naming the entry and its field (or its
place), keys of no field are kept, metadata is checked before any result file exists, a number
too long to read names the file, and `update_entry` keeps the hand-edited order and format. The
leaderboard flow through the CLI is tests/e2e/test_leaderboard.py."""

from __future__ import annotations

import json
import os
import re
import signal
import time

import pytest

from evals import registry
from evals.errors import RegistryError
from tests.support.harness import GOOD

# -- refusals ------------------------------------------------------------------------------------


# -- the registry ----------------------------------------------------------------------------------




@pytest.mark.parametrize(
    "change, message",
    [
        ({"releaseDate": "2026-13-01"}, 'releaseDate: must be a real date written YYYY-MM-DD (got "2026-13-01")'),
        ({"releaseDate": "2026-W31-1"}, 'releaseDate: must be a real date written YYYY-MM-DD (got "2026-W31-1")'),
        ({"url": "https://"}, 'url: must be an http(s) URL with a host (got "https://")'),
        ({"url": "https://exa mple.com"}, 'url: must be an http(s) URL with a host (got "https://exa mple.com")'),
        ({"size": "big"}, 'size: must be a byte count from 1 to 2**53 - 1, or null (got "big")'),
        ({"size": 2**53}, "size: must be a byte count from 1 to 2**53 - 1, or null (got 9007199254740992)"),
        ({"price": {"input": 1}}, 'price: must be {"input", "output"} in USD per million tokens or {"electricity"} in USD per kWh (got {"input": 1})'),
        ({"price": {"input": 1, "output": 2, "electricity": 3}}, "price: must be"),
        ({"price": {"input": "1.5", "output": 2}}, 'price.input: must be a finite number >= 0, in USD per million input tokens (got "1.5")'),
        ({"provider": 7}, "provider: must be a non-empty string (got 7)"),
        ({"kilowattHour": {"freeform": "a lot"}}, 'kilowattHour.freeform: must be a finite number >= 0, in kWh (got "a lot")'),
        ({"kilowattHour": {"freeform": 1, "hardest": 2}}, "kilowattHour: must be a map of some of freeform, multipleChoice, easy, medium, hard to kWh"),
        ({"resultFiles": {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}}, "resultFiles.freeform: names a.json, which is not in"),
        ({"resultFiles": {"freeform": "../a.json", "multipleChoice": "b.json", "leetcode": "c.json"}}, 'resultFiles.freeform: must be a file name in results/freeform/ (got "../a.json")'),
        ({"resultFiles": {"freeform": "a.json"}}, "resultFiles.multipleChoice: missing (must be a file name in results/multiple_choice/), and 1 more"),
        ({"allowErrors": None}, "allowErrors: must be true or false (got null)"),
    ],
)
def test_an_invalid_entry_is_an_error_naming_the_entry_and_field(tmp_path, change, message):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{**GOOD, **change}]))
    with pytest.raises(RegistryError, match=re.escape(f"{path}: entry 'M': {message}")):
        registry.load_models(path, results=tmp_path / "results")


@pytest.mark.parametrize(
    "entries, message",
    [
        ([GOOD, {**GOOD, "name": ""}], 'entry 2: name: must be a non-empty string (got "")'),
        ([GOOD, 42], "entry 2: must be a model entry: an object with name, provider, url, releaseDate, size, price, ... (got 42)"),
        ([{k: v for k, v in GOOD.items() if k not in ("url", "price")}], "entry 'M': url: missing (must be an http(s) URL with a host), and 1 more"),
        ([GOOD, GOOD], "'M' appears twice; names must be unique"),
        ({"models": [GOOD]}, "expected a JSON array of model entries"),
    ],
    ids=["empty name", "not an object", "two missing", "twice", "not an array"],
)
def test_a_bad_entry_is_named_by_its_place_and_only_the_first_error_is_spelled_out(tmp_path, entries, message):
    path = tmp_path / "models.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(RegistryError) as error:
        registry.load_models(path, results=tmp_path)
    assert str(error.value) == f"{path}: {message}"


def test_keys_of_no_field_are_kept_and_ignored(tmp_path):
    """A hand-added key is no error, and publishing keeps it, after the known ones."""
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{"note": "hand-added", **GOOD}]))
    (entry,) = registry.load_models(path, results=tmp_path)
    assert entry["note"] == "hand-added"
    registry.update_entry("M", lambda e: {**e, "size": 7}, path, results=tmp_path)
    assert list(json.loads(path.read_text())[0])[-1] == "note"


def test_check_entry_checks_metadata_before_any_result_file_exists(tmp_path):
    """What `evaluate` can call before any paid request: the metadata alone, one line."""
    files = {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}
    registry.check_entry({**GOOD, "resultFiles": files})
    with pytest.raises(RegistryError, match="resultFiles.freeform: names a.json, which is not in"):
        registry.check_entry({**GOOD, "resultFiles": files}, results=tmp_path)
    with pytest.raises(RegistryError) as error:
        registry.check_entry({**GOOD, "price": {"input": float("inf"), "output": 2}})
    assert str(error.value) == "entry 'M': price.input: must be a finite number >= 0, in USD per million input tokens (got Infinity)"


def test_a_number_too_long_to_read_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([GOOD])[:-2] + ', "size": ' + "1" * 5000 + "}]")
    with pytest.raises(RegistryError, match=re.escape(f"{path}: not valid JSON (")):
        registry.load_models(path, results=tmp_path)


def test_update_entry_keeps_the_hand_edited_order_and_format(tmp_path):
    path = tmp_path / "models.json"
    registry.update_entry("M", lambda e: {"price": GOOD["price"], **GOOD}, path, results=tmp_path)
    text = path.read_text()
    assert text == json.dumps([GOOD], indent=2) + "\n"


