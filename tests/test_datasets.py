"""Dataset loading: the bundled RobloxQA sets, local JSONL / parquet files, v2.0-shaped
records, loud errors for bad files, split selection, `--dataset` routing, and the Hugging
Face loader against a loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals.datasets import evals_served
from evals.datasets.robloxqa import HUB, load_freeform, load_multiple_choice
from evals.errors import DatasetError
from tests.loopback.hub_server import HubServer, RepoFile, closed_port_url, no_retry_waits, one_line, use_hub

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "data" / "robloxqa"

MC_RECORDS = [
    {
        "id": "t-1",
        "question": "Which call sends a message from a LocalScript to the server through a RemoteEvent?",
        "choices": ["FireClient", "InvokeServer", "Fire", "FireServer"],
        "answer": "D",
    },
    {
        "id": "t-2",
        "question": "Which function returns \"Instance\" for a Part?",
        "choices": ["type", "typeof", "getmetatable", "rawequal"],
        "answer": "B",
    },
    {
        "id": "t-3",
        "question": "Where do server-only ModuleScripts belong?",
        "choices": ["ReplicatedStorage", "ServerStorage", "StarterPlayerScripts", "Workspace"],
        "answer": "B",
    },
]


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_parquet(path: Path, records: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def raw(name: str) -> list[dict]:
    return [json.loads(line) for line in (BUNDLED / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def v2_record(i: int) -> dict:
    return {
        "question": f"Roblox question number {i}: which service replicates to every client?",
        "answer": f"ReplicatedStorage ({i})",
        "incorrect_0": f"ServerStorage ({i})",
        "incorrect_1": f"ServerScriptService ({i})",
        "incorrect_2": f"StarterPack ({i})",
    }


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
    from_jsonl, jsonl_identity = load_multiple_choice(str(write_jsonl(tmp_path / "qs.jsonl", MC_RECORDS)), "test")
    from_parquet, parquet_identity = load_multiple_choice(str(write_parquet(tmp_path / "qs.parquet", MC_RECORDS)), "test")
    assert from_jsonl == from_parquet
    assert [q.id for q in from_jsonl] == ["t-1", "t-2", "t-3"]
    assert [q.answer for q in from_jsonl] == ["D", "B", "B"]
    assert from_jsonl[0].choices == ("FireClient", "InvokeServer", "Fire", "FireServer")
    assert jsonl_identity["name"] == "qs.jsonl" and parquet_identity["name"] == "qs.parquet"


def test_freeform_jsonl_and_parquet_load_the_same_questions(tmp_path):
    records = [
        {"id": "f-1", "question": "What does task.wait() return?", "answer": "The time that actually elapsed."},
        {"id": "f-2", "question": "Where do server-only modules go?", "answer": "ServerStorage."},
    ]
    a, _ = load_freeform(str(write_jsonl(tmp_path / "ff.jsonl", records)), "test")
    b, _ = load_freeform(str(write_parquet(tmp_path / "ff.parquet", records)), "test")
    assert a == b and [q.answer for q in a] == ["The time that actually elapsed.", "ServerStorage."]


def test_fallback_column_names(tmp_path):
    """prompt / options / correct_answer / question_id are read like question / choices / answer / id."""
    path = write_jsonl(tmp_path / "alt.jsonl", [{"question_id": 7, "prompt": "Q?", "options": ["x", "y", "z"], "correct_answer": "z"}])
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
        assert sorted(q.choices) == sorted([r["answer"], r["incorrect_0"], r["incorrect_1"], r["incorrect_2"]])
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


def test_v2_order_is_the_same_in_another_process(tmp_path):
    """Run caches key on the prompt, so the order must not depend on the process (hash seed)."""
    path = write_jsonl(tmp_path / "v2.jsonl", [v2_record(i) for i in range(12)])
    here, _ = load_multiple_choice(str(path), "test")
    script = (
        "import json, sys\nfrom evals.datasets.robloxqa import load_multiple_choice\n"
        "qs, _ = load_multiple_choice(sys.argv[1], 'test')\n"
        "print(json.dumps([[q.id, list(q.choices), q.answer] for q in qs]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [[q.id, list(q.choices), q.answer] for q in here]


# -- bad files fail loudly ----------------------------------------------------------------------


@pytest.mark.parametrize("missing, named", [("question", "'question'"), ("choices", "'choices'"), ("answer", "'answer'")])
def test_missing_column_names_file_record_and_column(tmp_path, missing, named):
    bad = {k: v for k, v in MC_RECORDS[2].items() if k != missing}
    path = write_jsonl(tmp_path / "qs.jsonl", [MC_RECORDS[0], MC_RECORDS[1], bad])
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    message = str(error.value)
    assert str(path) in message and "record 3" in message and "missing column" in message and named in message


def test_missing_column_in_parquet_names_the_record(tmp_path):
    records = [dict(r) for r in MC_RECORDS]
    records[1]["question"] = None  # a null cell, as parquet stores a missing value
    path = write_parquet(tmp_path / "qs.parquet", records)
    with pytest.raises(DatasetError, match=r"record 2: missing column 'question'"):
        load_multiple_choice(str(path), "test")


def test_freeform_missing_answer_names_the_record(tmp_path):
    path = write_jsonl(tmp_path / "ff.jsonl", [{"id": "f-1", "question": "Q?", "answer": "An answer."}, {"id": "f-2", "question": "Q2?"}])
    with pytest.raises(DatasetError) as error:
        load_freeform(str(path), "test")
    assert str(path) in str(error.value) and "record 2" in str(error.value) and "'answer'" in str(error.value)


def test_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps(MC_RECORDS[0]) + "\n" + json.dumps(MC_RECORDS[1]) + "\n" + '{"id": "t-3", "question": "Q?",\n')
    with pytest.raises(DatasetError) as error:
        load_multiple_choice(str(path), "test")
    assert str(path) in str(error.value) and "record 3" in str(error.value) and "not valid JSON" in str(error.value)


def test_a_line_that_is_not_an_object_is_rejected(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps(MC_RECORDS[0]) + "\n" + json.dumps(["not", "an", "object"]) + "\n")
    with pytest.raises(DatasetError, match=r"record 2: expected a JSON object"):
        load_multiple_choice(str(path), "test")


def test_wrong_type_names_the_column(tmp_path):
    path = write_jsonl(tmp_path / "qs.jsonl", [{**MC_RECORDS[0], "choices": "FireClient, FireServer"}])
    with pytest.raises(DatasetError, match=r"record 1: column 'choices' should be list or tuple, got str"):
        load_multiple_choice(str(path), "test")


def test_duplicate_ids_are_rejected(tmp_path):
    path = write_jsonl(tmp_path / "qs.jsonl", [MC_RECORDS[0], MC_RECORDS[1], {**MC_RECORDS[2], "id": "t-1"}])
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
        [{**MC_RECORDS[0], "split": "test"}, {**MC_RECORDS[1], "split": "train"}, {**bad, "split": "test"}],
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
    records = [{**MC_RECORDS[0], "split": "train"}, {**MC_RECORDS[1], "split": "test"}, MC_RECORDS[2]]  # no split: test
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

TOKEN = "hf_fake-dataset-token-never-shown"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A loopback Hub with a CDN beside it; huggingface_hub's cache in tmp_path/hf, no token."""
    with HubServer(token=TOKEN) as server:
        use_hub(monkeypatch, tmp_path / "hf", server.url)
        monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "harness-cache"))
        yield server


