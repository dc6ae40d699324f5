"""The leaderboard site: model pages and epochs, `build` as a command (exit codes, one-line
refusals of bad metadata and of result files the publish rules refuse), builds racing a
publisher, then the page itself: no console errors, every published model, sorting, the chart,
comparisons, model pages, the empty board; a crowded board, a waived error gate, costs to one
precision, and a phone's width. The rest of the site data is tests/unit/test_site.py.

`build` is a real exec (`python -m evals.site`), for its exit status and streams; the racing
builders are two spawned processes, since the models.json lock between processes is the point.
The page runs in headless Chromium driven by Selenium (tests/support/browser.py), over http from
a server on a thread of the test or from file://."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import multiprocessing
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from evals import site, stats
from evals.cache import RunCache
from evals.config import run_name
from evals.errors import ProviderError
from evals.names import attempt_key
from evals.providers import Completion, Usage
from evals.models_file import load_models
from evals.results import summarize
from evals.tasks import TASKS, Column, Task
from tests.support import ROOT
from tests.support.browser import problems
from tests.support.site_boards import (
    CLOSE,
    HOSTILE,
    STATIC,
    WAIVED,
    Spelling,
    _publish,
    _rows,
    _write_run,
    cli,
    comparison,
    crowded,
    make_crowded_registry,
    make_board_data,
    page,
    question_of,
    read_data_js,
    registered,
    board_data,
    result_of,
    rewrite_result,
    spelling_rows,
    wait_ready,
)

STALE = "is stale: run `uv run build --write`"


# ---- fixtures: a small models.json with realistic result files -----------------------------------


# As the page shows it: line breaks kept, every other invisible control as its escape.
HOSTILE_SHOWN = (
    '</script><script>alert(1)</script><img src=x onerror="window.__pwned '
    '= 1"> & \\u2028 done \\x1b]0;title\\x07 \\u202edesrever\nnext line'
)


# ---- site data ---------------------------------------------------------------------------------


def _epoch_rows(n: int, correct_by_epoch: list[int]) -> list[dict]:
    rows = []
    for epoch, correct in enumerate(correct_by_epoch, 1):
        rows += [
            row | {"epoch": epoch}
            for row in _rows("multiple_choice", n=n, correct=correct, usage=(400, 100))
        ]
    return rows


def test_several_epochs_compare_per_question_means_and_show_each_answer(board_data):
    """Rows of `--epochs 2`: several rows per id, each answer cached under its attempt key."""
    models, results, site_dir = board_data
    entry = next(e for e in json.loads(models.read_text()) if e["name"] == "alpha-1")
    rows = _epoch_rows(20, [17, 15])
    name = _write_run(
        results, "multiple_choice", "alpha-1", "openai", rows, runs=results.parent / "runs"
    )
    assert name == entry["resultFiles"]["multipleChoice"]  # the same run, now of two epochs
    data = site.site_data(load_models(models, results=results), results_dir=results)

    answers = {f"mu-{i:04d}": [i < 17, i < 15] for i in range(20)}
    beta = {f"mu-{i:04d}": [i < 18] for i in range(20)}
    paired = stats.paired(beta, answers)
    got = comparison(data, "multipleChoice", "beta-2", "alpha-1")
    assert got == {
        "a": 0,
        "b": 1,
        "difference": paired["difference"],
        "low": paired["ci95"][0],
        "high": paired["ci95"][1],
        "distinguishable": paired["distinguishable"],
        "shared": 20,
        "onlyA": None,
        "onlyB": None,
        "mcnemarP": None,
    }
    assert got["difference"] == 10.0  # 90% against 80%

    assert site.main(cli(models, results, site_dir, "--write")) == 0
    items = [
        i for i in read_model_page(site_dir, "alpha-1")["items"] if i["eval"] == "multipleChoice"
    ]
    assert [(i["id"], i["epoch"]) for i in items[:4]] == [
        ("mu-0000", 1),
        ("mu-0000", 2),
        ("mu-0001", 1),
        ("mu-0001", 2),
    ]
    second = next(i for i in items if (i["id"], i["epoch"]) == ("mu-0016", 2))
    assert (second["status"], second["reply"], second["stored"]) == (
        "wrong",
        "My answer to mu-0016, epoch 2.",
        True,
    )


def read_model_page(site_dir: Path, page: str) -> dict:
    text = (site_dir / "models" / f"{page}.js").read_text(encoding="utf-8")
    body = text[text.index("window.MODEL = ") + len("window.MODEL = ") :]
    assert body.endswith("};\n")
    return json.loads(body[:-2])


def test_model_pages_hold_each_run_and_every_item_with_its_question_and_reply(board_data):
    models, results, site_dir = board_data
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    board = read_data_js(site_dir)["models"]
    assert [m["page"] for m in board] == ["beta-2", "alpha-1", "qwen-local-70b"]
    alpha = read_model_page(site_dir, "alpha-1")
    assert {k: alpha[k] for k in board[1]} == board[1]  # the board's row, and more

    ff = result_of(models, results, "alpha-1", "freeform")
    run = alpha["evals"]["freeform"]
    assert (run["config"], run["summary"]) == (ff["config"], ff["summary"])  # as recorded
    assert run["summary"]["judgeAgreement"] == 1.0 and run["runFolderPresent"] is True
    assert (
        run["resultFile"]
        == f"freeform/{json.loads(models.read_text())[0]['resultFiles']['freeform']}"
    )
    assert {k: alpha["evals"][k]["cost"] for k in site.RESULT_KEYS} == {
        "freeform": 0.06,
        "multipleChoice": 0.032,
        "leetcode": 0.1632,
    }
    assert math.isclose(sum(alpha["evals"][k]["cost"] for k in site.RESULT_KEYS), alpha["cost"])

    items = alpha["items"]
    assert (
        len(items) == 10 + 20 + 12
        and [i["eval"] for i in items]
        == ["freeform"] * 10 + ["multipleChoice"] * 20 + ["leetcode"] * 12
    )
    hostile = next(i for i in items if i["id"] == "fr-0009")
    assert hostile == {
        "eval": "freeform",
        "id": "fr-0009",
        "status": "wrong",
        "correct": False,
        "stored": True,
        "question": question_of("fr-0009"),
        "reply": HOSTILE,
        "reasoning": "Thinking about fr-0009.",
        "verdicts": [{"judge": f"openai:judge-{j}", "verdict": "INCORRECT"} for j in "abc"],
        "agreed": True,
        "usage": {"input": 1000, "output": 500, "reasoning": 250, "cached": 0},
    }
    lc = next(i for i in items if i["id"] == "le-0011")
    assert (lc["band"], lc["tests"], lc["note"], lc["status"]) == (
        "hard",
        "3/5",
        "2 tests failed",
        "wrong",
    )
    mc = next(i for i in items if i["id"] == "mu-0019")
    assert (mc["expected"], mc["answer"]) == ("B", "C")

    # the model's replies cannot end a script or an HTML comment, in any page
    for path in [site_dir / "data.js", *(site_dir / "models").iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert not {"<", ">", "&", "\u2028"} & set(text), path

    # qwen-local-70b's run folders are not in this checkout: its items are its result rows
    qwen = read_model_page(site_dir, "qwen-local-70b")
    assert {run["runFolderPresent"] for run in qwen["evals"].values()} == {False}
    assert all(not i["stored"] and "question" not in i and "reply" not in i for i in qwen["items"])
    assert next(i for i in qwen["items"] if i["id"] == "le-0001")["tests"] == "5/5"


def test_check_catches_a_stale_model_page_and_one_of_no_published_model(board_data, capsys):
    models, results, site_dir = board_data
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    capsys.readouterr()
    data_js = (site_dir / "data.js").read_bytes()

    # a reply in alpha-1's run folder changes (a rescored run): its page only is stale
    folder = (
        results.parent
        / "runs"
        / "freeform"
        / json.loads(models.read_text())[0]["resultFiles"]["freeform"].removesuffix(".json")
    )
    cache = RunCache(folder, session="s")
    record = cache.read("fr-0001", "candidate")
    cache.store(
        "fr-0001",
        "candidate",
        record["request"],
        Completion(text="A better answer.", usage=Usage(10, 20)),
    )
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    assert capsys.readouterr().err == f"{site_dir / 'models' / 'alpha-1.js'} {STALE}\n"
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert (
        capsys.readouterr().out
        == f"wrote {site_dir / 'models' / 'alpha-1.js'} (3 published models)\n"
    )
    assert (
        next(i for i in read_model_page(site_dir, "alpha-1")["items"] if i["id"] == "fr-0001")[
            "reply"
        ]
        == "A better answer."
    )
    assert (site_dir / "data.js").read_bytes() == data_js

    # a page left by a model no longer on the board (an orphan)
    shutil.copy(site_dir / "models" / "beta-2.js", site_dir / "models" / "old-model.js")
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    assert (
        capsys.readouterr().err
        == f"{site_dir / 'models' / 'old-model.js'} is the page of no published model: run `uv run build --write`\n"
    )
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert (
        capsys.readouterr().out
        == f"removed {site_dir / 'models' / 'old-model.js'} (3 published models)\n"
    )
    assert sorted(p.name for p in (site_dir / "models").iterdir()) == [
        "alpha-1.js",
        "beta-2.js",
        "qwen-local-70b.js",
    ]

    # a model taken off the board: data.js is stale and its page an orphan, both in one line
    entries = json.loads(models.read_text())
    del entries[2]["resultFiles"]
    models.write_text(json.dumps(entries, indent=2) + "\n")
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    assert capsys.readouterr().err == (
        f"{site_dir / 'data.js'} {STALE.split(':')[0]} and {site_dir / 'models' / 'qwen-local-70b.js'} "
        "is the page of no published model: run `uv run build --write`\n"
    )
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert not (site_dir / "models" / "qwen-local-70b.js").exists()
    assert site.main(cli(models, results, site_dir, "--check")) == 0


# ---- the CLI: --write, --check, bad data ------------------------------------------------------


def build_command(
    models: Path, results: Path, site_dir: Path, *flags: str
) -> subprocess.CompletedProcess:
    """`build` as a user runs it: `python -m evals.site ...` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "evals.site", *cli(models, results, site_dir, *flags)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line_refusal(done: subprocess.CompletedProcess) -> str:
    """The refusal of bad data: exit 2, nothing on stdout, one line on stderr, no traceback."""
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("build: "), done.stderr
    return done.stderr


