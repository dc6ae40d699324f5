"""`build --view PATH`: a local page for any run, published or not (issue 30 item 5). A run of
the multiple choice eval against a loopback model whose replies are hostile (markup and script,
terminal controls, bidi and zero-width characters) and huge; its result file's page, its run
folder's page once the result file is gone (an unfinished run, with a record cut short); a page
of each built-in eval's run (each shows its own readings, `Task.shown`); a corrupt or wrong file,
one line and exit 2; and the page in headless Chromium, where nothing it holds runs.

`pytest` and `build` (`python -m evals.site`) start warm (tests/support/warm.py); the model is
a server on a thread of the test."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from tests.support.browser import problems
from tests.support.harness import (
    harness_env,
    questions,
    read_result,
    result_files,
    run_cli,
    run_harness,
)
from tests.support.loopback import Answer, OpenAIServer, last_user_text
from tests.support.site_boards import HOSTILE, page  # noqa: F401 (page: the browser fixture)

MC = questions("multiple_choice")
HOSTILE_REPLY = HOSTILE + " \u200bzero-width \x00nul\tTab"
# As the page shows it: line breaks and tabs kept, every other invisible character as its escape.
HOSTILE_SHOWN = (
    '</script><script>alert(1)</script><img src=x onerror="window.__pwned '
    '= 1"> & \\u2028 done \\x1b]0;title\\x07 \\u202edesrever\nnext line \\u200bzero-width \\x00nul\tTab'
)
HUGE = 300_000  # characters of one reply: past the page's limit of 200,000


def reply_to(question: dict, prompt: str) -> str:
    """The first question's reply is hostile, the second's huge, the rest plain; each ends
    with the right letter."""
    answer = f"\nAnswer: {question['answer']}"
    if question is MC[0]:
        return HOSTILE_REPLY + answer
    if question is MC[1]:
        return "x" * HUGE + answer
    return f"Plainly.{answer}"


def model(request) -> Answer:
    prompt = last_user_text(request.body)
    question = next((q for q in MC if q["question"] in prompt), None)
    return Answer(reply_to(question, prompt) if question else "I do not know.")


def hostile_run(data: Path, *flags: str) -> subprocess.CompletedProcess:
    """`pytest -m multiple_choice` against the hostile model, into `data` (results/, runs/)."""
    with OpenAIServer(model) as server:
        return run_harness(
            "--provider=live",
            "--model=hostile-1",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            *flags,
            run_dir=data / "runs",
            results_dir=data / "results",
        )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A finished run of the multiple choice eval: its data folder."""
    data = tmp_path_factory.mktemp("data")
    done = hostile_run(data)
    assert result_files(data / "results", "multiple_choice"), done.stdout[-3000:] + done.stderr
    return data


def view(
    path: Path, *flags: str, temp: Path | None = None, opened: bool = False, **env: str
) -> subprocess.CompletedProcess:
    """`build --view PATH --no-open` (`opened`: without --no-open), as a user runs it (with
    `temp` its temp folder)."""
    env |= {"TMPDIR": str(temp)} if temp else {}
    command = [sys.executable, "-m", "evals.site", "--view", str(path), *flags]
    return run_cli(command if opened else [*command, "--no-open"], env=harness_env(**env))


def written(done: subprocess.CompletedProcess) -> tuple[Path, str]:
    """The page the command wrote, from its one line, and that line's parenthesis."""
    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    found = re.fullmatch(r"wrote (.+) \(([^()]*)\)\n", done.stdout)
    assert found, done.stdout
    return Path(found[1]), found[2]


def item_html(text: str, item_id: str) -> str:
    """One item's article in the page."""
    start = text.index(f'data-id="{item_id}"')
    return text[start : text.index("</article>", start)]


def test_a_result_file_gets_a_page_with_its_score_identity_and_every_item_escaped(run, tmp_path):
    (path,) = result_files(run / "results", "multiple_choice")
    result = json.loads(path.read_text())
    out, said = written(view(path, f"--out={tmp_path / 'page.html'}"))
    assert (out, said) == (tmp_path / "page.html", f"{len(MC)} answers")
    text = out.read_text(encoding="utf-8")

    # the run's identity and its score with the interval its summary records, in the site's formats
    summary = result["summary"]
    low, high = summary["ci95"]
    assert f"{summary['accuracy'] * 100:.1f}%" in text
    assert f"{low * 100:.1f}–{high * 100:.1f}" in text
    assert "<title>hostile-1 · Multiple choice — local run page</title>" in text
    assert f"<td>{html.escape(path.parent.parent.parent.joinpath('runs').as_posix())}" not in text
    assert str(run / "runs" / "multiple_choice" / path.stem) in text  # where its calls are
    for key in ("provider", "model", "baseUrl", "dataset", "promptVersion"):
        assert f'<th scope="row">{key}</th>' in text, key
    assert text.count('<article class="item"') == len(MC)

    # the hostile reply is text: escaped, its invisible characters shown as escapes
    hostile = item_html(text, MC[0]["id"])
    assert html.escape(HOSTILE_SHOWN, quote=True) in hostile
    for raw in ("<script", "<img", "\u202e", "\u2028", "\u200b", "\x1b", "\x00"):
        assert raw not in text, repr(raw)
    # the multiple choice eval's own part: the choices, the one expected, the letter read
    assert f"{MC[0]['answer']})" in hostile and "(expected, answered)" in hostile
    assert "<dt>Letter read</dt>" in hostile

    # a huge reply is folded, and cut past the limit, saying so
    huge = item_html(text, MC[1]["id"])
    assert "<details><summary>Reply (" in huge
    assert f"{HUGE - 200_000 + len(chr(10) + 'Answer: X'):,} more characters, cut here" in huge
    assert len(text) < 1_000_000