def requests_made(hub: HubServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in hub.requests] + [(r.method, "cdn:" + r.path) for r in hub.cdn.requests]


def serve_v2(hub: HubServer, tmp_path: Path, count: int = 5, **options):
    """RobloxQA v2.0's pinned test file, an LFS file as on the Hub (the body comes from the CDN)."""
    file = HUB["robloxqa-v2"]["test"]
    body = parquet_bytes(tmp_path, [v2_record(i) for i in range(count)])
    hub.add("dataset", file.repo, {file.path: RepoFile(body, lfs=True), "README.md": b"# RobloxQA"},
            commit=file.revision, **options)
    return file


def parquet_bytes(tmp_path: Path, records: list[dict]) -> bytes:
    return write_parquet(tmp_path / "served.parquet", records).read_bytes()


def test_hub_dataset_is_downloaded_once_into_the_hub_cache(hub, tmp_path):
    file = serve_v2(hub, tmp_path)

    first, identity = load_multiple_choice("robloxqa-v2", "test")
    assert requests_made(hub)[0] == ("HEAD", f"/datasets/{file.repo}/resolve/{file.revision}/{file.path}")
    assert [method for method, path in requests_made(hub)] == ["HEAD", "GET"] and requests_made(hub)[1][1].startswith("cdn:/")
    assert len(first) == 5 and all(q.choices["ABCD".index(q.answer)].startswith("ReplicatedStorage") for q in first)
    assert identity == {"name": f"hf:{file.repo}", "revision": file.revision, "file": file.path}
    snapshot = tmp_path / "hf" / "hub" / f"datasets--{file.repo.replace('/', '--')}" / "snapshots" / file.revision
    assert (snapshot / file.path).is_file(), "the download is in the Hub cache under HF_HOME"
    assert not (tmp_path / "harness-cache").exists(), "the harness keeps no copy of its own"

    hub.clear(), hub.cdn.clear()
    second, _ = load_multiple_choice("robloxqa-v2", "test")
    assert second == first
    # the same cached file serves the freeform side of v2.0
    freeform, _ = load_freeform("robloxqa-v2", "test")
    assert [q.answer for q in freeform] == [f"ReplicatedStorage ({i})" for i in range(5)]
    assert requests_made(hub) == [], "a cached dataset makes no request"


