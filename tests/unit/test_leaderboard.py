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

from evals import models_file
from evals.errors import DataFileError
from tests.support.harness import GOOD

# -- refusals ------------------------------------------------------------------------------------


# -- models.json ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"releaseDate": "2026-13-01"},
            'releaseDate: must be a real date written YYYY-MM-DD (got "2026-13-01")',
        ),
        (
            {"releaseDate": "2026-W31-1"},
            'releaseDate: must be a real date written YYYY-MM-DD (got "2026-W31-1")',
        ),
        ({"url": "https://"}, 'url: must be an http(s) URL with a host (got "https://")'),
        (
            {"url": "https://exa mple.com"},
            'url: must be an http(s) URL with a host (got "https://exa mple.com")',
        ),
        ({"size": "big"}, 'size: must be a byte count from 1 to 2**53 - 1, or null (got "big")'),
        (
            {"size": 2**53},
            "size: must be a byte count from 1 to 2**53 - 1, or null (got 9007199254740992)",
        ),
        (
            {"price": {"input": 1}},
            'price: must be {"input", "output"} in USD per million '
            'tokens or {"electricity"} in USD per kWh (got {"input": 1})',
        ),
        ({"price": {"input": 1, "output": 2, "electricity": 3}}, "price: must be"),
        (
            {"price": {"input": "1.5", "output": 2}},
            'price.input: must be a finite number >= 0, in USD per million input tokens (got "1.5")',
        ),
        ({"provider": 7}, "provider: must be a non-empty string (got 7)"),
        (
            {"kilowattHour": {"freeform": "a lot"}},
            'kilowattHour.freeform: must be a finite number >= 0, in kWh (got "a lot")',
        ),
        (
            {"kilowattHour": {"freeform": 1, "hardest": 2}},
            "kilowattHour: must be a map of some of freeform, multipleChoice, easy, medium, hard to kWh",
        ),
        (
            {
                "resultFiles": {
                    "freeform": "a.json",
                    "multipleChoice": "b.json",
                    "leetcode": "c.json",
                }
            },
            "resultFiles.freeform: names a.json, which is not in",
        ),
        (
            {
                "resultFiles": {
                    "freeform": "../a.json",
                    "multipleChoice": "b.json",
                    "leetcode": "c.json",
                }
            },
            'resultFiles.freeform: must be a file name in results/freeform/ (got "../a.json")',
        ),
        (
            {"resultFiles": {"freeform": "a.json"}},
            "resultFiles.multipleChoice: missing (must be a file name in results/multiple_choice/), and 1 more",
        ),
        ({"allowErrors": None}, "allowErrors: must be true or false (got null)"),
    ],
)
def test_an_invalid_entry_is_an_error_naming_the_entry_and_field(tmp_path, change, message):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{**GOOD, **change}]))
    with pytest.raises(DataFileError, match=re.escape(f"{path}: entry 'M': {message}")):
        models_file.load_models(path, results=tmp_path / "results")


@pytest.mark.parametrize(
    "entries, message",
    [
        ([GOOD, {**GOOD, "name": ""}], 'entry 2: name: must be a non-empty string (got "")'),
        (
            [GOOD, 42],
            "entry 2: must be a model entry: an object with name, "
            "provider, url, releaseDate, size, price, ... (got 42)",
        ),
        (
            [{k: v for k, v in GOOD.items() if k not in ("url", "price")}],
            "entry 'M': url: missing (must be an http(s) URL with a host), and 1 more",
        ),
        ([GOOD, GOOD], "'M' appears twice; names must be unique"),
        ({"models": [GOOD]}, "expected a JSON array of model entries"),
    ],
    ids=["empty name", "not an object", "two missing", "twice", "not an array"],
)
def test_a_bad_entry_is_named_by_its_place_and_only_the_first_error_is_spelled_out(
    tmp_path, entries, message
):
    path = tmp_path / "models.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(DataFileError) as error:
        models_file.load_models(path, results=tmp_path)
    assert str(error.value) == f"{path}: {message}"


def test_keys_of_no_field_are_kept_and_ignored(tmp_path):
    """A hand-added key is no error, and publishing keeps it, after the known ones."""
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{"note": "hand-added", **GOOD}]))
    (entry,) = models_file.load_models(path, results=tmp_path)
    assert entry["note"] == "hand-added"
    models_file.update_entry("M", lambda e: {**e, "size": 7}, path, results=tmp_path)
    assert list(json.loads(path.read_text())[0])[-1] == "note"


def test_check_entry_checks_metadata_before_any_result_file_exists(tmp_path):
    """What `evaluate` can call before any paid request: the metadata alone, one line."""
    files = {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}
    models_file.check_entry({**GOOD, "resultFiles": files})
    with pytest.raises(DataFileError, match="resultFiles.freeform: names a.json, which is not in"):
        models_file.check_entry({**GOOD, "resultFiles": files}, results=tmp_path)
    with pytest.raises(DataFileError) as error:
        models_file.check_entry({**GOOD, "price": {"input": float("inf"), "output": 2}})
    assert (
        str(error.value)
        == "entry 'M': price.input: must be a finite number >= 0, in USD per million input tokens (got Infinity)"
    )