def test_command_in_a_subprocess(board_data):
    """The real command: exit codes and one-line messages, no traceback."""
    models, results, site_dir = board_data

    def run(*flags: str) -> subprocess.CompletedProcess:
        return build_command(models, results, site_dir, *flags)

    check = run("--check")
    assert (check.returncode, check.stdout) == (1, "")
    assert (
        check.stderr == f"{site_dir / 'data.js'}, {site_dir / 'models' / 'alpha-1.js'} "
        "and 4 more are stale: run `uv run build --write`\n"
    )
    write = run("--write")
    assert (write.returncode, write.stderr) == (0, "")
    assert (
        write.stdout
        == f"wrote {site_dir / 'data.js'}, {site_dir / 'models' / 'alpha-1.js'} and 4 more (3 published models)\n"
    )
    assert (run("--check").returncode, run("--write").stdout) == (
        0,
        f"{site_dir} is up to date (3 published models); nothing written\n",
    )

    alpha = json.loads(models.read_text())[0]
    (results / "freeform" / alpha["resultFiles"]["freeform"]).unlink()
    assert alpha["resultFiles"]["freeform"] in one_line_refusal(run("--check"))


# ---- what cannot be on the board: bad metadata, result files the publish rules refuse -------


def edit_entry(models: Path, name: str, **fields) -> None:
    entries = json.loads(models.read_text())
    next(e for e in entries if e["name"] == name).update(fields)
    models.write_text(
        json.dumps(entries, indent=2) + "\n"
    )  # inf is written as Infinity, as json.dump does


@pytest.mark.parametrize("mode", ["--write", "--check"])
@pytest.mark.parametrize(
    "field, value, message",
    [
        (
            "price",
            {"input": float("inf"), "output": 8.0},
            "price.input: must be a finite number >= 0, in USD per million input tokens (got Infinity)",
        ),
        ("size", 10**400, "size: must be a byte count from 1 to 2**53 - 1, or null (got 1000"),
        (
            "releaseDate",
            "20260801",
            'releaseDate: must be a real date written YYYY-MM-DD (got "20260801")',
        ),
        ("url", "ftp://x", 'url: must be an http(s) URL with a host (got "ftp://x")'),
        (
            "kilowattHour",
            {"freeform": float("inf")},
            "kilowattHour.freeform: must be a finite number >= 0, in kWh (got Infinity)",
        ),
        ("allowErrors", "yes", 'allowErrors: must be true or false (got "yes")'),
    ],
    ids=[
        "inf price",
        "huge size",
        "undashed date",
        "ftp url",
        "inf kWh",
        "allowErrors not a boolean",
    ],
)
def test_bad_metadata_is_one_line_naming_the_field(board_data, field, value, message, mode):
    models, results, site_dir = board_data
    edit_entry(models, "alpha-1", **{field: value})
    err = one_line_refusal(build_command(models, results, site_dir, mode))
    assert err.startswith(f"build: {models}: entry 'alpha-1': {message}"), err
    assert not (site_dir / "data.js").exists()


def over_the_gate(result: dict) -> None:
    result["summary"]["apiErrors"] = 5  # of 20


@pytest.mark.parametrize(
    "edit, reason",
    [
        (over_the_gate, "5 of 20 answers failed (5 API errors), over the 5% gate"),
        (lambda r: r["config"].update(limit=5), "--limit 5 makes it a smoke test"),
        (
            lambda r: r["config"].update(split="train"),
            "the train split is for smoke tests and generation, not scores",
        ),
        (
            lambda r: r["config"].update(provider="reference"),
            "the reference provider answers with the gold answers",
        ),
    ],
    ids=["error gate", "limit", "train split", "reference"],
)
def test_build_refuses_a_result_file_the_publish_rules_refuse(board_data, edit, reason):
    models, results, site_dir = board_data
    path = rewrite_result(models, results, "alpha-1", "multipleChoice", edit)
    assert (
        json.loads(path.read_text())["publishable"] is True
    )  # the stored verdict is not what counts
    err = one_line_refusal(build_command(models, results, site_dir, "--write"))
    assert (
        f"{path}: cannot be on the board as resultFiles.multipleChoice of 'alpha-1': {reason}"
        in err
    ), err
    assert not (site_dir / "data.js").exists()


def test_the_error_gate_is_judged_with_the_entrys_allow_errors(board_data):
    models, results, site_dir = board_data
    path = rewrite_result(models, results, "alpha-1", "multipleChoice", over_the_gate)
    assert path.name in one_line_refusal(build_command(models, results, site_dir, "--check"))

    edit_entry(models, "alpha-1", allowErrors=True)  # as `publish --allow-errors` records it
    done = build_command(models, results, site_dir, "--write")
    assert (done.returncode, done.stderr) == (0, "")
    assert "alpha-1" in [m["name"] for m in read_data_js(site_dir)["models"]]


@pytest.mark.parametrize("how", ["renamed", "config edited"])
def test_build_refuses_a_result_file_that_is_not_the_run_its_name_says(board_data, how):
    models, results, site_dir = board_data
    entries = json.loads(models.read_text())
    path = results / "multiple_choice" / entries[0]["resultFiles"]["multipleChoice"]
    result = json.loads(path.read_text())
    expected = run_name(result["config"]) + ".json"
    if how == "renamed":
        path = path.rename(path.with_name("openai-alpha-1.json"))
        edit_entry(
            models,
            "alpha-1",
            resultFiles={**entries[0]["resultFiles"], "multipleChoice": path.name},
        )
    else:
        result["config"]["dataset"]["sha256"] = "1" * 64
        path.write_text(json.dumps(result, indent=2) + "\n")
        expected = run_name(result["config"]) + ".json"
    err = one_line_refusal(build_command(models, results, site_dir, "--write"))
    assert (
        f"{path}: cannot be on the board" in err
        and f"its run's file is named {expected}: it was renamed, or its config edited" in err
    ), err