def test_a_dataset_another_tool_put_in_the_hub_cache_is_not_downloaded_again(hub, tmp_path):
    file = serve_v2(hub, tmp_path, count=3)
    import huggingface_hub  # what `hf download --repo-type dataset` or the datasets library would do

    huggingface_hub.hf_hub_download(file.repo, file.path, repo_type="dataset", revision=file.revision, endpoint=hub.url)
    hub.clear(), hub.cdn.clear()

    questions, identity = load_multiple_choice("robloxqa-v2", "test")
    assert len(questions) == 3 and identity["revision"] == file.revision
    assert requests_made(hub) == []


def test_a_branch_revision_is_resolved_to_a_commit_once_and_recorded(hub, tmp_path):
    file = HUB["robloxqa-v1"]["test"]
    assert file.revision == "main"
    commit = "0123456789abcdef0123456789abcdef01234567"
    records = [{"id": f"v1-{i}", "question": f"Q{i}?", "choices": ["a", "b", "c", "d"], "answer": i % 4} for i in range(3)]
    hub.add("dataset", file.repo, {file.path: parquet_bytes(tmp_path, records)}, commit=commit)

    questions, identity = load_multiple_choice("robloxqa-v1", "test")
    assert identity == {"name": f"hf:{file.repo}", "revision": commit, "file": file.path}
    assert [q.answer for q in questions] == ["A", "B", "C"]
    assert requests_made(hub) == [("HEAD", f"/datasets/{file.repo}/resolve/main/{file.path}"),
                                  ("GET", f"/datasets/{file.repo}/resolve/main/{file.path}")]

    hub.clear()
    hub.repos[("dataset", file.repo)].commit = "f" * 40  # main moves on: the run keeps the commit it resolved
    again, identity_again = load_multiple_choice("robloxqa-v1", "test")
    assert again == questions and identity_again == identity
    assert requests_made(hub) == []


def test_offline_a_cached_dataset_still_loads_in_a_new_process(hub, tmp_path):
    """HF_HUB_OFFLINE and HF_HOME as a user sets them: read by huggingface_hub when it is imported."""
    file = serve_v2(hub, tmp_path, count=4)
    v1 = HUB["robloxqa-v1"]["test"]
    records = [{"id": f"v1-{i}", "question": f"Q{i}?", "choices": ["a", "b"], "answer": 0} for i in range(2)]
    hub.add("dataset", v1.repo, {v1.path: parquet_bytes(tmp_path, records)}, commit="0123456789abcdef0123456789abcdef01234567")
    load_multiple_choice("robloxqa-v2", "test")
    load_multiple_choice("robloxqa-v1", "test")
    hub.clear(), hub.cdn.clear()

    script = ("from evals.datasets.robloxqa import load_multiple_choice as load\n"
              "for name in ('robloxqa-v2', 'robloxqa-v1'):\n"
              "    questions, identity = load(name, 'test')\n"
              "    print(len(questions), identity['revision'])\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": hub.url}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [f"4 {file.revision}", "2 0123456789abcdef0123456789abcdef01234567"]
    assert requests_made(hub) == []


