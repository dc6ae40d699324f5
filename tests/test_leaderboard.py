"""The leaderboard flow end to end, against loopback providers: `evaluate` a new model, kill
it, resume it, publish it, verify it offline; every refusal; registry validation; concurrent
publishers."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals import registry
from evals.errors import RegistryError
from tests.harness import ROOT, Student, harness_env
from tests.loopback import OpenAIServer

NAME = "Student 1"
META = ["--provider-name=Loopback Labs", "--url=https://example.com/student", "--release-date=2026-11-01", "--price-input=1.25", "--price-output=10"]


def evaluate_command(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "evals.evaluate", *args, f"--data-dir={data}"]


def evaluate(data: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(evaluate_command(data, *args), cwd=ROOT, env=harness_env(), capture_output=True, text=True, timeout=timeout)


def verify(data: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-p", "tests.no_network", "--verify-published", f"--results-dir={data / 'results'}", f"--run-dir={data / 'runs'}", *args]
    return subprocess.run(command, cwd=ROOT, env=harness_env(), capture_output=True, text=True, timeout=300)


def model_flags(server) -> list[str]:
    return ["--provider=openai", "--model=student-1", f"--base-url={server.url}/v1", f"--judge=live:judge-a@{server.url}/v1", f"--judge=live:judge-b@{server.url}/v1"]


def entry(data: Path, name: str = NAME) -> dict | None:
    return registry.find_entry(registry.load_models(data / "models.json", results=data / "results"), name)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A new model evaluated (killed once mid-way, then resumed) and published."""
    data = tmp_path_factory.mktemp("board") / "data"
    student = Student()
    with OpenAIServer(student, latency=0.05) as server:
        first = subprocess.Popen(evaluate_command(data, NAME, *model_flags(server), *META, "--evals=mc"), cwd=ROOT, env=harness_env(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        cached = data / "runs"
        # Killed once answers are cached, whatever the machine's load (requests alone can all be in flight).
        while (len(server.requests) < 10 or not any(cached.glob("multiple_choice/*/calls/*/candidate.json"))) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        finished = {p.parent.name for p in (data / "runs").glob("multiple_choice/*/calls/*/candidate.json")}
        killed_at = len(server.requests)
        done = evaluate(data, NAME, *model_flags(server), *META)
        asked = [q for r in server.requests[killed_at:] if (q := student.question_of(r.body))]
    return data, done, finished, asked


def test_a_new_model_is_evaluated_published_and_the_site_rebuilt(board):
    data, done, *_ = board
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    published = entry(data)
    assert published["provider"] == "Loopback Labs" and published["price"] == {"input": 1.25, "output": 10}
    assert list(published) == ["name", "provider", "url", "releaseDate", "size", "price", "resultFiles"]
    assert set(published["resultFiles"]) == {"freeform", "multipleChoice", "leetcode"}
    assert f"published {NAME!r}" in done.stdout
    text = (data / "models.json").read_text()
    assert text.endswith("\n") and text.startswith('[\n  {\n    "name": "Student 1"')
    assert '"Student 1"' in (data.parent / "site" / "data.js").read_text()  # rebuilt beside the data


def test_the_resumed_run_did_not_ask_finished_items_again(board):
    _, _, finished, asked = board
    assert finished, "the kill came before any answer was cached"
    assert not finished & set(asked), "an answer cached before the kill was asked again"
    assert len(asked) == len(set(asked)), "an item was asked twice"


def test_a_bare_rerun_reproduces_the_recorded_run_without_asking_anything(board):
    data = board[0]
    plan = evaluate(data, NAME, "--dry-run")
    folders = [Path(line.split("run folder", 1)[1].strip()) for line in plan.stdout.splitlines() if "run folder" in line]
    assert len(folders) == 3 and all(f.is_dir() for f in folders), plan.stdout

    # The model's server is gone: everything must come from the run folders.
    done = evaluate(data, NAME)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"published {NAME!r}" in done.stdout


def test_status_shows_each_eval_finished(board):
    data = board[0]
    done = evaluate(data, NAME, "--status")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "answered" in line]
    assert len(lines) == 3 and all("0 remaining; published" in line for line in lines), done.stdout


def test_verify_reproduces_every_published_run_with_the_network_blocked(board):
    data, *_ = board
    done = verify(data)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "3 passed" in done.stdout


def test_verify_catches_a_tampered_result_file(board, tmp_path):
    data = _copy(board[0], tmp_path)
    path = registry.result_path(entry(data), "multipleChoice", data / "results")
    result = json.loads(path.read_text())
    result["summary"]["correct"] += 1
    path.write_text(json.dumps(result, indent=2))

    done = verify(data, "-k", "multipleChoice")

    assert done.returncode == 1
    assert '"correct"' in done.stdout and "1 failed" in done.stdout


def test_verify_catches_a_tampered_cache_record(board, tmp_path):
    data = _copy(board[0], tmp_path)
    (record,) = (data / "runs" / "multiple_choice").glob("*/calls/mc-002/candidate.json")
    cached = json.loads(record.read_text())
    cached["response"]["text"] = "Answer: " + {"A": "B", "B": "C", "C": "D", "D": "A"}[cached["response"]["text"][-1]]
    record.write_text(json.dumps(cached))

    done = verify(data, "-k", "multipleChoice")

    assert done.returncode == 1 and "mc-002" in done.stdout


def test_verify_fails_clearly_when_a_run_folder_is_missing(board, tmp_path):
    data = _copy(board[0], tmp_path)
    for folder in (data / "runs" / "leetcode").iterdir():
        shutil.rmtree(folder)

    done = verify(data, "-k", "leetcode")

    assert done.returncode == 1 and "run folder" in done.stdout and "is missing" in done.stdout


def _copy(data: Path, tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(data, target, ignore=shutil.ignore_patterns("locks"))
    return target


# -- refusals ------------------------------------------------------------------------------------


def test_smoke_tests_and_reference_runs_leave_models_json_alone(tmp_path):
    data = tmp_path / "data"
    done = evaluate(data, "Gold", "--provider=reference", "--model=gold", "--evals=mc")
    assert "models.json left alone" in done.stdout
    assert not (data / "models.json").exists()


def test_a_new_model_without_metadata_is_one_error_listing_what_is_missing(tmp_path, monkeypatch):
    with OpenAIServer(lambda r: "x") as server:
        env = harness_env(OPENROUTER_API_BASE=f"{server.url}/v1")
        done = subprocess.run(evaluate_command(tmp_path / "data", "Nobody", "--provider=openai", "--model=nobody-1", f"--base-url={server.url}/v1", "--evals=mc"),
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "needs --provider-name, --url, --release-date, --price-input/--price-output or --price-electricity" in done.stderr


def test_results_over_the_error_gate_are_not_published(tmp_path):
    student = Student()
    with OpenAIServer(student) as server:
        failing = [q for q in list(student.mc)[:4]]
        server.fail_when(lambda r: any(text in r.body["messages"][-1]["content"] for text in failing), 400)
        done = evaluate(tmp_path / "data", "Gated", *model_flags(server), *META, "--evals=mc")
    assert "not published: multipleChoice: 4 of 40 answers failed" in done.stdout
    assert entry(tmp_path / "data", "Gated").get("resultFiles") is None  # metadata only


# -- the registry ----------------------------------------------------------------------------------


GOOD = {"name": "M", "provider": "P", "url": "https://p", "releaseDate": "2026-01-02", "size": None, "price": {"input": 1, "output": 2}}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"releaseDate": "2026-13-01"}, "releaseDate must be a real date written YYYY-MM-DD, not '2026-13-01'"),
        ({"releaseDate": "2026-W31-1"}, "releaseDate must be a real date written YYYY-MM-DD, not '2026-W31-1'"),
        ({"url": "https://"}, "url must be an http(s) URL with a host, not 'https://'"),
        ({"url": "https://exa mple.com"}, "url must be an http(s) URL with a host, not 'https://exa mple.com'"),
        ({"size": "big"}, "size must be a byte count from 1 to 2**53 - 1, or null, not 'big'"),
        ({"size": 2**53}, "size must be a byte count from 1 to 2**53 - 1, or null, not 9007199254740992"),
        ({"price": {"input": 1}}, "price must be"),
        ({"price": {"input": 1, "output": 2, "electricity": 3}}, "price must be"),
        ({"provider": 7}, "provider must be a non-empty string, not 7"),
        ({"kilowattHour": {"freeform": "a lot"}}, "kilowattHour.freeform must be a finite number of kWh >= 0, not 'a lot'"),
        ({"resultFiles": {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}}, "resultFiles.freeform names a.json, which is not in"),
        ({"resultFiles": {"freeform": "../a.json", "multipleChoice": "b.json", "leetcode": "c.json"}}, "resultFiles.freeform must be a file name in results/freeform/, not '../a.json'"),
    ],
)
def test_an_invalid_entry_is_an_error_naming_the_entry_and_field(tmp_path, change, message):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{**GOOD, **change}]))
    with pytest.raises(RegistryError, match=re.escape(f"{path}: 'M': {message}")):
        registry.load_models(path, results=tmp_path / "results")