def test_the_page_is_opened_in_the_browser_unless_no_open(run, tmp_path):
    """The browser is the user's (`$BROWSER`, which `webbrowser` runs): here a command that
    writes down the address it was given."""
    (path,) = result_files(run / "results", "multiple_choice")
    told = tmp_path / "told"
    script = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
    browser = f"{sys.executable} -c {shlex.quote(script)} {told} %s"
    out, _ = written(view(path, f"--out={tmp_path / 'page.html'}", opened=True, BROWSER=browser))
    assert told.read_text() == out.resolve().as_uri()
    told.unlink()
    written(view(path, f"--out={tmp_path / 'page.html'}", BROWSER=browser))
    assert not told.exists()


def test_a_result_file_without_its_run_folder_shows_its_rows(run, tmp_path):
    (path,) = result_files(run / "results", "multiple_choice")
    out, _ = written(view(path, f"--runs={tmp_path}", f"--out={tmp_path / 'rows.html'}"))
    text = out.read_text(encoding="utf-8")
    assert text.count("Question and reply not shown: its run folder is not here") == len(MC)
    assert "Run folder</dt><dd>not here" in text


def test_an_unfinished_run_folder_gets_a_page_of_what_it_asked_and_was_answered(tmp_path):
    """A run of some of the eval's items (`-k`) writes no result file: its run folder's page is
    made of the calls it stored, marked unfinished; a record cut short is left out, counted."""
    picked = [q["id"] for q in MC[:4]]
    done = hostile_run(tmp_path, "-k", " or ".join(picked))
    assert "no result file written" in done.stdout, done.stdout[-3000:] + done.stderr
    (folder,) = (tmp_path / "runs" / "multiple_choice").iterdir()
    (folder / "calls" / MC[2]["id"] / "candidate.json").write_text('{"format": 1, "item"')

    out, said = written(view(folder, temp=tmp_path))
    assert said == "unfinished, 3 answers"
    assert out == tmp_path / "roblox-evals-view" / f"multiple_choice-{folder.name}.html"
    text = out.read_text(encoding="utf-8")
    assert 'data-state="unfinished"' in text
    assert '<p class="unfinished" id="unfinished">Unfinished: no result file yet' in text
    assert "<dt>Unreadable records</dt><dd>1 (cut short" in text
    assert text.count('<article class="item" data-status="pending"') == 3
    assert f'data-id="{MC[2]["id"]}"' not in text
    hostile = item_html(text, MC[0]["id"])
    assert "answered, not graded yet" in hostile
    assert html.escape(HOSTILE_SHOWN, quote=True) in hostile
    assert "(expected" not in hostile and f"{MC[0]['answer']})" in hostile  # the choices, unmarked
    for key in ("provider", "model", "base_url", "run"):
        assert f'<th scope="row">{key}</th>' in text, key


@pytest.mark.parametrize("record", ["a FIFO", "a link to /dev/zero", "nested 100,000 deep"])
def test_an_unfinished_run_folders_hostile_record_is_left_out_not_read(tmp_path, record):
    """A record read as any other was: a FIFO or /dev/zero hung the page, deep nesting was a
    RecursionError. Read within the limits (`evals.bounded`), it is an unreadable record."""
    done = hostile_run(tmp_path, "-k", " or ".join(q["id"] for q in MC[:3]))
    assert "no result file written" in done.stdout, done.stdout[-3000:] + done.stderr
    (folder,) = (tmp_path / "runs" / "multiple_choice").iterdir()
    path = folder / "calls" / MC[1]["id"] / "candidate.json"
    path.unlink()
    if record == "a FIFO":
        os.mkfifo(path)
    elif record == "a link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)

    out, said = written(view(folder, f"--out={tmp_path / 'page.html'}"))
    assert said == "unfinished, 2 answers"
    assert "<dt>Unreadable records</dt><dd>1" in out.read_text(encoding="utf-8")