def test_offline_with_nothing_cached_is_one_line_naming_hf_hub_offline(hub, monkeypatch, tmp_path):
    serve_v2(hub, tmp_path)
    use_hub(monkeypatch, tmp_path / "hf", hub.url, offline=True)
    for name in ("robloxqa-v2", "robloxqa-v1"):  # a pinned commit, a branch
        with pytest.raises(DatasetError) as error:
            load_multiple_choice(name, "test")
        message = one_line(error)
        assert "HF_HUB_OFFLINE is set" in message and "not in the Hub cache" in message
        assert "unset HF_HUB_OFFLINE" in message and HUB[name]["test"].repo in message
    assert requests_made(hub) == []


def test_hub_errors_are_one_line_naming_the_cause_and_the_fix(hub, tmp_path):
    file = serve_v2(hub, tmp_path)
    missing = HUB["robloxqa-v2"]["train"]  # not served: no such file at that commit
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "train")
    assert one_line(error) == (f"hf:{file.repo}: dataset repo {file.repo} has no file {missing.path!r} at {missing.revision} "
                               "(HTTP 404 EntryNotFound); check the file name, or pass a local copy to --dataset")

    with pytest.raises(DatasetError) as error:
        load_freeform("robloxqa-openended-v1", "test")  # a repo the Hub does not have
    assert one_line(error) == (
        f"hf:TorpedoSoftware/RobloxQA-OpenEnded-v1.0: no dataset repo TorpedoSoftware/RobloxQA-OpenEnded-v1.0 on the Hub "
        f"at {hub.url} (HTTP 401 RepoNotFound); check the name; if the repo is private, set HF_TOKEN or run "
        "`hf auth login`, or pass a local copy to --dataset")

    v1 = HUB["robloxqa-v1"]["test"]
    hub.add("dataset", v1.repo, {v1.path: b"x"}, branches=("dev",))
    with pytest.raises(DatasetError, match=r"has no revision 'main' \(HTTP 404 RevisionNotFound\); name a branch, tag or commit"):
        load_multiple_choice("robloxqa-v1", "test")
    assert not [p for p in (tmp_path / "hf").rglob("*") if p.is_file() and "blobs" in p.parts]


def test_a_gated_dataset_needs_hf_token_which_no_message_or_file_shows(hub, monkeypatch, tmp_path):
    file = serve_v2(hub, tmp_path, gated=True)
    with pytest.raises(DatasetError) as anonymous:
        load_multiple_choice("robloxqa-v2", "test")
    assert "is gated (HTTP 401 GatedRepo); accept its terms on its Hub page, then set HF_TOKEN or run `hf auth login`" in one_line(anonymous)

    monkeypatch.setenv("HF_TOKEN", TOKEN + "-no-access")
    with pytest.raises(DatasetError) as refused:
        load_multiple_choice("robloxqa-v2", "test")
    assert "the token in use (HF_TOKEN or `hf auth login`) has no access (HTTP 403 GatedRepo)" in one_line(refused)

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    questions, identity = load_multiple_choice("robloxqa-v2", "test")
    assert len(questions) == 5 and identity["revision"] == file.revision
    assert hub.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    assert all("authorization" not in r.headers for r in hub.cdn.requests), "the token never leaves the Hub"
    for message in (str(anonymous.value), str(refused.value)):
        assert TOKEN not in message and "Bearer" not in message
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]


def test_hub_unreachable_is_one_line_and_caches_nothing(monkeypatch, tmp_path):
    no_retry_waits(monkeypatch)
    down = closed_port_url()
    use_hub(monkeypatch, tmp_path / "hf", down)
    with pytest.raises(DatasetError) as error:
        load_freeform("robloxqa-openended-v1", "test")
    message = one_line(error)
    assert f"could not reach the Hub at {down} (" in message and "Connect" in message
    assert message.endswith("is not in the Hub cache ({}); check the network, or HF_ENDPOINT, or pass a local copy to --dataset"
                            .format(tmp_path / "hf" / "hub"))
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_hub_that_keeps_failing_is_one_line(hub, monkeypatch, tmp_path):
    no_retry_waits(monkeypatch)
    serve_v2(hub, tmp_path)
    hub.fail_when(lambda request: True, 503)
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "test")
    assert f"the Hub at {hub.url} answered HTTP 503 and" in one_line(error)
    assert one_line(error).endswith("try again later, or check HF_ENDPOINT, or pass a local copy to --dataset")
    assert len(hub.requests) > 2  # the client retries a 5xx before it gives up