def test_check_entry_checks_metadata_before_any_result_file_exists(tmp_path):
    """What `evaluate` can call before any paid request: the metadata alone, one line."""
    files = {"freeform": "a.json", "multipleChoice": "b.json", "leetcode": "c.json"}
    registry.check_entry({**GOOD, "resultFiles": files})
    with pytest.raises(RegistryError, match="names a.json, which is not in"):
        registry.check_entry({**GOOD, "resultFiles": files}, results=tmp_path)
    with pytest.raises(RegistryError) as error:
        registry.check_entry({**GOOD, "price": {"input": float("inf"), "output": 2}})
    assert str(error.value) == "'M': price.input must be a finite number >= 0, not inf"


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


def _publish_many(path: str, prefix: str) -> None:
    for i in range(15):
        registry.update_entry(f"{prefix}{i}", lambda e, i=i: {**GOOD, "name": f"{prefix}{i}"}, Path(path), results=Path(path).parent)


def test_concurrent_publishers_never_lose_an_update(tmp_path):
    path = tmp_path / "models.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_publish_many, args=(str(path), prefix)) for prefix in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    names = {m["name"] for m in registry.load_models(path, results=tmp_path)}
    assert names == {f"{p}{i}" for p in "ab" for i in range(15)}


def test_a_new_models_missing_metadata_is_looked_up_and_printed(tmp_path):
    """Only --model and --provider: OpenRouter's models API fills in the rest."""
    from tests.loopback import LoopbackServer, Reply

    openrouter_models = {"data": [{
        "id": "openai/student-1", "name": "OpenAI: Student 1", "created": 1793491200,
        "pricing": {"prompt": "0.00000125", "completion": "0.00001"}, "hugging_face_id": None,
    }]}
    with LoopbackServer(lambda request: Reply(200, openrouter_models)) as openrouter, OpenAIServer(Student()) as server:
        env = harness_env(OPENROUTER_API_BASE=f"{openrouter.url}/api/v1")
        done = subprocess.run(
            evaluate_command(tmp_path / "data", "Looked Up", *model_flags(server), "--limit=2", "--no-build"),
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
        no_build_requests = len(openrouter.requests)
        done = subprocess.run(
            evaluate_command(tmp_path / "data", "Looked Up", *model_flags(server), "--evals=mc"),
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
    assert no_build_requests == 0  # a smoke test looks nothing up
    assert "looked up provider: OpenAI" in done.stdout and "looked up releaseDate: 2026-11-01" in done.stdout
    assert "looked up price: {'input': 1.25, 'output': 10}" in done.stdout
    new = entry(tmp_path / "data", "Looked Up")
    assert new["url"] == "https://openrouter.ai/openai/student-1" and "resultFiles" not in new


def test_parallel_runs_prefix_every_line_with_its_eval(tmp_path):
    done = evaluate(tmp_path / "data", "Gold", "--provider=reference", "--model=gold", "--limit=2", "--parallel")

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    for tag in ("ff", "mc", "lc"):
        assert any(line.startswith(f"[{tag}] ") and "passed" in line for line in done.stdout.splitlines()), done.stdout
