"""A run's local page (`evals.site.view`, `build --view`) made in process: an eval of a test's
own shows its items through `Task.shown`, the default's graded fields or its own parts, all
escaped whatever they hold; the page holds no script and loads nothing. The command itself, on
real runs, is tests/e2e/test_view.py."""

from __future__ import annotations

import re

from evals.site import view
from evals.tasks import Shown
from tests.support.site_boards import Spelling, registered  # noqa: F401 (registered: a fixture)

ROW = {"id": "sp-1", "status": "wrong", "correct": False, "length": "long", "spelt": "<b>wierd</b>"}
CALLS = {
    "candidate": {
        "request": {"prompt": "Spell weird.", "provider": {"provider": "live", "model": "m"}},
        "response": {"text": "<script>alert(1)</script>\u202e\x1b[2J", "reasoning": None},
    }
}


class Graded(Spelling):
    """An eval whose page is the default's: the graded fields of its rows."""

    name, tag, key = "graded", "gr", "graded"
    graded_fields = ("spelt", "missing")


class OwnParts(Spelling):
    """An eval that says what it read itself, in labels and passages that hold markup."""

    name, tag, key = "ownparts", "op", "ownparts"

    def shown(self, row, calls):
        return [
            Shown("<i>Letters</i>", "w-i-e-r-d", mark="wrong"),
            Shown('Its "own" passage', "line 1\n<line 2>", block=True),
        ]


def page_of(task, rows=(ROW,), calls=CALLS) -> str:
    config = {"eval": task.name, "model": "m<x>", "provider": "live"}
    summary = {
        "overall": {"n": 1, "correct": 0, "accuracy": 0.0, "ci95": [0.0, 0.7935], "apiErrors": 0},
        "short": {"n": 0, "correct": 0, "accuracy": 0.0, "ci95": [0.0, 1.0], "apiErrors": 0},
        "long": {"n": 1, "correct": 0, "accuracy": 0.0, "ci95": [0.0, 0.7935], "apiErrors": 0},
    }
    result = {"config": config, "summary": summary, "results": list(rows), "publishable": False}
    items = [view.Item(row["id"], row, dict(calls)) for row in rows]
    return view.page(view.Run(task, config, result, None, None, items))


def test_the_default_shows_the_graded_fields_a_row_holds_escaped(registered):  # noqa: F811
    text = page_of(registered(Graded))
    assert "<dt>spelt</dt><dd>&lt;b&gt;wierd&lt;/b&gt;</dd>" in text
    assert "<dt>missing</dt>" not in text  # a field the row does not hold is not shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\u202e\\x1b[2J" in text  # the reply
    assert "<title>m&lt;x&gt; · Spelling bee — local run page</title>" in text
    assert '<span class="badge band">long</span>' in text
    assert '<th scope="row">long</th>' in text and "0.0–79.3" in text  # each band's score
    assert '<th scope="row">short</th><td class="num score" title="—">—' in text  # none answered


def test_an_evals_own_parts_are_escaped_and_passages_kept_as_written(registered):  # noqa: F811
    text = page_of(registered(OwnParts))
    assert '<dt>&lt;i&gt;Letters&lt;/i&gt;</dt><dd class="wrong">w-i-e-r-d</dd>' in text
    assert (
        '<div class="block passage"><div class="label">Its &quot;own&quot; passage</div>'
        '<div class="text">line 1\n&lt;line 2&gt;</div></div>'
    ) in text


def test_the_page_holds_no_script_and_lets_none_run_nor_anything_load(registered):  # noqa: F811
    text = page_of(registered(OwnParts))
    assert re.findall(r"<script|<link|<img|src=|href=", text) == []
    assert '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';' in text


def test_a_huge_text_is_cut_saying_how_much_more_there_was():
    shown = view._text("é" * (view.LIMIT + 1234) + "\t\r\n\u2028")
    assert shown.endswith(f"\n… (1,238 more characters, cut here; the run folder holds them all)")
    assert shown.count("é") == view.LIMIT
    assert view._text("a\tb\r\nc\u200bd\x00") == "a\tb\nc\\u200bd\\x00"