def test_a_hub_cache_that_cannot_be_written_is_one_line(hub, monkeypatch, tmp_path):
    serve_v2(hub, tmp_path)
    (tmp_path / "not-a-folder").write_text("HF_HOME points at a file")
    use_hub(monkeypatch, tmp_path / "not-a-folder", hub.url)
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "test")
    message = one_line(error)
    assert f"could not keep {HUB['robloxqa-v2']['test'].repo}@" in message and "in the Hub cache" in message
    assert message.endswith("point HF_HOME (or HF_HUB_CACHE) at a writable folder, or pass a local copy to --dataset")


def test_huggingface_hub_is_imported_only_for_the_hub():
    code = ("import sys, plugins.items, evals.evaluate, evals.metadata\n"
            "from evals.datasets.robloxqa import load_multiple_choice\n"
            "load_multiple_choice('bundled', 'test')\n"
            "print('huggingface_hub' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


# -- through the CLI: a faulty dataset is one line when it loads, never an INTERNALERROR ---------------


def _bad_files() -> dict[str, tuple[bytes, str]]:
    """name -> (file content, the one line the user reads, {path} standing for the file)."""
    good = (json.dumps(MC_RECORDS[0]) + "\n").encode()
    latin1 = '{"id": "t-2", "question": "Qu\xe9 es?", "choices": ["a", "b"], "answer": "A"}\n'.encode("latin-1")
    many = {**MC_RECORDS[1], "choices": [f"choice {i}" for i in range(27)], "answer": 0}
    return {
        "not-utf8": (good + latin1, "{path}: line 2: not UTF-8 (byte 0xe9 at column 30); save the file as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8)"),
        "more-choices-than-letters": (good + (json.dumps(many) + "\n").encode(),
                                      "{path}: record 2: 27 choices, but only 26 letters (A-Z) to label them; keep at most 26 choices"),
        "answer-letter-beyond-choices": (good + (json.dumps({**MC_RECORDS[1], "answer": "E"}) + "\n").encode(),
                                         "{path}: record 2: answer 'E' is a letter beyond its choices; "
                                         "fix the answer or the choices (its 4 choices are A-D, indexes 0-3)"),
        "answer-index-beyond-choices": (good + (json.dumps({**MC_RECORDS[1], "answer": 4}) + "\n").encode(),
                                        "{path}: record 2: answer index 4 is not one of its choices; "
                                        "fix the answer or the choices (its 4 choices are A-D, indexes 0-3)"),
        "duplicate-ids": (good + (json.dumps(MC_RECORDS[1]) + "\n" + json.dumps({**MC_RECORDS[2], "id": "t-1"}) + "\n").encode(),
                          "{path}: records 1 and 3 have the same id 't-1'; ids must be unique"),
        "empty-id": (good + (json.dumps({**MC_RECORDS[1], "id": " "}) + "\n").encode(),
                     "{path}: record 2: empty id; give every record a unique id"),
    }


@pytest.mark.parametrize("case", list(_bad_files()))
def test_a_faulty_dataset_is_one_line_through_the_cli(tmp_path, case):
    from tests.harness import run_harness

    content, line = _bad_files()[case]
    path = tmp_path / "questions.jsonl"
    path.write_bytes(content)
    done = run_harness("tests_evals", "--provider=reference", f"--dataset={path}", run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert [text for text in (done.stdout + done.stderr).splitlines() if text.strip()] == ["ERROR: " + line.format(path=path)]
    assert not (tmp_path / "runs").exists()


def test_a_json_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "qs.json"
    path.write_bytes(b'[\n' + json.dumps(MC_RECORDS[0]).encode() + b',\n{"id": "\xff"}\n]')
    with pytest.raises(DatasetError, match=r"qs.json: line 3: not UTF-8 \(byte 0xff at column 9\)"):
        load_multiple_choice(str(path), "test")


def test_a_utf8_bom_is_read_past(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in MC_RECORDS).encode())
    assert [q.id for q in load_multiple_choice(str(path), "test")[0]] == ["t-1", "t-2", "t-3"]
