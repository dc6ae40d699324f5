"""Dataset loading where a process or a server is the point: the v2.0 shuffle the same in another
process, the Hugging Face loader against a loopback Hub and its CDN (one download into the Hub
cache, a branch resolved once, offline, gated, errors as one line), huggingface_hub imported only
for the Hub, and a faulty dataset as one line through `pytest`. The loaders themselves are
tests/unit/test_datasets.py.

The Hub runs on threads of the test. The `python -c` children are real execs, for what a fresh
interpreter reads as it starts (PYTHONHASHSEED, HF_HUB_OFFLINE) and imports; `pytest` starts warm
(tests/support/warm.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals.datasets.robloxqa import HUB, load_freeform, load_multiple_choice
from evals.errors import DatasetError
from tests.support import ROOT
from tests.support.datasets import MC_RECORDS, v2_record, write_jsonl, write_parquet
from tests.support.loopback.hub_server import (
    HubServer,
    RepoFile,
    closed_port_url,
    no_retry_waits,
    one_line,
    use_hub,
)

# -- the bundled sets ------------------------------------------------------------------------


# -- local files -----------------------------------------------------------------------------


# -- v2.0-shaped records: answer + three distractors, shuffled per question ------------------------


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
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == [[q.id, list(q.choices), q.answer] for q in here]


# -- bad files fail loudly ----------------------------------------------------------------------


# -- splits ---------------------------------------------------------------------------------


# -- which evals a bare --dataset serves ------------------------------------------------------


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
    return [(r.method, r.path) for r in hub.requests] + [
        (r.method, "cdn:" + r.path) for r in hub.cdn.requests
    ]


def serve_v2(hub: HubServer, tmp_path: Path, count: int = 5, **options):
    """RobloxQA v2.0's pinned test file, an LFS file as on the Hub (the body comes from the CDN)."""
    file = HUB["robloxqa-v2"]["test"]
    body = parquet_bytes(tmp_path, [v2_record(i) for i in range(count)])
    hub.add(
        "dataset",
        file.repo,
        {file.path: RepoFile(body, lfs=True), "README.md": b"# RobloxQA"},
        commit=file.revision,
        **options,
    )
    return file


def parquet_bytes(tmp_path: Path, records: list[dict]) -> bytes:
    return write_parquet(tmp_path / "served.parquet", records).read_bytes()


def test_hub_dataset_is_downloaded_once_into_the_hub_cache(hub, tmp_path):
    file = serve_v2(hub, tmp_path)

    first, identity = load_multiple_choice("robloxqa-v2", "test")
    assert requests_made(hub)[0] == (
        "HEAD",
        f"/datasets/{file.repo}/resolve/{file.revision}/{file.path}",
    )
    assert [method for method, path in requests_made(hub)] == ["HEAD", "GET"] and requests_made(
        hub
    )[1][1].startswith("cdn:/")
    assert len(first) == 5 and all(
        q.choices["ABCD".index(q.answer)].startswith("ReplicatedStorage") for q in first
    )
    assert identity == {"name": f"hf:{file.repo}", "revision": file.revision, "file": file.path}
    snapshot = (
        tmp_path
        / "hf"
        / "hub"
        / f"datasets--{file.repo.replace('/', '--')}"
        / "snapshots"
        / file.revision
    )
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

    huggingface_hub.hf_hub_download(
        file.repo, file.path, repo_type="dataset", revision=file.revision, endpoint=hub.url
    )
    hub.clear(), hub.cdn.clear()

    questions, identity = load_multiple_choice("robloxqa-v2", "test")
    assert len(questions) == 3 and identity["revision"] == file.revision
    assert requests_made(hub) == []


def test_a_branch_revision_is_resolved_to_a_commit_once_and_recorded(hub, tmp_path):
    file = HUB["robloxqa-v1"]["test"]
    assert file.revision == "main"
    commit = "0123456789abcdef0123456789abcdef01234567"
    records = [
        {"id": f"v1-{i}", "question": f"Q{i}?", "choices": ["a", "b", "c", "d"], "answer": i % 4}
        for i in range(3)
    ]
    hub.add("dataset", file.repo, {file.path: parquet_bytes(tmp_path, records)}, commit=commit)

    questions, identity = load_multiple_choice("robloxqa-v1", "test")
    assert identity == {"name": f"hf:{file.repo}", "revision": commit, "file": file.path}
    assert [q.answer for q in questions] == ["A", "B", "C"]
    assert requests_made(hub) == [
        ("HEAD", f"/datasets/{file.repo}/resolve/main/{file.path}"),
        ("GET", f"/datasets/{file.repo}/resolve/main/{file.path}"),
    ]

    hub.clear()
    hub.repos[("dataset", file.repo)].commit = (
        "f" * 40
    )  # main moves on: the run keeps the commit it resolved
    again, identity_again = load_multiple_choice("robloxqa-v1", "test")
    assert again == questions and identity_again == identity
    assert requests_made(hub) == []


