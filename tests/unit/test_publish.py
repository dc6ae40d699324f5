"""The publish rules, on result files written the way the collector writes them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evals import models_file
from evals.config import run_name
from evals.datasets.leetcode import load_problems
from evals.errors import DataFileError, DatasetError
from evals.publish import publish
from evals.results import build_result, write_result
from evals.site import rebuild_site

ENTRY = {
    "name": "M",
    "provider": "P",
    "url": "https://p",
    "releaseDate": "2026-01-02",
    "size": None,
}
TOKENS = {**ENTRY, "price": {"input": 1, "output": 2}}


def result_files(
    data: Path, *, provider="openai", api_errors=0, limit=None, model="m-1"
) -> dict[str, Path]:
    """The three result files of one run, each named by its run, as the collector writes them."""
    paths = {}
    for key, folder in models_file.RESULT_KEYS.items():
        config = {"eval": folder, "provider": provider, "model": model, "split": "test"}
        if limit:
            config["limit"] = limit
        summary = {
            "n": 40,
            "correct": 30,
            "accuracy": 0.75,
            "ci95": [0.5981, 0.8581],
            "apiErrors": api_errors,
            "tokens": {"input": 1, "output": 1},
        }
        if key == "leetcode":
            summary = {"overall": summary, "easy": summary, "medium": summary, "hard": summary}
        path = data / "results" / folder / f"{run_name(config)}.json"
        write_result(path, build_result(config, summary, [], prices=None, timing={}))
        paths[key] = path
    return paths


def published(data: Path) -> dict | None:
    return models_file.find_entry(
        models_file.load_models(data / "models.json", results=data / "results"), "M"
    )


def test_all_three_results_set_result_files(tmp_path):
    files = result_files(tmp_path)
    lines = publish(
        "M",
        files,
        metadata={**ENTRY, "price": {"input": 1, "output": 2}},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert lines == [
        "published 'M': "
        + ", ".join(
            f"{key} {files[key].name}" for key in ("freeform", "leetcode", "multipleChoice")
        )
    ]
    assert published(tmp_path)["resultFiles"]["leetcode"] == files["leetcode"].name
    assert "allowErrors" not in published(tmp_path)


def test_until_all_three_exist_models_json_is_left_alone(tmp_path):
    files = result_files(tmp_path)
    del files["leetcode"]
    lines = publish(
        "M",
        files,
        metadata={**ENTRY, "price": {"input": 1, "output": 2}},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert lines == [
        "not published yet: leetcode not finished; resultFiles is set once all three exist"
    ]
    assert not (tmp_path / "models.json").exists()  # the metadata waits in evaluate's plan


def test_an_electricity_priced_model_needs_all_five_kwh_values(tmp_path):
    metadata = {**ENTRY, "price": {"electricity": 0.3}}
    lines = publish(
        "M",
        result_files(tmp_path),
        metadata=metadata,
        kwh={"freeform": 0.1, "multipleChoice": 0.2},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert "needs all five kilowattHour values" in lines[0]
    assert published(tmp_path) is None

    lines = publish(
        "M",
        result_files(tmp_path),
        metadata=metadata,
        kwh={"freeform": 0.1, "multipleChoice": 0.2, "easy": 0.1, "medium": 0.2, "hard": 0.3},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert lines[0].startswith("published")


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"api_errors": 3}, "3 of 40 answers failed"),
        ({"limit": 5}, "--limit 5 makes it a smoke test"),
        ({"provider": "reference"}, "the reference provider answers with the gold answers"),
    ],
)
def test_refusals_leave_result_files_unset_and_say_why(tmp_path, kwargs, reason):
    lines = publish(
        "M",
        result_files(tmp_path, **kwargs),
        metadata={**ENTRY, "price": {"input": 1, "output": 2}},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert any(reason in line for line in lines), lines
    assert published(tmp_path) is None


def test_results_of_different_runs_are_not_published_together(tmp_path):
    files = result_files(tmp_path)
    files["leetcode"] = result_files(tmp_path, model="other")["leetcode"]
    lines = publish(
        "M",
        files,
        metadata={**ENTRY, "price": {"input": 1, "output": 2}},
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert "different runs" in lines[-1]


def test_the_publish_hook_refuses_a_model_not_on_the_board(tmp_path):
    with pytest.raises(
        DataFileError, match="is not in models.json: add it first with `uv run evaluate"
    ):
        publish(
            "M",
            result_files(tmp_path),
            models_path=tmp_path / "models.json",
            results_dir=tmp_path / "results",
        )
    assert not (tmp_path / "models.json").exists()


def test_a_renamed_result_file_is_not_published(tmp_path):
    files = result_files(tmp_path)
    run = files["freeform"].name
    files["freeform"] = files["freeform"].rename(files["freeform"].with_name("openai-m-1.json"))
    lines = publish(
        "M",
        files,
        metadata=TOKENS,
        models_path=tmp_path / "models.json",
        results_dir=tmp_path / "results",
    )
    assert lines == [
        f"not published: freeform: its run's file is named {run}: it was renamed, or its config edited"
    ]
    assert published(tmp_path) is None


def test_publishing_with_allow_errors_is_recorded_in_the_entry(tmp_path):
    data = tmp_path / "data"
    lines = publish(
        "M",
        result_files(data, api_errors=3),
        metadata=TOKENS,
        allow_errors=True,
        models_path=data / "models.json",
        results_dir=data / "results",
        rebuild=rebuild_site(data),
    )
    assert lines[0].startswith("published 'M'")
    assert (
        list(published(data))[-2:] == ["resultFiles", "allowErrors"]
        and published(data)["allowErrors"] is True
    )
    assert (
        '"name": "M"' in (tmp_path / "site" / "data.js").read_text()
    )  # the site takes it, by the entry's allowErrors

    # the same run published again without --allow-errors (its errors since retried): the key goes
    publish(
        "M",
        result_files(data),
        metadata=TOKENS,
        models_path=data / "models.json",
        results_dir=data / "results",
        rebuild=rebuild_site(data),
    )
    assert "allowErrors" not in published(data)


@pytest.mark.parametrize(
    "field, value, message",
    [
        (
            "price",
            {"input": math.inf, "output": 2},
            "price.input: must be a finite number >= 0, in USD per million input tokens (got Infinity)",
        ),
        (
            "size",
            10**400,
            "size: must be a byte count from 1 to 2**53 - 1, or null (got 1000000000",
        ),
        (
            "releaseDate",
            "20260801",
            'releaseDate: must be a real date written YYYY-MM-DD (got "20260801")',
        ),
        ("url", "ftp://x", 'url: must be an http(s) URL with a host (got "ftp://x")'),
    ],
    ids=["inf price", "huge size", "undashed date", "ftp url"],
)
def test_bad_metadata_is_refused_and_nothing_is_written(tmp_path, field, value, message):
    with pytest.raises(DataFileError) as error:
        publish(
            "M",
            result_files(tmp_path),
            metadata={**TOKENS, field: value},
            models_path=tmp_path / "models.json",
            results_dir=tmp_path / "results",
        )
    assert str(error.value).startswith(
        f"{tmp_path / 'models.json'}: entry 'M': {message}"
    ) and "\n" not in str(error.value)
    assert not (tmp_path / "models.json").exists()


# -- all or nothing: models.json and the site beside it ---------------------------------------


def publish_beside_site(data: Path, name: str, **price: float) -> list[str]:
    """Publish as `evaluate` does: into data/models.json, the site beside data/ rendered with it."""
    metadata = {**TOKENS, "name": name, **({"price": price} if price else {})}
    return publish(
        name,
        result_files(data, model=name.lower()),
        metadata=metadata,
        models_path=data / "models.json",
        results_dir=data / "results",
        rebuild=rebuild_site(data),
    )


def test_a_publish_whose_site_cannot_be_rendered_writes_nothing(tmp_path):
    data, site_js = tmp_path / "data", tmp_path / "site" / "data.js"
    publish_beside_site(data, "M")
    publish_beside_site(data, "N")
    before = (data / "models.json").read_bytes(), site_js.read_bytes()
    corrupt = models_file.result_path(
        published(data), "leetcode", data / "results"
    )  # another model's file
    corrupt.write_bytes(corrupt.read_bytes()[:100])

    with pytest.raises(DataFileError) as error:
        publish_beside_site(data, "N", input=3, output=4)

    assert str(error.value).startswith(
        f"{corrupt}: truncated or corrupt result file"
    ) and "\n" not in str(error.value)
    assert ((data / "models.json").read_bytes(), site_js.read_bytes()) == before


def test_a_site_that_cannot_be_written_leaves_models_json_as_it_was(tmp_path):
    data = tmp_path / "data"
    publish(
        "M",
        result_files(data, model="m"),
        metadata=TOKENS,
        models_path=data / "models.json",
        results_dir=data / "results",
    )
    before = (data / "models.json").read_bytes()
    (tmp_path / "site").write_text("a file where the site folder should be")

    with pytest.raises(OSError):
        publish_beside_site(data, "N")

    assert (data / "models.json").read_bytes() == before


# -- the LeetCode loader ------------------------------------------------------------------------


PROBLEM = {
    "task_id": "p-1",
    "difficulty": "Medium",
    "problem_description": "d",
    "starter_code": "s",
    "entry_point": "f",
    "test": "t",
    "solution": "x",
}


@pytest.mark.parametrize("writer", ["jsonl", "parquet"])
def test_a_local_leetcode_file_loads_by_column_name(tmp_path, writer):
    path = tmp_path / f"lc.{writer}"
    if writer == "jsonl":
        path.write_text(json.dumps(PROBLEM) + "\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([PROBLEM]), path)
    (problem,), identity = load_problems(str(path), "test")
    assert (problem.id, problem.difficulty, problem.entry_point, problem.solution) == (
        "p-1",
        "medium",
        "f",
        "x",
    )
    assert identity["name"] == path.name


def test_a_leetcode_record_missing_a_column_fails_loudly(tmp_path):
    path = tmp_path / "lc.jsonl"
    path.write_text(json.dumps({k: v for k, v in PROBLEM.items() if k != "test"}) + "\n")
    with pytest.raises(DatasetError, match=r"lc.jsonl: record 1: missing column 'test'"):
        load_problems(str(path), "test")


def test_an_unknown_difficulty_is_named(tmp_path):
    path = tmp_path / "lc.jsonl"
    path.write_text(json.dumps({**PROBLEM, "difficulty": "Brutal"}) + "\n")
    with pytest.raises(DatasetError, match="difficulty 'brutal' is not one of Easy, Medium, Hard"):
        load_problems(str(path), "test")


def test_the_result_files_a_child_wrote_are_finished_as_written_and_one_replaced_since_is_rescored(
    tmp_path, monkeypatch
):
    """What evaluate's pytest runs note they wrote (`note_written`, one file per process in the
    folder WRITTEN_NOTES names) reaches `finished_results`: a file still as written is taken
    without rescoring, one written over since is compared with its run folder again."""
    from evals import publish, verify

    notes = tmp_path / "notes"
    notes.mkdir()
    kept, replaced = tmp_path / "kept.json", tmp_path / "replaced.json"
    for path in (kept, replaced):
        path.write_text("{}")
    monkeypatch.setenv(publish.WRITTEN_NOTES, str(notes))
    for path in (kept, replaced):
        publish.note_written(path, publish.stamp(path))
    publish.note_written(tmp_path / "never.json", None)  # nothing to note: nothing was written
    (notes / "garbled.jsonl").write_text('{"path": "x"}\nnot json\n')
    replaced.unlink()
    replaced.write_text("{}")  # another file since (another inode)

    compared: list[str] = []
    monkeypatch.setattr(
        verify, "compare", lambda path, **kw: compared.append(path.name) or ("ok", "")
    )
    written = publish.written_notes(notes)
    finished, lines = publish.finished_results(
        {"a": kept, "b": replaced}, run_root=tmp_path, written=written
    )

    assert set(written) == {kept.resolve(), replaced.resolve()}
    assert finished == {"a": kept, "b": replaced} and lines == []
    assert compared == ["replaced.json"]


def test_nothing_is_noted_without_a_command_that_asked(tmp_path, monkeypatch):
    from evals import publish

    monkeypatch.delenv(publish.WRITTEN_NOTES, raising=False)
    (tmp_path / "r.json").write_text("{}")
    publish.note_written(tmp_path / "r.json", publish.stamp(tmp_path / "r.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_notes_file_that_is_no_file_is_left_out_not_a_crash(tmp_path):
    """A notes file past the read limits (a FIFO here) raised an error naming no file; it is
    left out, as an unreadable line is, and its result files are rescored."""
    import os

    from evals.publish import written_notes

    os.mkfifo(tmp_path / "1.jsonl")
    (tmp_path / "2.jsonl").write_text('{"path": "/r.json", "stamp": [1, 2, 3, 4]}\n')
    assert written_notes(tmp_path) == {Path("/r.json"): (1, 2, 3, 4)}