def test_build_refuses_result_files_of_different_runs(board_data):
    models, results, site_dir = board_data
    other = _write_run(
        results,
        "leetcode",
        "alpha-1-mini",
        "openai",
        _rows("leetcode", n=4, correct=4, usage=(1, 1), difficulty="easy")
        + _rows("leetcode", n=4, correct=4, usage=(1, 1), difficulty="medium", offset=4)
        + _rows("leetcode", n=4, correct=4, usage=(1, 1), difficulty="hard", offset=8),
    )
    entries = json.loads(models.read_text())
    edit_entry(models, "alpha-1", resultFiles={**entries[0]["resultFiles"], "leetcode": other})
    err = one_line_refusal(build_command(models, results, site_dir, "--write"))
    assert (
        f"{results / 'leetcode' / other}: not the same run as the other result "
        "files of 'alpha-1' (model 'alpha-1-mini' where freeform has 'alpha-1')" in err
    ), err


# ---- build --write and publishing share the models.json lock --------------------------------


def _build_while(models: str, results: str, site_dir: str, ready, go, done, busy) -> None:
    """A builder process: once every process is `ready`, `build --write` over and over while
    `go` is set, each build under `busy` (so the test can wait for the one in flight), until `done`. Its builds are slow
    between reading the data and writing data.js (a big board, a loaded machine), so that a
    publish lands inside one."""
    import io

    render = site.render

    def slow_render(data):
        time.sleep(random.uniform(0.005, 0.03))
        return render(data)

    site.render = slow_render
    ready.wait(60)
    with contextlib.redirect_stdout(io.StringIO()):
        while not done.is_set():
            if not go.wait(0.01):
                continue
            with busy:
                code = (
                    site.main(cli(Path(models), Path(results), Path(site_dir), "--write"))
                    if go.is_set()
                    else 0
                )
            if code:
                raise SystemExit(code)
            time.sleep(random.uniform(0.01, 0.03))  # separate commands: not back to back


def test_builds_racing_a_publisher_never_leave_a_stale_site(tmp_path):
    """20 publishes (this process), each while two builder processes run `build --write` in a
    loop; the builds in flight are let finish, then the site must match models.json."""
    from evals import models_file as models_json
    from evals.publish import publish
    from evals.site import rebuild_site

    data, site_dir = tmp_path / "data", tmp_path / "site"
    models, results = make_board_data(data)
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True)
    entry = models_json.find_entry(load_models(models, results=results), "alpha-1")
    files = {key: models_json.result_path(entry, key, results) for key in site.RESULT_KEYS}

    context = multiprocessing.get_context("spawn")
    ready, go, done = context.Barrier(3), context.Event(), context.Event()
    busy = [context.Lock() for _ in range(2)]
    builders = [
        context.Process(
            target=_build_while,
            args=(str(models), str(results), str(site_dir), ready, go, done, lock),
        )
        for lock in busy
    ]
    for builder in builders:
        builder.start()
    try:
        ready.wait(60)
        for round in range(20):
            go.set()
            time.sleep(
                random.uniform(0.02, 0.06)
            )  # the builders are mid-build at any point of theirs
            publish(
                "alpha-1",
                files,
                metadata={"price": {"input": 2.0 + round, "output": 8.0}},
                models_path=models,
                results_dir=results,
                rebuild=rebuild_site(data),
            )
            go.clear()
            for lock in busy:  # the builds in flight finish; no new one starts
                with lock:
                    pass
            assert not site.build(
                models_path=models, results_dir=results, site_dir=site_dir, write=False
            ), f"stale site after round {round + 1}"
    finally:
        done.set()
        go.set()
        for builder in builders:
            builder.join(60)
    assert [builder.exitcode for builder in builders] == [0, 0]
    assert (
        models_json.find_entry(load_models(models, results=results), "alpha-1")["price"]["input"]
        == 21.0
    )
    check = build_command(models, results, site_dir, "--check")
    assert (check.returncode, check.stderr) == (0, ""), check.stderr


# ---- the page in headless Chromium ----------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[str, Path]:
    """Two built sites, `board/` (the models.json above) and `empty/` (nothing published),
    served over http on 127.0.0.1."""
    root = tmp_path_factory.mktemp("site")
    models, results = make_board_data(root / "data")
    empty_models = root / "data" / "empty.json"
    entries = json.loads(models.read_text())
    empty_models.write_text(json.dumps([entries[3]], indent=2) + "\n")
    for name, models_path in (("board", models), ("empty", empty_models)):
        (root / name).mkdir()
        for file in STATIC:
            shutil.copy(ROOT / "site" / file, root / name / file)
        assert site.build(
            models_path=models_path, results_dir=results, site_dir=root / name, write=True
        )

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def names(browser: WebDriver) -> list[str]:
    return [
        link.text
        for link in browser.find_elements(
            By.CSS_SELECTOR, "#leaderboard tbody th[data-key=name] a.model-link"
        )
    ]


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_page_loads_without_console_errors_and_shows_every_published_model(page, served, scheme):
    base, root = served
    browser = page.open(
        f"{base}/board/" if scheme == "http" else (root / "board" / "index.html").as_uri()
    )
    assert browser.title == "Roblox LLM leaderboard"
    assert names(browser) == ["beta-2", "alpha-1", "qwen-local-70b"]
    assert "gamma-preview" not in browser.find_element(By.CSS_SELECTOR, "body").text
    assert (
        browser.execute_script("return document.querySelector('#leaderboard caption').textContent")
        == "Scores and suite cost of every published model"
    )
    assert (
        browser.find_element(By.CSS_SELECTOR, "th[data-key=average]").get_dom_attribute("aria-sort")
        == "descending"
    )

    alpha = browser.find_element(By.CSS_SELECTOR, "#leaderboard tbody tr[data-name='alpha-1']")
    cells = {
        key: alpha.find_element(By.CSS_SELECTOR, f"[data-key={key}]").text
        for key in (
            "provider",
            "releaseDate",
            "size",
            "freeform",
            "multipleChoice",
            "leetcode",
            "leetcodeEasy",
            "leetcodeMedium",
            "leetcodeHard",
            "average",
            "cost",
        )
    }
    assert cells == {
        "provider": "OpenAI",
        "releaseDate": "2025-08-07",
        "size": "—",
        "freeform": "70.0%",
        "multipleChoice": "85.0%",
        "leetcode": "58.3%",
        "leetcodeEasy": "100.0%",
        "leetcodeMedium": "50.0%",
        "leetcodeHard": "25.0%",
        "average": "71.1%",
        "cost": "$0.255",
    }
    assert (
        alpha.find_element(By.CSS_SELECTOR, "a.model-link")
        .get_dom_attribute("href")
        .endswith("model.html?model=alpha-1")
    )  # its page
    assert (
        alpha.find_element(By.CSS_SELECTOR, "a.external").get_dom_attribute("href")
        == "https://example.com/alpha-1"
    )  # its site
    # every cell sits under its own column header
    misplaced = browser.execute_script(
        "const row = document.querySelector('#leaderboard tbody tr'); return Array.from(row.children).filter(cell => {"
        " const th = document.querySelector(`thead th[data-key=${cell.dataset.key}]`).getBoundingClientRect();"
        " const td = cell.getBoundingClientRect(); return Math.abs(th.left "
        "- td.left) > 1 || Math.abs(th.right - td.right) > 1;"
        " }).map(cell => cell.dataset.key);"
    )
    assert misplaced == []
    first_row = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr:first-child > *")
    assert len(first_row) == len(browser.find_elements(By.CSS_SELECTOR, "thead th[data-key]")) == 12
    assert (
        browser.find_element(By.CSS_SELECTOR, "tr[data-name='qwen-local-70b'] [data-key=size]").text
        == "70.6 GB"
    )
    assert problems(browser) == []