def test_offline_a_cached_dataset_still_loads_in_a_new_process(hub, tmp_path):
    """HF_HUB_OFFLINE and HF_HOME as a user sets them: read by huggingface_hub when it is imported."""
    file = serve_v2(hub, tmp_path, count=4)
    v1 = HUB["robloxqa-v1"]["test"]
    records = [
        {"id": f"v1-{i}", "question": f"Q{i}?", "choices": ["a", "b"], "answer": 0}
        for i in range(2)
    ]
    hub.add(
        "dataset",
        v1.repo,
        {v1.path: parquet_bytes(tmp_path, records)},
        commit="0123456789abcdef0123456789abcdef01234567",
    )
    load_multiple_choice("robloxqa-v2", "test")
    load_multiple_choice("robloxqa-v1", "test")
    hub.clear(), hub.cdn.clear()

    script = (
        "from evals.datasets.robloxqa import load_multiple_choice as load\n"
        "for name in ('robloxqa-v2', 'robloxqa-v1'):\n"
        "    questions, identity = load(name, 'test')\n"
        "    print(len(questions), identity['revision'])\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_ENDPOINT": hub.url,
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [
        f"4 {file.revision}",
        "2 0123456789abcdef0123456789abcdef01234567",
    ]
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
    assert one_line(error) == (
        f"hf:{file.repo}: dataset repo {file.repo} has no file {missing.path!r} at {missing.revision} "
        "(HTTP 404 EntryNotFound); check the file name, or pass a local copy to --dataset"
    )

    with pytest.raises(DatasetError) as error:
        load_freeform("robloxqa-openended-v1", "test")  # a repo the Hub does not have
    assert one_line(error) == (
        "hf:TorpedoSoftware/RobloxQA-OpenEnded-v1.0: no dataset "
        "repo TorpedoSoftware/RobloxQA-OpenEnded-v1.0 on the Hub "
        f"at {hub.url} (HTTP 401 RepoNotFound); check the name; if the repo is private, set HF_TOKEN or run "
        "`hf auth login`, or pass a local copy to --dataset"
    )

    v1 = HUB["robloxqa-v1"]["test"]
    hub.add("dataset", v1.repo, {v1.path: b"x"}, branches=("dev",))
    with pytest.raises(
        DatasetError,
        match=r"has no revision 'main' \(HTTP 404 RevisionNotFound\); name a branch, tag or commit",
    ):
        load_multiple_choice("robloxqa-v1", "test")
    assert not [p for p in (tmp_path / "hf").rglob("*") if p.is_file() and "blobs" in p.parts]


def test_a_gated_dataset_needs_hf_token_which_no_message_or_file_shows(hub, monkeypatch, tmp_path):
    file = serve_v2(hub, tmp_path, gated=True)
    with pytest.raises(DatasetError) as anonymous:
        load_multiple_choice("robloxqa-v2", "test")
    assert (
        "is gated (HTTP 401 GatedRepo); accept its terms on its Hub page, then set HF_TOKEN or run `hf auth login`"
        in one_line(anonymous)
    )

    monkeypatch.setenv("HF_TOKEN", TOKEN + "-no-access")
    with pytest.raises(DatasetError) as refused:
        load_multiple_choice("robloxqa-v2", "test")
    assert (
        "the token in use (HF_TOKEN or `hf auth login`) has no access (HTTP 403 GatedRepo)"
        in one_line(refused)
    )

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    questions, identity = load_multiple_choice("robloxqa-v2", "test")
    assert len(questions) == 5 and identity["revision"] == file.revision
    assert hub.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    assert all("authorization" not in r.headers for r in hub.cdn.requests), (
        "the token never leaves the Hub"
    )
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
    assert message.endswith(
        "is not in the Hub cache ({}); check the network, or HF_ENDPOINT, or pass a local copy to --dataset".format(
            tmp_path / "hf" / "hub"
        )
    )
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_hub_that_keeps_failing_is_one_line(hub, monkeypatch, tmp_path):
    no_retry_waits(monkeypatch)
    serve_v2(hub, tmp_path)
    hub.fail_when(lambda request: True, 503)
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "test")
    assert f"the Hub at {hub.url} answered HTTP 503 and" in one_line(error)
    assert one_line(error).endswith(
        "try again later, or check HF_ENDPOINT, or pass a local copy to --dataset"
    )
    assert len(hub.requests) > 2  # the client retries a 5xx before it gives up


