"""Dataset loading, in process: the bundled RobloxQA sets, local JSONL / parquet files, v2.0-shaped
records shuffled per question, loud errors for bad files, split selection, and which evals a bare
`--dataset` serves. The Hugging Face loader and the CLI are tests/e2e/test_datasets.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals.datasets import evals_served, find_kept, keep, kept_folder, source_of
from evals.datasets.robloxqa import load_freeform, load_multiple_choice
from evals.errors import DataFileError, DatasetError
from evals.identity import identity_from_config
from tests.support import ROOT
from tests.support.datasets import MC_RECORDS, v2_record, write_jsonl, write_parquet

BUNDLED = ROOT / "data" / "robloxqa"


def raw(name: str) -> list[dict]:
    return [
        json.loads(line)
        for line in (BUNDLED / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


# -- the bundled sets ------------------------------------------------------------------------


@pytest.mark.parametrize("split", ["test", "train"])
def test_bundled_sets_load_their_split_with_unique_ids(split):
    mc, mc_identity = load_multiple_choice("bundled", split)
    ff, ff_identity = load_freeform("bundled", split)
    for questions, name in ((mc, "multiple_choice.jsonl"), (ff, "freeform.jsonl")):
        expected = [r["id"] for r in raw(name) if r["split"] == split]
        assert [q.id for q in questions] == expected
        assert len(set(expected)) == len(expected) > 0
    assert mc_identity["name"] == ff_identity["name"] == "bundled"
    assert all(len(q.choices) == 4 and q.answer in "ABCD" for q in mc)
    assert all(q.question.strip() and len(q.answer) > 2 for q in ff)


def test_bundled_answers_match_the_file():
    by_id = {r["id"]: r for r in raw("multiple_choice.jsonl")}
    for q in load_multiple_choice("bundled", "test")[0]:
        assert q.answer == by_id[q.id]["answer"]
        assert list(q.choices) == by_id[q.id]["choices"]


def test_identity_follows_the_file_content(tmp_path):
    """The dataset identity carries the file's digest: an edited file is a different run."""
    path = write_jsonl(tmp_path / "qs.jsonl", MC_RECORDS)
    _, before = load_multiple_choice(str(path), "test")
    _, again = load_multiple_choice(str(path), "test")
    write_jsonl(path, [MC_RECORDS[0], {**MC_RECORDS[1], "answer": "A"}, MC_RECORDS[2]])
    _, after = load_multiple_choice(str(path), "test")
    assert before == again and before["name"] == after["name"] == "qs.jsonl"
    assert before["sha256"] != after["sha256"]


# -- local files -----------------------------------------------------------------------------


def test_jsonl_and_parquet_with_the_same_columns_load_the_same_questions(tmp_path):
    from_jsonl, jsonl_identity = load_multiple_choice(
        str(write_jsonl(tmp_path / "qs.jsonl", MC_RECORDS)), "test"
    )
    from_parquet, parquet_identity = load_multiple_choice(
        str(write_parquet(tmp_path / "qs.parquet", MC_RECORDS)), "test"
    )
    assert from_jsonl == from_parquet
    assert [q.id for q in from_jsonl] == ["t-1", "t-2", "t-3"]
    assert [q.answer for q in from_jsonl] == ["D", "B", "B"]
    assert from_jsonl[0].choices == ("FireClient", "InvokeServer", "Fire", "FireServer")
    assert jsonl_identity["name"] == "qs.jsonl" and parquet_identity["name"] == "qs.parquet"


def test_freeform_jsonl_and_parquet_load_the_same_questions(tmp_path):
    records = [
        {
            "id": "f-1",
            "question": "What does task.wait() return?",
            "answer": "The time that actually elapsed.",
        },
        {"id": "f-2", "question": "Where do server-only modules go?", "answer": "ServerStorage."},
    ]
    a, _ = load_freeform(str(write_jsonl(tmp_path / "ff.jsonl", records)), "test")
    b, _ = load_freeform(str(write_parquet(tmp_path / "ff.parquet", records)), "test")
    assert a == b and [q.answer for q in a] == ["The time that actually elapsed.", "ServerStorage."]


def test_fallback_column_names(tmp_path):
    """prompt / options / correct_answer / question_id are read like question / choices / answer / id."""
    path = write_jsonl(
        tmp_path / "alt.jsonl",
        [{"question_id": 7, "prompt": "Q?", "options": ["x", "y", "z"], "correct_answer": "z"}],
    )
    (q,), _ = load_multiple_choice(str(path), "test")
    assert (q.id, q.question, q.choices, q.answer) == ("7", "Q?", ("x", "y", "z"), "C")