def test_a_number_too_long_to_read_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([GOOD])[:-2] + ', "size": ' + "1" * 5000 + "}]")
    with pytest.raises(DataFileError, match=re.escape(f"{path}: not valid JSON (")):
        models_file.load_models(path, results=tmp_path)


def test_update_entry_keeps_the_hand_edited_order_and_format(tmp_path):
    path = tmp_path / "models.json"
    models_file.update_entry(
        "M", lambda e: {"price": GOOD["price"], **GOOD}, path, results=tmp_path
    )
    text = path.read_text()
    assert text == json.dumps([GOOD], indent=2) + "\n"


# -- an eval no installed package registers --------------------------------------------------------

ON_BOARD = {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}


def _board_files(results, files=ON_BOARD):
    for key, folder in models_file.RESULT_KEYS.items():
        (results / folder).mkdir(parents=True, exist_ok=True)
        (results / folder / files[key]).write_text("{}")


def test_the_result_of_an_eval_no_package_registers_is_kept_and_said_once(
    tmp_path, monkeypatch, capsys
):
    """Its package uninstalled, an eval's key in resultFiles (and its kilowattHour figure) is no
    error: loaded, left out of what the board reads, said in one warning line once per process
    tree (the environment carries it to the processes a command starts), kept when written."""
    monkeypatch.setenv(
        models_file.WARNED, ""
    )  # undone after the test, unlike a delenv of an unset one
    path, results = tmp_path / "models.json", tmp_path / "results"
    _board_files(results)
    entry = {
        **GOOD,
        "price": {"electricity": 0.3},
        "kilowattHour": {"freeform": 1, "echo": 0.5},
        "resultFiles": {**ON_BOARD, "echo": "e.json"},
        "note": "kept",
    }
    path.write_text(json.dumps([entry], indent=2) + "\n")
    (loaded,) = models_file.load_models(path, results=results)
    models_file.load_models(path, results=results)
    assert loaded == entry and models_file.others(loaded) == {"echo": "e.json"}
    assert models_file.published_files(path, results=results) == {
        results / folder / ON_BOARD[key] for key, folder in models_file.RESULT_KEYS.items()
    }
    assert capsys.readouterr().err.splitlines() == [
        f"warning: {path}: resultFiles.echo ('M' e.json) is left "
        "out: no installed package registers an eval with that key; "
        "it is kept, and installing the package that puts it on the board brings it back"
    ]
    models_file.update_entry("M", lambda e: {**e, "size": 7}, path, results=results)
    assert json.loads(path.read_text()) == [{**entry, "size": 7}]
    assert capsys.readouterr().err == ""  # said already, in this process


def test_the_warning_names_every_key_once_and_at_most_three_models_each(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(
        models_file.WARNED, ""
    )  # undone after the test, unlike a delenv of an unset one
    path, results = tmp_path / "models.json", tmp_path / "results"
    _board_files(results)
    models = [
        {
            **GOOD,
            "name": f"M{i}",
            "resultFiles": {
                **ON_BOARD,
                "echo": f"e{i}.json",
                **({"tiers": "t.json"} if i == 1 else {}),
            },
        }
        for i in range(1, 6)
    ]
    path.write_text(json.dumps(models))
    lines = models_file.warn_others(path, models_file.load_models(path, results=results))
    assert [line.split(" is left out")[0] for line in lines] == [
        f"{path}: resultFiles.echo ('M1' e1.json, 'M2' e2.json, 'M3' e3.json and 2 more)",
        f"{path}: resultFiles.tiers ('M1' t.json)",
    ]
    assert capsys.readouterr().err.count("warning: ") == 2


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"resultFiles": {**ON_BOARD, "echo": 5}},
            "resultFiles.echo: must be a file name in results/<its eval>/ (got 5)",
        ),
        (
            {"resultFiles": {**ON_BOARD, "echo": "../e.json"}},
            'resultFiles.echo: must be a file name in results/<its eval>/ (got "../e.json")',
        ),
        (
            {"resultFiles": {"freeform": "a.json", "echo": "e.json"}},
            "resultFiles.multipleChoice: missing",
        ),
        # Without the result of another eval a kilowattHour key of none is a typo, as before.
        (
            {"resultFiles": ON_BOARD, "kilowattHour": {"freeform": 1, "echo": 2}},
            "kilowattHour: must be a map of some of freeform",
        ),
        (
            {"resultFiles": {**ON_BOARD, "echo": "e.json"}, "kilowattHour": {"echo": "a lot"}},
            "kilowattHour: must be a map of some of freeform",
        ),
    ],
)
def test_the_result_of_an_eval_no_package_registers_is_still_checked(tmp_path, change, message):
    path = tmp_path / "models.json"
    _board_files(tmp_path / "results")
    path.write_text(json.dumps([{**GOOD, **change}]))
    with pytest.raises(DataFileError, match=re.escape(f"{path}: entry 'M': {message}")):
        models_file.load_models(path, results=tmp_path / "results")