def test_a_hub_cache_that_cannot_be_written_is_one_line(hub, monkeypatch, tmp_path):
    serve_v2(hub, tmp_path)
    (tmp_path / "not-a-folder").write_text("HF_HOME points at a file")
    use_hub(monkeypatch, tmp_path / "not-a-folder", hub.url)
    with pytest.raises(DatasetError) as error:
        load_multiple_choice("robloxqa-v2", "test")
    message = one_line(error)
    assert (
        f"could not keep {HUB['robloxqa-v2']['test'].repo}@" in message
        and "in the Hub cache" in message
    )
    assert message.endswith(
        "point HF_HOME (or HF_HUB_CACHE) at a writable folder, or pass a local copy to --dataset"
    )


def test_huggingface_hub_is_imported_only_for_the_hub():
    code = (
        "import sys, plugins.items, evals.evaluate, evals.metadata\n"
        "from evals.datasets.robloxqa import load_multiple_choice\n"
        "load_multiple_choice('bundled', 'test')\n"
        "print('huggingface_hub' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr


# -- through the CLI: a faulty dataset is one line when it loads, never an INTERNALERROR ---------------


def _bad_files() -> dict[str, tuple[bytes, str]]:
    """name -> (file content, the one line the user reads, {path} standing for the file)."""
    good = (json.dumps(MC_RECORDS[0]) + "\n").encode()
    latin1 = (
        '{"id": "t-2", "question": "Qu\xe9 es?", "choices": ["a", "b"], "answer": "A"}\n'.encode(
            "latin-1"
        )
    )
    many = {**MC_RECORDS[1], "choices": [f"choice {i}" for i in range(27)], "answer": 0}
    return {
        "not-utf8": (
            good + latin1,
            "{path}: line 2: not UTF-8 (byte 0xe9 at column 30); save "
            "the file as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8)",
        ),
        "more-choices-than-letters": (
            good + (json.dumps(many) + "\n").encode(),
            "{path}: record 2: 27 choices, but only 26 letters (A-Z) to label them; keep at most 26 choices",
        ),
        "answer-letter-beyond-choices": (
            good + (json.dumps({**MC_RECORDS[1], "answer": "E"}) + "\n").encode(),
            "{path}: record 2: answer 'E' is a letter beyond its choices; "
            "fix the answer or the choices (its 4 choices are A-D, indexes 0-3)",
        ),
        "answer-index-beyond-choices": (
            good + (json.dumps({**MC_RECORDS[1], "answer": 4}) + "\n").encode(),
            "{path}: record 2: answer index 4 is not one of its choices; "
            "fix the answer or the choices (its 4 choices are A-D, indexes 0-3)",
        ),
        "duplicate-ids": (
            good
            + (
                json.dumps(MC_RECORDS[1]) + "\n" + json.dumps({**MC_RECORDS[2], "id": "t-1"}) + "\n"
            ).encode(),
            "{path}: records 1 and 3 have the same id 't-1'; ids must be unique",
        ),
        "empty-id": (
            good + (json.dumps({**MC_RECORDS[1], "id": " "}) + "\n").encode(),
            "{path}: record 2: empty id; give every record a unique id",
        ),
        "nested-100000-deep": (
            good + b'{"id": "t-2", "question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
            "{path}: record 2: nested more than 100 levels deep, the limit of a file the harness reads",
        ),
        "a-line-past-the-line-limit": (
            good + b'{"id": "t-2", "question": "' + b"x" * (64 * 2**20) + b'"}\n',
            "{path}: line 2 is larger than 64 MiB, the limit of a line the harness reads; "
            "split the record or the file",
        ),
    }


@pytest.mark.parametrize("case", list(_bad_files()))
def test_a_faulty_dataset_is_one_line_through_the_cli(tmp_path, case):
    content, line = _bad_files()[case]
    path = tmp_path / "questions.jsonl"
    path.write_bytes(content)
    assert _refused(path, tmp_path) == ["ERROR: " + line.format(path=path)]


def _refused(path: Path, tmp_path: Path) -> list[str]:
    """What an eval run on the dataset at `path` says, checked to be a usage error that
    started no run."""
    from tests.support.harness import run_harness

    done = run_harness(
        "tests_evals",
        "--provider=reference",
        f"--dataset={path}",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        timeout=120,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert not (tmp_path / "runs").exists()
    return [text for text in (done.stdout + done.stderr).splitlines() if text.strip()]


@pytest.mark.parametrize("kind", ["a link to /dev/zero", "a FIFO", "a folder"])
def test_a_dataset_that_is_no_regular_file_is_one_line_through_the_cli(tmp_path, kind):
    """Refused before it is read: /dev/zero would be read until memory ran out, a FIFO until a
    writer came."""
    path = tmp_path / "questions.jsonl"
    if kind == "a link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "a FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()
    assert _refused(path, tmp_path) == [
        f"ERROR: {path}: not a regular file (a folder, a FIFO or a device); pass a .jsonl or "
        ".parquet file to --dataset"
    ]