def test_rows_without_id_get_a_stable_id_from_the_question(tmp_path):
    records = [{k: v for k, v in r.items() if k != "id"} for r in MC_RECORDS]
    first, _ = load_multiple_choice(str(write_jsonl(tmp_path / "a.jsonl", records)), "test")
    second, _ = load_multiple_choice(str(write_jsonl(tmp_path / "b.jsonl", records[::-1])), "test")
    assert len({q.id for q in first}) == 3
    assert {q.id: q for q in first} == {q.id: q for q in second}


@pytest.mark.parametrize(
    "answer, letter",
    [
        (3, "D"),  # index
        (0, "A"),
        ("D", "D"),  # letter
        ("d", "D"),
        ("(D)", "D"),
        ("FireServer", "D"),  # the choice's text
        ("Fire", "C"),
    ],
)
def test_answer_as_index_letter_or_text(tmp_path, answer, letter):
    path = write_jsonl(tmp_path / "qs.jsonl", [{**MC_RECORDS[0], "answer": answer}])
    (q,), _ = load_multiple_choice(str(path), "test")
    assert q.answer == letter


@pytest.mark.parametrize("answer", [4, -1, "E", "FireAllClients"])
def test_answer_that_is_no_choice_fails_naming_the_record(tmp_path, answer):
    path = write_jsonl(tmp_path / "qs.jsonl", [MC_RECORDS[1], {**MC_RECORDS[0], "answer": answer}])
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    assert str(path) in str(error.value) and "record 2" in str(error.value)


# -- v2.0-shaped records: answer + three distractors, shuffled per question ------------------------


def test_v2_records_are_shuffled_deterministically(tmp_path):
    records = [v2_record(i) for i in range(40)]
    path = write_jsonl(tmp_path / "v2.jsonl", records)
    first, _ = load_multiple_choice(str(path), "test")
    second, _ = load_multiple_choice(str(path), "test")
    assert first == second
    for q, r in zip(first, records):
        assert sorted(q.choices) == sorted(
            [r["answer"], r["incorrect_0"], r["incorrect_1"], r["incorrect_2"]]
        )
        assert q.choices["ABCD".index(q.answer)] == r["answer"]
    letters = Counter(q.answer for q in first)
    assert set(letters) == set("ABCD"), letters
    assert max(letters.values()) <= 20, letters  # not stuck on one position


def test_v2_order_follows_the_question_not_the_file(tmp_path):
    """The same question keeps its order in another file, in another position, and in parquet."""
    records = [v2_record(i) for i in range(8)]
    a, _ = load_multiple_choice(str(write_jsonl(tmp_path / "a.jsonl", records)), "test")
    b, _ = load_multiple_choice(str(write_parquet(tmp_path / "b.parquet", records[::-1])), "test")
    assert {q.id: q for q in a} == {q.id: q for q in b}


# -- bad files fail loudly ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "missing, named", [("question", "'question'"), ("choices", "'choices'"), ("answer", "'answer'")]
)
def test_missing_column_names_file_record_and_column(tmp_path, missing, named):
    bad = {k: v for k, v in MC_RECORDS[2].items() if k != missing}
    path = write_jsonl(tmp_path / "qs.jsonl", [MC_RECORDS[0], MC_RECORDS[1], bad])
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    message = str(error.value)
    assert (
        str(path) in message
        and "record 3" in message
        and "missing column" in message
        and named in message
    )


def test_missing_column_in_parquet_names_the_record(tmp_path):
    records = [dict(r) for r in MC_RECORDS]
    records[1]["question"] = None  # a null cell, as parquet stores a missing value
    path = write_parquet(tmp_path / "qs.parquet", records)
    with pytest.raises(DatasetError, match=r"record 2: missing column 'question'"):
        load_multiple_choice(str(path), "test")


def test_freeform_missing_answer_names_the_record(tmp_path):
    path = write_jsonl(
        tmp_path / "ff.jsonl",
        [{"id": "f-1", "question": "Q?", "answer": "An answer."}, {"id": "f-2", "question": "Q2?"}],
    )
    with pytest.raises(DatasetError) as error:
        load_freeform(str(path), "test")
    assert (
        str(path) in str(error.value)
        and "record 2" in str(error.value)
        and "'answer'" in str(error.value)
    )


