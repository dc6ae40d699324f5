"""Dataset loading: the bundled RobloxQA sets, local JSONL / parquet files, v2.0-shaped
records, loud errors for bad files, split selection, `--dataset` routing, and the Hugging
Face loader against a loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals.datasets import evals_served
from evals.datasets.robloxqa import HUB, load_freeform, load_multiple_choice
from evals.errors import DatasetError

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


# -- the Hugging Face loader, against a loopback server ---------------------------------------------


class Hub:
    """A tiny stand-in for the Hub's `/datasets/<repo>/resolve/<revision>/<path>` route."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hub.requests.append(self.path)
                body = hub.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def serve(self, repo: str, revision: str, path: str, body: bytes) -> None:
        self.files[f"/datasets/{repo}/resolve/{revision}/{path}"] = body


@pytest.fixture
def hub(monkeypatch, tmp_path):
    server = Hub()
    server.thread.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.server.shutdown()
    server.server.server_close()


def parquet_bytes(tmp_path: Path, records: list[dict]) -> bytes:
    return write_parquet(tmp_path / "served.parquet", records).read_bytes()


def test_hub_dataset_is_downloaded_once_then_cached(hub, tmp_path):
    file = HUB["robloxqa-v2"]["test"]
    hub.serve(file.repo, file.revision, file.path, parquet_bytes(tmp_path, [v2_record(i) for i in range(5)]))

    first, identity = load_multiple_choice("robloxqa-v2", "test")
    assert hub.requests == [f"/datasets/{file.repo}/resolve/{file.revision}/{file.path}"]
    assert len(first) == 5 and all(q.choices["ABCD".index(q.answer)].startswith("ReplicatedStorage") for q in first)
    assert identity == {"name": f"hf:{file.repo}", "revision": file.revision, "file": file.path}
    assert list((tmp_path / "cache").rglob(file.path)), "the download is cached under ROBLOX_EVALS_CACHE"

    second, _ = load_multiple_choice("robloxqa-v2", "test")
    assert second == first
    assert len(hub.requests) == 1, "a cached dataset makes no request"

    # the same cached file serves the freeform side of v2.0
    freeform, _ = load_freeform("robloxqa-v2", "test")
    assert [q.answer for q in freeform] == [f"ReplicatedStorage ({i})" for i in range(5)]
    assert len(hub.requests) == 1


def test_a_branch_revision_is_resolved_to_a_commit_once_and_recorded(hub, tmp_path):
    file = HUB["robloxqa-v1"]["test"]
    assert file.revision == "main"
    commit = "0123456789abcdef0123456789abcdef01234567"
    hub.files[f"/api/datasets/{file.repo}/revision/main"] = json.dumps({"id": file.repo, "sha": commit}).encode()
    records = [{"id": f"v1-{i}", "question": f"Q{i}?", "choices": ["a", "b", "c", "d"], "answer": i % 4} for i in range(3)]
    hub.serve(file.repo, commit, file.path, parquet_bytes(tmp_path, records))

    questions, identity = load_multiple_choice("robloxqa-v1", "test")
    again, _ = load_multiple_choice("robloxqa-v1", "test")

    assert identity == {"name": f"hf:{file.repo}", "revision": commit, "file": file.path}
    assert [q.answer for q in questions] == ["A", "B", "C"] and again == questions
    assert hub.requests == [f"/api/datasets/{file.repo}/revision/main", f"/datasets/{file.repo}/resolve/{commit}/{file.path}"]


def test_hub_404_is_a_clear_dataset_error_and_caches_nothing(hub, tmp_path):
    file = HUB["robloxqa-v2"]["train"]
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "train")
    message = str(error.value)
    assert "HTTP 404" in message and file.repo in message and "HF_ENDPOINT" in message
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]

    # once the file is there, the next load fetches it: the failure was not cached
    hub.serve(file.repo, file.revision, file.path, parquet_bytes(tmp_path, [v2_record(1)]))
    questions, _ = load_multiple_choice("robloxqa-v2", "train")
    assert len(questions) == 1 and len(hub.requests) == 2


def test_hub_unreachable_is_a_dataset_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: connection refused
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(DatasetError, match="check the network"):
        load_freeform("robloxqa-openended-v1", "test")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


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