def test_clicking_average_sorts_ascending_then_descending(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    header = browser.find_element(By.CSS_SELECTOR, "th[data-key=average]")
    header.click()
    assert names(browser) == ["qwen-local-70b", "alpha-1", "beta-2"]
    assert header.get_dom_attribute("aria-sort") == "ascending"
    header.click()
    assert names(browser) == ["beta-2", "alpha-1", "qwen-local-70b"]
    assert header.get_dom_attribute("aria-sort") == "descending"

    # another column: ascending first, text columns alphabetically, and only one aria-sort
    browser.find_element(By.CSS_SELECTOR, "th[data-key=provider]").click()
    assert names(browser) == ["beta-2", "alpha-1", "qwen-local-70b"]  # Anthropic, OpenAI, Qwen
    assert [
        th.get_dom_attribute("data-key")
        for th in browser.find_elements(By.CSS_SELECTOR, "th[aria-sort]")
    ] == ["provider"]
    browser.find_element(By.CSS_SELECTOR, "th[data-key=cost]").click()
    assert names(browser) == ["alpha-1", "qwen-local-70b", "beta-2"]  # $0.2552, $0.3375, $0.5784
    browser.find_element(By.CSS_SELECTOR, "th[data-key=size]").click()
    assert names(browser)[0] == "qwen-local-70b"  # the only size; "—" last
    browser.find_element(By.CSS_SELECTOR, "th[data-key=size]").click()
    assert names(browser)[0] == "qwen-local-70b"  # still first: "—" is last either way
    assert problems(browser) == []


def test_chart_draws_one_labelled_point_per_model(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    points = browser.find_elements(By.CSS_SELECTOR, "#chart svg circle[data-model]")
    assert sorted(p.get_dom_attribute("data-model") for p in points) == [
        "alpha-1",
        "beta-2",
        "qwen-local-70b",
    ]
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart svg text.point-label")]
    assert sorted(labels) == ["alpha-1", "beta-2", "qwen-local-70b"]
    # higher average is drawn higher, dearer further right
    at = browser.execute_script(
        "const out = {}; document.querySelectorAll('#chart circle[data-model]').forEach(c => {"
        " out[c.dataset.model] = [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]; }); return out;"
    )
    assert at["beta-2"][1] < at["alpha-1"][1] < at["qwen-local-70b"][1]
    assert at["alpha-1"][0] < at["qwen-local-70b"][0] < at["beta-2"][0]
    assert problems(browser) == []


def test_empty_board_says_so(page, served):
    base, _ = served
    browser = page.open(f"{base}/empty/")
    assert browser.find_element(By.CSS_SELECTOR, "#empty").text == "No published models yet."
    assert browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#chart circle") == []
    assert problems(browser) == []


def test_every_score_has_a_whisker_with_its_interval_in_the_title(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    scores = (
        "freeform",
        "multipleChoice",
        "leetcode",
        "leetcodeEasy",
        "leetcodeMedium",
        "leetcodeHard",
        "average",
    )
    for name in ("beta-2", "alpha-1", "qwen-local-70b"):
        row = browser.find_element(By.CSS_SELECTOR, f"#leaderboard tbody tr[data-name='{name}']")
        assert (
            len(row.find_elements(By.CSS_SELECTOR, ".whisker .whisker-range"))
            == len(scores)
            == len(row.find_elements(By.CSS_SELECTOR, ".whisker"))
        )
    alpha = browser.find_element(By.CSS_SELECTOR, "#leaderboard tbody tr[data-name='alpha-1']")
    assert (
        alpha.find_element(By.CSS_SELECTOR, "[data-key=freeform]").get_dom_attribute("title")
        == "70.0% (95% CI 39.7–89.2)"
    )
    assert (
        alpha.find_element(By.CSS_SELECTOR, "[data-key=leetcodeEasy]").get_dom_attribute("title")
        == "100.0% (95% CI 51.0–100.0)"
    )
    assert (
        alpha.find_element(By.CSS_SELECTOR, "[data-key=average]").get_dom_attribute("title")
        == "71.1% (95% CI 56.0–81.5)"
    )
    # the band spans the interval on a 0-100% track, the tick stands at the score
    box = browser.execute_script(
        "const cell = document.querySelector(\"tr[data-name='alpha-1'] [data-key=freeform] .whisker\");"
        " const track = cell.getBoundingClientRect(), band = cell.firstChild.getBoundingClientRect(), tick = "
        "cell.lastChild.getBoundingClientRect();"
        " return [(band.left - track.left) / track.width, (band.right - track.left) "
        "/ track.width, (tick.left + tick.width / 2 - track.left) / track.width];"
    )
    assert box == pytest.approx([0.3968, 0.8922, 0.70], abs=0.02)
    assert problems(browser) == []


def test_chart_draws_an_error_bar_through_each_point(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    bars = browser.execute_script(
        "const out = {}; document.querySelectorAll('#chart "
        ".error-bar').forEach(g => { const line = g.querySelector('line');"
        " const point = document.querySelector(`#chart circle[data-model='${g.dataset.model}']`);"
        " out[g.dataset.model] = [Number(line.getAttribute('y1')), "
        "Number(line.getAttribute('y2')), Number(point.getAttribute('cy')),"
        " Number(line.getAttribute('x1')) - Number(point.getAttribute('cx'))]; }); return out;"
    )
    assert sorted(bars) == ["alpha-1", "beta-2", "qwen-local-70b"]
    for low, high, centre, dx in bars.values():
        assert (
            low > centre > high and dx == 0
        )  # SVG y grows downwards: the low end is drawn below the point
    # beta-2's interval (its average 85.0%) is narrower than qwen-local-70b's (47.8%): fewer answers near the middle
    assert (
        bars["beta-2"][0] - bars["beta-2"][1]
        < bars["qwen-local-70b"][0] - bars["qwen-local-70b"][1]
    )
    assert problems(browser) == []


def pick(browser: WebDriver, select: str, label: str) -> None:
    """Choose the option shown as `label` in a select, as a user does."""
    option = next(
        o for o in browser.find_elements(By.CSS_SELECTOR, f"{select} option") if o.text == label
    )
    option.click()


def compared(browser: WebDriver) -> dict[str, str]:
    return {
        li.get_dom_attribute("data-key"): li.find_element(By.CSS_SELECTOR, ".compare-text").text
        for li in browser.find_elements(By.CSS_SELECTOR, "#compare-results li[data-key]")
    }


def test_picking_two_models_says_how_they_differ_on_each_eval(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    assert [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#compare-a option")] == [
        "beta-2",
        "alpha-1",
        "qwen-local-70b",
    ]
    said = compared(browser)  # the first two on the board, to begin with
    assert (
        said["freeform"]
        == "beta-2 vs alpha-1: +20.0 points, not distinguishable (95% CI [-13.5, +50.2])"
    )
    assert list(said) == [
        "freeform",
        "multipleChoice",
        "leetcode",
        "leetcodeEasy",
        "leetcodeMedium",
        "leetcodeHard",
    ]
    assert browser.find_element(
        By.CSS_SELECTOR, "#compare-results li[data-key=freeform] .compare-detail"
    ).text == ("McNemar p = 0.5 (beta-2 alone right on 2, alpha-1 alone on 0); 10 shared questions")

    pick(browser, "#compare-b", "qwen-local-70b")
    said = compared(browser)
    assert said["multipleChoice"] == "beta-2 vs qwen-local-70b: +30.0 points, 95% CI [+6.4, +50.8]"
    assert said["leetcode"] == "beta-2 vs qwen-local-70b: +41.7 points, 95% CI [+6.4, +64.3]"
    assert "better" in browser.find_element(
        By.CSS_SELECTOR, "#compare-results li[data-key=multipleChoice]"
    ).get_dom_attribute("class")

    browser.find_element(
        By.CSS_SELECTOR, "#compare-swap"
    ).click()  # qwen-local-70b vs beta-2: the signs turn round
    said = compared(browser)
    assert said["multipleChoice"] == "qwen-local-70b vs beta-2: -30.0 points, 95% CI [-50.8, -6.4]"
    assert browser.find_element(
        By.CSS_SELECTOR, "#compare-results li[data-key=multipleChoice] .compare-detail"
    ).text == (
        "McNemar p = 0.031 (qwen-local-70b alone right on 0, beta-2 alone on 6); 20 shared questions"
    )

    pick(browser, "#compare-b", "qwen-local-70b")
    assert (
        browser.find_element(By.CSS_SELECTOR, "#compare-results li").text
        == "Pick two different models."
    )
    assert problems(browser) == []


def test_a_comparison_at_100_points_keeps_its_interval(page, tmp_path):
    # One model right on all 25 multiple-choice questions, the other on none: the board once said
    # "+100.0 points, 95% CI [+100.0, +100.0]", as if 25 questions proved the difference exactly.
    root = tmp_path / "edges"
    results = root / "data" / "results"
    usage = {"freeform": (1000, 500), "multiple_choice": (400, 100), "leetcode": (800, 1500)}
    models = [
        {
            "name": name,
            "provider": "Lab",
            "url": f"https://example.com/{name}",
            "releaseDate": "2025-08-07",
            "size": None,
            "price": {"input": 1.0, "output": 2.0},
            "resultFiles": _publish(
                results,
                name,
                "openai",
                ff=(10, right * 10),
                mc=(25, right * 25),
                lc=dict.fromkeys(("easy", "medium", "hard"), right * 4),
                usage=usage,
            ),
        }
        for name, right in (("Full", 1), ("Refused", 0))
    ]
    (root / "data" / "models.json").write_text(
        json.dumps(models, indent=2) + "\n", encoding="utf-8"
    )
    for file in STATIC:
        shutil.copy(ROOT / "site" / file, root / file)
    assert site.build(
        models_path=root / "data" / "models.json", results_dir=results, site_dir=root, write=True
    )
    browser = page.open((root / "index.html").as_uri())
    assert (
        compared(browser)["multipleChoice"]
        == "Full vs Refused: +100.0 points, 95% CI [+81.2, +100.0]"
    )
    assert (
        compared(browser)["freeform"] == "Full vs Refused: +100.0 points, 95% CI [+60.8, +100.0]"
    )  # 10 questions: wider
    browser.find_element(By.CSS_SELECTOR, "#compare-swap").click()
    assert (
        compared(browser)["multipleChoice"]
        == "Refused vs Full: -100.0 points, 95% CI [-100.0, -81.2]"
    )
    # each average keeps the room its three evals' intervals leave below 100% and above 0%
    for name, title in (
        ("Full", "100.0% (95% CI 86.9–100.0)"),
        ("Refused", "0.0% (95% CI 0.0–13.1)"),
    ):
        row = browser.find_element(By.CSS_SELECTOR, f"#leaderboard tbody tr[data-name='{name}']")
        assert (
            row.find_element(By.CSS_SELECTOR, "[data-key=average]").get_dom_attribute("title")
            == title
        )
    assert problems(browser) == []


def test_the_model_name_opens_its_page(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/")
    browser.find_element(
        By.CSS_SELECTOR, "#leaderboard tbody tr[data-name='alpha-1'] a.model-link"
    ).click()
    wait_ready(browser)
    assert (
        browser.execute_script("return location.pathname + location.search")
        == "/board/model.html?model=alpha-1"
    )
    assert (browser.title, browser.find_element(By.CSS_SELECTOR, "h1").text) == (
        "alpha-1 — Roblox LLM leaderboard",
        "alpha-1",
    )
    scores = {
        row.get_dom_attribute("data-key"): row.find_element(
            By.CSS_SELECTOR, "td.score"
        ).get_dom_attribute("title")
        for row in browser.find_elements(By.CSS_SELECTOR, "#scores tbody tr")
    }
    assert (
        scores["freeform"] == "70.0% (95% CI 39.7–89.2)"
        and scores["leetcodeHard"] == "25.0% (95% CI 4.6–69.9)"
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "#scores .whisker-range")) == 7
    runs = {
        card.get_dom_attribute("data-eval"): card.text
        for card in browser.find_elements(By.CSS_SELECTOR, ".run-card")
    }
    assert "Judge agreement\n100.0% of graded answers unanimous" in runs["freeform"]
    assert "Cost\n$0.060 (at $2 / $8 per million input / output tokens)" in runs["freeform"]
    assert "Tokens\n10,000 input, 5,000 output, 2,500 reasoning, 0 cached" in runs["freeform"]
    browser.find_element(
        By.CSS_SELECTOR, ".run-card[data-eval=leetcode] details.identity summary"
    ).click()
    identity = {
        row.find_element(By.CSS_SELECTOR, "th").text: row.find_element(By.CSS_SELECTOR, "td").text
        for row in browser.find_elements(
            By.CSS_SELECTOR, ".run-card[data-eval=leetcode] table.config tr"
        )
    }
    assert (
        identity["model"] == "alpha-1"
        and identity["promptVersion"] == "lc-v1"
        and '"sha256": ' not in identity["dataset"]
    )
    assert json.loads(identity["dataset"]) == {"sha256": "0" * 64, "source": "bundled"}
    assert (
        browser.find_element(By.CSS_SELECTOR, "#item-count").text == "42 items"
        and len(browser.find_elements(By.CSS_SELECTOR, "#items .item")) == 42
    )
    assert problems(browser) == []


def open_model(page, served, name: str, scheme: str = "http") -> WebDriver:
    base, root = served
    url = (
        f"{base}/board/model.html" if scheme == "http" else (root / "board" / "model.html").as_uri()
    )
    browser = page.open(f"{url}?model={name}")
    assert browser.execute_script("return document.body.dataset.ready") == "1", (
        browser.find_element(By.CSS_SELECTOR, "#empty").text
    )
    return browser


def shown_items(browser: WebDriver) -> tuple[str, int]:
    return browser.find_element(By.CSS_SELECTOR, "#item-count").text, len(
        browser.find_elements(By.CSS_SELECTOR, "#items .item")
    )


def search(browser: WebDriver, text: str) -> None:
    box = browser.find_element(By.CSS_SELECTOR, "#filter-search")
    browser.execute_script("arguments[0].value = ''", box)
    box.send_keys(text)


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_model_page_filters_and_search_change_the_items_shown(page, served, scheme):
    browser = open_model(page, served, "alpha-1", scheme)
    assert shown_items(browser) == ("42 items", 42)
    pick(browser, "#filter-eval", "LeetCode (12)")
    assert shown_items(browser) == ("12 of 42 items match", 12)
    assert {
        item.get_dom_attribute("data-eval")
        for item in browser.find_elements(By.CSS_SELECTOR, "#items .item")
    } == {"leetcode"}
    pick(browser, "#filter-band", "hard (4)")
    assert shown_items(browser) == ("4 of 42 items match", 4)
    pick(browser, "#filter-status", "wrong (11)")  # alpha-1 solved 1 of 4 hard problems
    assert shown_items(browser) == ("3 of 42 items match", 3)
    item = browser.find_element(By.CSS_SELECTOR, "#items .item")
    assert (
        item.find_element(By.CSS_SELECTOR, ".verdict").text == "tests 3/5 passed · 2 tests failed"
    )
    assert [b.text for b in item.find_elements(By.CSS_SELECTOR, ".badge")] == [
        "wrong",
        "LeetCode",
        "hard",
    ]

    pick(browser, "#filter-eval", "Freeform (10)")  # a band is leetcode's: it no longer filters
    assert (
        browser.find_element(By.CSS_SELECTOR, "#filter-band").get_dom_attribute("disabled")
        == "true"
    )
    assert shown_items(browser) == ("3 of 42 items match", 3)  # freeform's 3 wrong answers
    pick(browser, "#filter-eval", "All evals")
    pick(browser, "#filter-band", "All bands")
    pick(browser, "#filter-status", "All verdicts")
    search(browser, "MU-001")  # ids, case aside
    assert shown_items(browser) == ("10 of 42 items match", 10)
    search(browser, "epoch 1.")  # every plain reply
    assert shown_items(browser) == ("41 of 42 items match", 41)
    search(browser, "REMOTEEVENT reach")  # every question
    assert shown_items(browser) == ("42 items", 42)
    search(browser, "nothing says this")
    assert shown_items(browser) == ("0 of 42 items match", 0)
    assert problems(browser) == []


def test_a_hostile_reply_shows_as_text(page, served):
    browser = open_model(page, served, "alpha-1")
    search(browser, "alert(1)")
    assert shown_items(browser) == ("1 of 42 items match", 1)
    item = browser.find_element(By.CSS_SELECTOR, "#items .item")
    assert item.find_element(By.CSS_SELECTOR, ".item-id").text == "fr-0009"
    assert (
        browser.execute_script(
            "return arguments[0].textContent", item.find_element(By.CSS_SELECTOR, ".reply .text")
        )
        == HOSTILE_SHOWN
    )
    assert item.find_element(By.CSS_SELECTOR, ".question .text").text == question_of("fr-0009")
    item.find_element(
        By.CSS_SELECTOR, ".reasoning summary"
    ).click()  # the reasoning, collapsed until asked for
    assert item.find_element(By.CSS_SELECTOR, ".reasoning .text").text == "Thinking about fr-0009."
    assert browser.execute_script(
        "return [window.__pwned, document.querySelectorAll('#items img, #items script').length]"
    ) == [None, 0]
    assert problems(browser) == []


def test_a_model_whose_run_folders_are_not_here_shows_its_rows(page, served):
    browser = open_model(page, served, "qwen-local-70b")
    assert shown_items(browser) == ("42 items", 42)
    assert (
        len(browser.find_elements(By.CSS_SELECTOR, "#items .item .missing")) == 42
        and browser.find_elements(By.CSS_SELECTOR, "#items .reply") == []
    )
    first = browser.find_element(By.CSS_SELECTOR, "#items .item .missing").text
    assert (
        first.startswith("Question and reply not in this checkout (data/runs/freeform/")
        and "is not here" in first
    )
    runs = {
        card.get_dom_attribute("data-eval"): card.text
        for card in browser.find_elements(By.CSS_SELECTOR, ".run-card")
    }
    assert "(not in this checkout)" in runs["leetcode"]
    assert "(0.95 kWh at $0.15 per kWh)" in runs["leetcode"]
    assert problems(browser) == []


def test_a_link_to_no_published_model_says_so(page, served):
    base, _ = served
    browser = page.open(f"{base}/board/model.html?model=gamma-preview")
    wait_for = time.monotonic() + 5
    while (
        browser.find_element(By.CSS_SELECTOR, "#empty").get_dom_attribute("hidden") is not None
        and time.monotonic() < wait_for
    ):
        time.sleep(0.05)
    assert (
        browser.find_element(By.CSS_SELECTOR, "#empty").text
        == "No published model has this page: pick one on the leaderboard."
    )
    assert problems(browser) == []


def test_a_page_of_2000_items_is_ready_within_a_second(page, tmp_path_factory):
    """A model of 2,000 answers with questions and replies of realistic length: from
    DOMContentLoaded to its first screen of items and the counts, measured in the page."""
    root = tmp_path_factory.mktemp("big")
    results, runs = root / "data" / "results", root / "data" / "runs"
    long_reply = (
        "Use a RemoteEvent: the client fires it, the server listens with OnServerEvent. " * 20
    )
    sizes = {"freeform": 600, "multiple_choice": 800}
    files = {}
    for eval_name, n in sizes.items():
        rows = _rows(eval_name, n=n, correct=n * 2 // 3, usage=(500, 300))
        files[{v: k for k, v in site.RESULT_KEYS.items()}[eval_name]] = _write_run(
            results,
            eval_name,
            "big-1",
            "openai",
            rows,
            runs=runs,
            replies={r["id"]: f"{r['id']}: {long_reply}" for r in rows},
        )
    leetcode = []
    for band in ("easy", "medium", "hard"):
        leetcode += _rows(
            "leetcode", n=200, correct=100, usage=(800, 1500), difficulty=band, offset=len(leetcode)
        )
    files["leetcode"] = _write_run(results, "leetcode", "big-1", "openai", leetcode, runs=runs)
    models = root / "data" / "models.json"
    models.write_text(
        json.dumps(
            [
                {
                    "name": "big-1",
                    "provider": "OpenAI",
                    "url": "https://example.com/big",
                    "releaseDate": "2026-01-01",
                    "size": None,
                    "price": {"input": 1, "output": 2},
                    "resultFiles": files,
                }
            ]
        )
    )
    for file in STATIC:
        shutil.copy(ROOT / "site" / file, root / file)
    assert site.build(models_path=models, results_dir=results, site_dir=root, write=True)
    assert len(read_model_page(root, "big-1")["items"]) == 2000

    browser = page.open((root / "model.html").as_uri() + "?model=big-1")
    wait_ready(browser)
    timing = browser.execute_script("return window.modelPageTiming")
    elapsed = timing["ready"] - timing["domContentLoaded"]
    print(
        f"2,000-item model page: {elapsed:.0f} ms from DOMContentLoaded "
        f"to ready ({timing['ready']:.0f} ms after navigation)"
    )
    assert shown_items(browser) == ("2,000 items; showing the first 100", 100)
    browser.find_element(By.CSS_SELECTOR, "#show-more").click()
    assert shown_items(browser) == ("2,000 items; showing the first 200", 200)
    pick(browser, "#filter-eval", "LeetCode (600)")
    assert shown_items(browser) == ("600 of 2,000 items match; showing the first 100", 100)
    assert problems(browser) == []


# ---- the board's evals are the registry's ---------------------------------------------------


def board_with_spelling(root: Path) -> Path:
    """The models.json of `make_board_data` with a spelling result file for each published model
    (alpha-1's and beta-2's with their run folders), its site built into root/site with the
    pages' static files beside it.

    models.json's and the result file's own checks (`models_file.load_models`, `results.read_result`,
    the publish rules) are not this test's: the board is built, as `build` builds it, from the
    result files as read."""
    models, results = make_board_data(root)
    runs, site_dir = root / "runs", root / "site"
    spelling = {"alpha-1": (2, 0), "beta-2": (4, 3), "qwen-local-70b": (4, 4)}
    board = []
    for entry in json.loads(models.read_text()):
        if "resultFiles" not in entry:
            continue
        model, provider = (
            entry["name"],
            {"alpha-1": "openai", "beta-2": "anthropic", "qwen-local-70b": "live"}[entry["name"]],
        )
        entry["resultFiles"]["spelling"] = _write_run(
            results,
            "spelling",
            model,
            provider,
            spelling_rows(*spelling[model]),
            runs=runs if model != "qwen-local-70b" else None,
        )
        if "kilowattHour" in entry:
            entry["kilowattHour"] |= {"short": 0.1, "long": 0.2}
        paths = {
            key: results / folder / entry["resultFiles"][key]
            for key, folder in site.RESULT_KEYS.items()
        }
        board.append(
            site.Published(
                entry, paths, {key: json.loads(path.read_text()) for key, path in paths.items()}
            )
        )
    site_dir.mkdir()
    for file in STATIC:
        shutil.copy(ROOT / "site" / file, site_dir / file)
    site.write_changes(site.board_changes(site.ranked(board), runs_dir=runs, site_dir=site_dir))
    return site_dir


def test_an_eval_registered_at_run_time_is_on_the_board_and_its_items_on_the_model_pages(
    registered, page, tmp_path
):
    registered(Spelling)
    site_dir = board_with_spelling(tmp_path)

    # the data: its columns, after the built-ins', and its score in the average
    data = read_data_js(site_dir)
    assert [(s["key"], s["eval"], s["label"], s["band"], s["averaged"]) for s in data["scores"]][
        -3:
    ] == [
        ("leetcodeHard", "leetcode", "Hard", "hard", False),
        ("spelling", "spelling", "Spelling bee", None, True),
        ("spellingLong", "spelling", "Long", "long", False),
    ]
    assert data["evals"][-1] == {
        "key": "spelling",
        "name": "spelling",
        "title": "Spelling bee",
        "description": "Spelling bee words",
        "bands": ["short", "long"],
        "kilowattHour": ["short", "long"],
        "judged": False,
    }
    rows = {m["name"]: m for m in data["models"]}
    assert [m["name"] for m in data["models"]] == [
        "beta-2",
        "qwen-local-70b",
        "alpha-1",
    ]  # qwen-local-70b spells every word
    alpha = rows["alpha-1"]
    assert (alpha["spelling"], alpha["spellingLong"], alpha["average"]) == (
        0.25,
        0.0,
        0.5958,
    )  # (0.7 + 0.85 + 0.5833 + 0.25) / 4
    assert alpha["cost"] == 0.25744  # 0.2552 and 8 * (100 * $2 + 10 * $8) per million
    assert (
        rows["qwen-local-70b"]["cost"] == 0.3825
    )  # its kWh figures for short and long words counted: 2.55 kWh * $0.15
    assert (
        len(data["comparisons"]["spelling"]) == 3
        and comparison(data, "spellingLong", "beta-2", "alpha-1")["difference"] == 75.0
    )

    model = read_model_page(site_dir, "alpha-1")
    assert (
        model["evals"]["spelling"]["resultFile"].startswith("spelling/")
        and model["evals"]["spelling"]["runFolderPresent"] is True
    )
    spelt = [i for i in model["items"] if i["eval"] == "spelling"]
    assert [(i["id"], i["band"], i["status"], i["stored"]) for i in spelt[3:5]] == [
        ("sp-0003", "short", "wrong", True),
        ("sp-0004", "long", "wrong", True),
    ]
    assert spelt[0]["question"] == question_of("sp-0000")

    # the board: its group of two columns after LeetCode's, its cells, its comparison, the words for it
    browser = page.open((site_dir / "index.html").as_uri())
    assert browser.execute_script("return document.body.dataset.ready") == "1"
    group = browser.find_elements(By.CSS_SELECTOR, "thead th.group")
    assert [(th.text, th.get_dom_attribute("colspan")) for th in group] == [
        ("LeetCode", "4"),
        ("Spelling bee", "2"),
    ]
    assert [
        th.get_dom_attribute("aria-label")
        for th in browser.find_elements(By.CSS_SELECTOR, "thead tr:nth-child(2) th")
    ][-2:] == ["Spelling bee overall", "Spelling bee long"]
    row = browser.find_element(By.CSS_SELECTOR, "#leaderboard tbody tr[data-name='alpha-1']")
    assert [
        row.find_element(By.CSS_SELECTOR, f"[data-key={key}]").text
        for key in ("spelling", "spellingLong", "average")
    ] == ["25.0%", "0.0%", "59.6%"]
    assert (
        len(row.find_elements(By.CSS_SELECTOR, "th, td"))
        == len(browser.find_elements(By.CSS_SELECTOR, "thead th[data-key]"))
        == 14
    )
    assert names(browser) == ["beta-2", "qwen-local-70b", "alpha-1"]
    said = compared(browser)
    assert list(said)[-2:] == ["spelling", "spellingLong"]
    assert said["spellingLong"].startswith("beta-2 vs qwen-local-70b: -25.0 points")
    labels = [
        li.find_element(By.CSS_SELECTOR, ".compare-eval").text
        for li in browser.find_elements(By.CSS_SELECTOR, "#compare-results li")
    ]
    assert labels[-2:] == ["Spelling bee (overall)", "Spelling bee long"]
    lede = browser.find_element(By.CSS_SELECTOR, ".lede").text
    assert "and Spelling bee words. The average is the mean of the four evals." in lede, lede
    note = browser.find_element(By.CSS_SELECTOR, ".note").text
    assert (
        "the measured energy of the seven runs (freeform, multiple "
        "choice, LeetCode easy, medium, hard, spelling bee short and long)" in note
    ), note
    assert problems(browser) == []

    # its model page: its scores, its run, its items with their bands in the filters
    browser = page.open((site_dir / "model.html").as_uri() + "?model=alpha-1")
    assert browser.execute_script("return document.body.dataset.ready") == "1"
    scores = {
        row.get_dom_attribute("data-key"): row.find_element(By.CSS_SELECTOR, "th").text
        for row in browser.find_elements(By.CSS_SELECTOR, "#scores tbody tr")
    }
    assert (scores["spelling"], scores["spellingLong"]) == (
        "Spelling bee (overall)",
        "Spelling bee long",
    )
    assert (
        browser.find_element(By.CSS_SELECTOR, ".run-card[data-eval=spelling] h3").text
        == "Spelling bee"
    )
    assert shown_items(browser) == ("50 items", 50)
    assert [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#filter-band option")] == [
        "All bands",
        "easy (4)",
        "medium (4)",
        "hard (4)",
        "short (4)",
        "long (4)",
    ]
    pick(browser, "#filter-eval", "Spelling bee (8)")
    pick(browser, "#filter-band", "long (4)")
    assert shown_items(browser) == ("4 of 50 items match", 4)
    assert [
        b.text
        for b in browser.find_element(By.CSS_SELECTOR, "#items .item").find_elements(
            By.CSS_SELECTOR, ".badge"
        )
    ] == ["wrong", "Spelling bee", "long"]
    pick(browser, "#filter-eval", "Freeform (10)")
    assert (
        browser.find_element(By.CSS_SELECTOR, "#filter-band").get_dom_attribute("disabled")
        == "true"
    )
    assert problems(browser) == []


# ---- a crowded board, a waived gate, one precision for costs, a phone's width ------------------

PHONE = (390, 844)


@contextlib.contextmanager
def window(browser: WebDriver, size: tuple[int, int]):
    browser.set_window_size(*size)
    try:
        yield browser
    finally:
        browser.set_window_size(1400, 1000)


def overlapping_labels(browser: WebDriver) -> list[tuple[str, str]]:
    return browser.execute_script(
        "const boxes = Array.from(document.querySelectorAll('#chart "
        "text.point-label')).map(t => [t.textContent, t.getBoundingClientRect()]);"
        " const out = []; boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {"
        " if (p.left < q.right && q.left < p.right && p.top < q.bottom "
        "&& q.top < p.bottom) out.push([a, b]); })); return out;"
    )


@pytest.mark.parametrize("size", [(1400, 1000), PHONE], ids=["wide", "phone"])
def test_the_labels_of_ten_close_models_never_overlap(page, crowded, size, tmp_path):
    with window(page.browser(), size):
        browser = page.open((crowded / "index.html").as_uri())
        browser.save_screenshot(str(tmp_path / "board.png"))
        labels = [
            t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart svg text.point-label")
        ]
        assert sorted(labels) == sorted([*CLOSE, WAIVED])
        assert overlapping_labels(browser) == []
        # and none covers a point other than its own
        covered = browser.execute_script(
            "const points = Array.from(document.querySelectorAll('#chart "
            "circle[data-model]')).map(c => [c.dataset.model, c.getBoundingClientRect()]);"
            " const out = []; document.querySelectorAll('#chart "
            "text.point-label').forEach(t => { const p = t.getBoundingClientRect();"
            " points.forEach(([name, q]) => { if (name !== t.textContent && p.left "
            "< q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom)"
            " out.push([t.textContent, name]); }); }); return out;"
        )
        assert covered == []
        assert problems(browser) == []


def test_costs_are_printed_to_one_precision(page, crowded):
    browser = page.open((crowded / "index.html").as_uri())
    shown = browser.execute_script(
        "return [0.03, 0.021, 0.3, 1.25, 12.5, 0.0004, 0, 2500].map(SiteCommon.usd)"
    )
    assert shown == ["$0.030", "$0.021", "$0.300", "$1.250", "$12.500", "< $0.001", "$0", "$2,500"]
    costs = [
        td.text
        for td in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody td[data-key=cost]")
    ]
    assert all(re.fullmatch(r"\$\d+\.\d{3}", cost) for cost in costs), costs
    ticks = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart title')).map(t => t.textContent)"
    )
    assert not [t for t in ticks if re.search(r"\$\d+\.\d{1,2}\b(?!\d)", t)], (
        ticks
    )  # "$0.03 for the suite" nowhere


def test_a_waived_error_gate_is_marked_on_the_board_and_the_models_page(page, crowded):
    browser = page.open((crowded / "index.html").as_uri())
    cell = browser.find_element(
        By.CSS_SELECTOR, f"#leaderboard tr[data-name='{WAIVED}'] td[data-key=freeform]"
    )
    assert cell.text.startswith("0.0% †")
    assert (
        "error gate waived: 10 of 10 answers failed (10 unparseable judge verdicts), counted as wrong"
        in cell.get_dom_attribute("title")
    )
    others = browser.find_elements(By.CSS_SELECTOR, "#leaderboard .waived-mark")
    assert len(others) == 1  # only that run: its other evals, and the other models, passed the gate
    note = browser.find_element(By.CSS_SELECTOR, "#note-waived")
    assert (
        note.text
        == "† Error gate waived (published with --allow-errors; failed answers count as wrong): "
        f"{WAIVED}'s freeform: 10 of 10 answers failed (10 unparseable judge verdicts)."
    )

    browser = page.open((crowded / "model.html").as_uri() + f"?model={WAIVED}")
    score = browser.find_element(By.CSS_SELECTOR, "#scores tr[data-key=freeform] td.score")
    assert score.text.startswith("0.0% †")
    card = browser.find_element(By.CSS_SELECTOR, ".run-card[data-eval=freeform]").text
    assert (
        "Error gate\nwaived when published (--allow-errors): 10 of 10 answers failed (10 unparseable judge verdicts)"
        in card
    )
    # one judge, no verdict readable: no "judge agreement 0.0%"
    assert "Judge agreement\nnone: no verdict could be read (10 unparseable)" in card
    assert "0.0% of graded answers" not in card
    assert (
        browser.find_elements(By.CSS_SELECTOR, ".run-card[data-eval=multipleChoice] .waived-mark")
        == []
    )
    assert problems(browser) == []


def test_one_judge_of_readable_verdicts_says_there_is_no_agreement_to_measure(page, tmp_path):
    root = tmp_path / "one-judge"
    models, results = make_crowded_registry(root / "data")
    path = results / "freeform" / json.loads(models.read_text())[-1]["resultFiles"]["freeform"]
    result = json.loads(path.read_text())
    for row in result["results"]:
        row["verdicts"] = [{"judge": "openai:judge-a", "verdict": "INCORRECT"}]
        row["agreed"] = True
    result["summary"] = summarize(TASKS["freeform"], result["results"])
    path.write_text(json.dumps(result, indent=2) + "\n")
    for file in STATIC:
        shutil.copy(ROOT / "site" / file, root / file)
    assert site.build(models_path=models, results_dir=results, site_dir=root, write=True)
    browser = page.open((root / "model.html").as_uri() + f"?model={WAIVED}")
    card = browser.find_element(By.CSS_SELECTOR, ".run-card[data-eval=freeform]").text
    assert "Judge agreement\none judge: no agreement to measure" in card
    # allowErrors recorded, but every verdict read: no gate was waived, and nothing says one was
    assert "Error gate" not in card and browser.find_elements(By.CSS_SELECTOR, ".waived-mark") == []
    assert problems(browser) == []


def test_at_a_phones_width_the_board_shows_scores_says_it_scrolls_and_its_chart_is_readable(
    page, crowded
):
    with window(page.browser(), PHONE) as browser:
        browser = page.open((crowded / "index.html").as_uri())
        assert browser.execute_script("return window.innerWidth") <= PHONE[0]
        # no sideways scrolling of the whole page: only the table's region scrolls
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )
        seen = browser.execute_script(
            "const row = document.querySelector('#leaderboard tbody tr'); const wrap "
            "= document.querySelector('#board .table-wrap').getBoundingClientRect();"
            " return Array.from(row.children).filter(c => { const r = c.getBoundingClientRect();"
            " return r.width > 0 && r.left >= wrap.left - 1 && r.right <= wrap.right + 1; }).map(c => c.dataset.key);"
        )
        assert "name" in seen and {"freeform", "multipleChoice"} <= set(seen), (
            seen
        )  # the scores, from the first screen
        scrolls = browser.execute_script(
            "const w = document.querySelector('#board .table-wrap'); return w.scrollWidth > w.clientWidth"
        )
        hint = browser.find_element(By.CSS_SELECTOR, ".scroll-hint")
        assert not scrolls or (hint.is_displayed() and "sideways" in hint.text)
        # the chart's lettering at the size it is drawn, not a wide drawing shrunk to a third
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('#chart text.point-label, "
            "#chart text.tick')).map(t => t.getBoundingClientRect().height)"
        )
        assert sizes and min(sizes) >= 11, sizes
        assert problems(browser) == []


IN_VIEW = (
    "const row = document.querySelector('#leaderboard tbody tr'); const wrap "
    "= document.querySelector('#board .table-wrap').getBoundingClientRect();"
    " return Array.from(row.children).filter(c => { const r = c.getBoundingClientRect();"
    " return r.width > 0 && r.left >= wrap.left - 1 && r.right <= wrap.right + 1"
    " && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('[data-key]') === c;"
    " }).map(c => c.dataset.key);"
)  # the cells of the first row inside the table's region, and not covered by another


def test_at_a_phones_width_the_name_ranking_score_and_cost_stay_in_view_and_intervals_are_written(
    page, crowded
):
    """At 390 px the Average, by which the board ranks, and the suite cost were off-screen
    behind "Swipe the table sideways"; the intervals were a hover's title only."""
    with window(page.browser(), PHONE) as browser:
        browser = page.open((crowded / "index.html").as_uri())
        first = browser.execute_script(IN_VIEW)
        browser.execute_script(
            "const w = document.querySelector('#board .table-wrap'); w.scrollLeft = w.scrollWidth;"
        )
        scrolled = browser.execute_script(IN_VIEW)
        intervals = browser.execute_script(
            "return Array.from(document.querySelectorAll('#leaderboard tbody td.score .ci-text'))"
            ".filter(t => t.getBoundingClientRect().height > 0).map(t => t.textContent)"
        )
        labels = browser.execute_script(
            "return Array.from(document.querySelectorAll('#leaderboard tbody td.score'))"
            ".map(t => t.getAttribute('aria-label'))"
        )
    for seen in (first, scrolled):
        assert {"name", "average", "cost"} <= set(seen), seen
    assert intervals and all("–" in text or "-" in text for text in intervals), intervals
    assert labels and all("95% CI" in label for label in labels if label), labels


def test_at_a_phones_width_a_models_page_shows_its_scores_and_runs(page, crowded):
    with window(page.browser(), PHONE) as browser:
        browser = page.open((crowded / "model.html").as_uri() + f"?model={CLOSE[0]}")
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )
        hidden = browser.execute_script(
            "return Array.from(document.querySelectorAll('#scores tbody td.score, .run-card')).filter(c => {"
            " const r = c.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }).length"
        )
        assert hidden == 0
        assert problems(browser) == []


def test_a_board_opened_wide_then_narrowed_draws_its_chart_again_at_the_new_width(page, crowded):
    browser = page.open((crowded / "index.html").as_uri())
    with window(browser, PHONE):
        deadline = time.monotonic() + 60
        while (
            browser.execute_script(
                "return Number(document.querySelector('#chart svg').viewBox.baseVal.width)"
            )
            >= 700
        ):
            assert time.monotonic() < deadline, "the chart was not drawn again at the phone's width"
            time.sleep(0.05)
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('#chart "
            "text.point-label')).map(t => t.getBoundingClientRect().height)"
        )
        assert min(sizes) >= 11, sizes
        assert overlapping_labels(browser) == []
        assert problems(browser) == []


def test_build_write_never_writes_through_a_link_out_of_the_site(board_data, tmp_path):
    """site/models linked elsewhere: refused in one line naming the link and the fix, exit 2,
    nothing written there nor in the site."""
    models, results, site_dir = board_data
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    site_dir.mkdir()
    (site_dir / "models").symlink_to(outside, target_is_directory=True)

    done = build_command(models, results, site_dir, "--write")

    assert done.returncode == 2, done.stdout + done.stderr
    assert (done.stdout, done.stderr) == (
        "",
        f"build: {site_dir / 'models'} is a symlink that leads out of "
        f"{site_dir}, and the harness writes only inside it; replace the link with a folder\n",
    )
    assert list(outside.iterdir()) == [] and sorted(site_dir.iterdir()) == [site_dir / "models"]