def test_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_text(
        json.dumps(MC_RECORDS[0])
        + "\n"
        + json.dumps(MC_RECORDS[1])
        + "\n"
        + '{"id": "t-3", "question": "Q?",\n'
    )
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    assert (
        str(path) in str(error.value)
        and "record 3" in str(error.value)
        and "not valid JSON" in str(error.value)
    )


def test_a_line_that_is_not_an_object_is_rejected(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps(MC_RECORDS[0]) + "\n" + json.dumps(["not", "an", "object"]) + "\n")
    with pytest.raises(DatasetError, match=r"record 2: expected a JSON object"):
        load_multiple_choice(str(path), "test")


def test_wrong_type_names_the_column(tmp_path):
    path = write_jsonl(
        tmp_path / "qs.jsonl", [{**MC_RECORDS[0], "choices": "FireClient, FireServer"}]
    )
    with pytest.raises(
        DatasetError, match=r"record 1: column 'choices' should be list or tuple, got str"
    ):
        load_multiple_choice(str(path), "test")


def test_duplicate_ids_are_rejected(tmp_path):
    path = write_jsonl(
        tmp_path / "qs.jsonl", [MC_RECORDS[0], MC_RECORDS[1], {**MC_RECORDS[2], "id": "t-1"}]
    )
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    assert str(error.value) == f"{path}: records 1 and 3 have the same id 't-1'; ids must be unique"


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_multiple_choice(str(tmp_path / "nope.jsonl"), "test")
    csv = tmp_path / "qs.csv"
    csv.write_text("id,question\n")
    with pytest.raises(DatasetError, match="unknown dataset format '.csv'"):
        load_multiple_choice(str(csv), "test")


def test_damaged_parquet_is_a_dataset_error(tmp_path):
    path = tmp_path / "qs.parquet"
    path.write_bytes(b"PAR1 this is not really parquet")
    with pytest.raises(DatasetError, match="not a readable parquet file"):
        load_multiple_choice(str(path), "test")


def test_record_number_counts_rows_of_the_other_split(tmp_path):
    bad = {k: v for k, v in MC_RECORDS[2].items() if k != "question"}
    path = write_jsonl(
        tmp_path / "qs.jsonl",
        [
            {**MC_RECORDS[0], "split": "test"},
            {**MC_RECORDS[1], "split": "train"},
            {**bad, "split": "test"},
        ],
    )
    with pytest.raises(DatasetError, match=r"record 3: missing column"):
        load_multiple_choice(str(path), "test")