def test_row_fields_of_other_types_are_shown_as_their_json_not_a_traceback(tmp_path):
    """The result schema checks a row's id, status and outcome; an eval's own fields of another
    type (another version's, hand-edited) made the page a traceback."""
    run_harness("--provider=reference", "--limit=2", **_folders(tmp_path))
    odd = {
        "multiple_choice": {"answer": ["<b>x</b>"], "note": {"a": 1}},
        "freeform": {"verdicts": ["CORRECT"], "verdict": ["x"], "note": {"a": 1}},
        "leetcode": {"tests": 9, "error": 7, "note": ["a"], "usage": {"input": "lots"}},
    }
    for name, fields in odd.items():
        (path,) = result_files(tmp_path / "results", name)
        result = json.loads(path.read_text(encoding="utf-8"))
        result["results"][0].update(fields)
        path.write_text(json.dumps(result), encoding="utf-8")
        out, said = written(view(path, f"--out={tmp_path / name}.html"))
        assert said == "2 answers", name
        assert "<b>" not in out.read_text(encoding="utf-8")


def _folders(tmp_path: Path) -> dict[str, Path]:
    return {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}


def test_each_built_in_eval_shows_what_it_read_from_the_reply(tmp_path):
    """Each eval's own part of an item (`Task.shown`): the letter and the choices, the judges'
    verdicts and their replies, the Luau tests' outcome and the work against its budget."""
    done = run_harness(
        "--provider=reference",
        "--limit=2",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    expected = {
        "multiple_choice": ["(expected, answered)", "<dt>Letter read</dt>"],
        "freeform": [
            '<dt>Judge reference:exact-match</dt><dd class="correct">CORRECT</dd>',
            "reference:exact-match replied</div>",
            "<dt>Judges</dt><dd>unanimous</dd>",
        ],
        "leetcode": [
            '<dt>Tests passed</dt><dd class="correct">',
            "<dt>Work</dt><dd>",
            " of a budget of ",
            '<span class="badge band">easy</span>',
            '<th scope="row">easy</th>',
        ],
    }
    for name, parts in expected.items():
        files = result_files(tmp_path / "results", name)
        assert files, done.stdout[-3000:] + done.stderr
        (path,) = files
        out, said = written(view(path, f"--out={tmp_path / name}.html"))
        assert said == "2 answers"
        text = out.read_text(encoding="utf-8")
        for part in parts:
            assert part in text, (name, part)


@pytest.mark.parametrize(
    "content, cause",
    [
        (b'{"resultFormat": 3, "config": {"eval": "multi', "truncated or corrupt result file"),
        (b"\xff\xfe\x00\x01", "not a text file"),
        (b'{"name": "M", "provider": "P"}', "config"),
        (None, "no such result file or run folder"),
        ("folder", "not a run folder"),
    ],
    ids=["truncated", "binary", "not-a-result", "missing", "a-folder"],
)
def test_a_corrupt_or_wrong_file_is_one_line_naming_it_and_exit_2(tmp_path, content, cause):
    path = tmp_path / "result.json"
    if content == "folder":
        path = tmp_path / "somewhere" / "else"
        path.mkdir(parents=True)
    elif content is not None:
        path.write_bytes(content)
    done = view(path)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"build: {path}: "), done.stderr
    assert cause in done.stderr and "Traceback" not in done.stderr


def test_a_page_that_cannot_be_written_is_one_line(run, tmp_path):
    (path,) = result_files(run / "results", "multiple_choice")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = view(path, f"--out={blocker / 'page.html'}")
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and str(blocker) in done.stderr, done.stderr


def test_the_page_renders_in_a_browser_and_nothing_in_it_runs(run, tmp_path, page):  # noqa: F811
    (path,) = result_files(run / "results", "multiple_choice")
    result = read_result(run / "results", "multiple_choice")
    out, _ = written(view(path, f"--out={tmp_path / 'page.html'}"))
    browser = page.browser()
    browser.get_log("browser")
    browser.get(out.resolve().as_uri())

    assert browser.find_element(By.ID, "run-name").text == "hostile-1 · Multiple choice"
    score = browser.find_element(By.CSS_SELECTOR, "#scores td.score")
    assert score.text == f"{result['summary']['accuracy'] * 100:.1f}%"
    assert browser.find_element(By.ID, "item-count").text == f"{len(MC)} items"
    item = browser.find_element(By.CSS_SELECTOR, f'.item[data-id="{MC[0]["id"]}"]')
    reply = item.find_element(By.CSS_SELECTOR, ".reply .text")
    assert browser.execute_script("return arguments[0].textContent", reply) == (
        HOSTILE_SHOWN + f"\nAnswer: {MC[0]['answer']}"
    )
    # the huge reply folded until asked for
    huge = browser.find_element(By.CSS_SELECTOR, f'.item[data-id="{MC[1]["id"]}"] .reply details')
    assert huge.get_attribute("open") is None
    assert browser.execute_script(
        "return [window.__pwned, document.querySelectorAll('script, img').length]"
    ) == [None, 0]
    assert problems(browser) == []