def test_empty_file_fails_loudly(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(DatasetError):
        load_multiple_choice(str(path), "test")


# -- splits ---------------------------------------------------------------------------------


def test_split_column_picks_the_rows_of_the_split(tmp_path):
    records = [
        {**MC_RECORDS[0], "split": "train"},
        {**MC_RECORDS[1], "split": "test"},
        MC_RECORDS[2],
    ]  # no split: test
    path = write_jsonl(tmp_path / "qs.jsonl", records)
    assert [q.id for q in load_multiple_choice(str(path), "train")[0]] == ["t-1"]
    assert [q.id for q in load_multiple_choice(str(path), "test")[0]] == ["t-2", "t-3"]


def test_bundled_train_split_is_disjoint_from_test():
    test = {q.id for q in load_multiple_choice("bundled", "test")[0]}
    train = {q.id for q in load_multiple_choice("bundled", "train")[0]}
    assert train and test and not train & test
    assert train | test == {r["id"] for r in raw("multiple_choice.jsonl")}


def test_published_set_without_the_split_names_the_fix():
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v1", "train")
    assert "'train'" in str(error.value) and "--split test" in str(error.value)


# -- which evals a bare --dataset serves ------------------------------------------------------


@pytest.mark.parametrize(
    "record, evals",
    [
        (MC_RECORDS[0], {"multiple_choice"}),
        ({"id": "x", "question": "Q?", "options": ["a", "b"], "answer": 0}, {"multiple_choice"}),
        (v2_record(0), {"multiple_choice", "freeform"}),
        ({"id": "f", "question": "Q?", "answer": "A reference answer."}, {"freeform"}),
        ({"id": "l", "prompt": "Write a function", "test": "return true"}, {"leetcode"}),
    ],
    ids=["choices", "options", "v2-shape", "freeform", "leetcode"],
)
def test_evals_served_by_columns(tmp_path, record, evals):
    assert evals_served(str(write_jsonl(tmp_path / "d.jsonl", [record]))) == evals
    assert evals_served(str(write_parquet(tmp_path / "d.parquet", [record]))) == evals


def test_evals_served_by_name():
    assert evals_served("robloxqa-v1") == {"multiple_choice"}
    assert evals_served("robloxqa-openended-v1") == {"freeform"}
    assert evals_served("robloxqa-v2") == {"multiple_choice", "freeform"}
    assert "multiple_choice" in evals_served("bundled") and "freeform" in evals_served("bundled")


def test_evals_served_missing_file_fails(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset file"):
        evals_served(str(tmp_path / "missing.jsonl"))


# -- the Hugging Face loader: huggingface_hub against a loopback Hub -----------------------------


# -- through the CLI: a faulty dataset is one line when it loads, never an INTERNALERROR ---------------


def test_a_json_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "qs.json"
    path.write_bytes(b"[\n" + json.dumps(MC_RECORDS[0]).encode() + b',\n{"id": "\xff"}\n]')
    with pytest.raises(DatasetError, match=r"qs.json: line 3: not UTF-8 \(byte 0xff at column 9\)"):
        load_multiple_choice(str(path), "test")


def test_a_utf8_bom_is_read_past(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in MC_RECORDS).encode())
    assert [q.id for q in load_multiple_choice(str(path), "test")[0]] == ["t-1", "t-2", "t-3"]


# -- a local file's copy kept in the data folder, found by its digest (issue 30.1) -----------------


def kept_run(tmp_path: Path) -> tuple[dict, Path, Path]:
    """A run's dataset identity on a local file, the file, and the data folder's copies."""
    own = write_jsonl(tmp_path / "mc3.jsonl", MC_RECORDS)
    _, identity = load_multiple_choice(str(own), "test")
    return identity, own, kept_folder(tmp_path / "data")


def test_a_kept_copy_is_found_by_its_digest_and_loads_as_the_run_recorded_it(tmp_path):
    identity, own, folder = kept_run(tmp_path)
    assert source_of(identity, folder) is None  # nothing kept yet

    copied = keep(identity, own, folder)
    own.unlink()

    assert copied == folder / identity["sha256"] / "mc3.jsonl"
    assert source_of(identity, folder) == str(copied)
    assert load_multiple_choice(str(copied), "test")[1] == identity
    assert keep(identity, copied, folder) is None  # already there: reused


def test_a_file_of_the_right_name_with_other_bytes_is_never_taken_for_the_copy(tmp_path):
    identity, own, folder = kept_run(tmp_path)
    forged = folder / identity["sha256"] / identity["name"]
    forged.parent.mkdir(parents=True)
    write_jsonl(forged, [{**MC_RECORDS[0], "answer": "A"}, *MC_RECORDS[1:]])

    assert source_of(identity, folder) is None
    config = {"eval": "multiple_choice", "provider": "reference", "dataset": identity}
    with pytest.raises(
        DatasetError, match="'mc3.jsonl', which cannot be found again; pass it with --dataset"
    ):
        identity_from_config(config, datasets=folder)
    assert keep(identity, own, folder) == forged  # publishing writes the right bytes over it
    assert source_of(identity, folder) == str(forged)


def test_a_file_that_is_not_the_runs_is_not_kept(tmp_path):
    identity, own, folder = kept_run(tmp_path)
    write_jsonl(own, MC_RECORDS[:2])
    with pytest.raises(DatasetError, match="is not the dataset file the run used"):
        keep(identity, own, folder)
    assert not folder.exists()


def test_a_kept_folder_that_leads_out_of_the_data_folder_is_neither_read_nor_written(tmp_path):
    identity, own, folder = kept_run(tmp_path)
    outside = tmp_path / "outside"
    (outside / identity["sha256"]).mkdir(parents=True)
    (outside / identity["sha256"] / identity["name"]).write_bytes(own.read_bytes())
    folder.parent.mkdir()
    folder.symlink_to(outside)

    assert find_kept(identity, folder) is None
    with pytest.raises(DataFileError, match="leads out of .* \\(a symlink\\)"):
        keep(identity, own, folder)


@pytest.mark.parametrize("name", ["../mc3.jsonl", "a/mc3.jsonl", "..", ""])
def test_a_dataset_name_with_a_path_in_it_names_no_copy(tmp_path, name):
    identity, _, folder = kept_run(tmp_path)
    assert find_kept({**identity, "name": name}, folder) is None
