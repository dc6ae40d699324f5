"""What a model, a server or a dataset wrote reaches the terminal escaped: `printable` escapes
what drives a terminal (its title, the screen, the clipboard, bidi overrides) and nothing else,
and cuts long text saying how much more there was. Whole runs are tests/e2e/test_hostile_text.py."""

from __future__ import annotations

import pytest

from evals.scrub import printable


@pytest.mark.parametrize(
    "text, shown",
    [
        ("plain text, é and 日本語 and an emoji 👍", "plain text, é and 日本語 and an emoji 👍"),
        ("a\nb\r\tc", "a\\nb\\r\\tc"),
        ("\x1b]0;t\x07", "\\x1b]0;t\\x07"),
        ("\x9b2J \x7f", "\\x9b2J \\x7f"),
        ("\u202eabc\u2066\u2028\u2029", "\\u202eabc\\u2066\\u2028\\u2029"),
        ("tag\U000e0041chars", "tag\\U000e0041chars"),
        (
            "family \U0001f468\u200d\U0001f469",
            "family \U0001f468\u200d\U0001f469",
        ),  # a joiner joins emoji, nothing else
        ("C:\\runs\\x", "C:\\runs\\x"),  # a Windows path in a message stays as typed
    ],
)
def test_printable_escapes_what_drives_a_terminal_and_nothing_else(text, shown):
    assert printable(text) == shown


def test_printable_cuts_long_text_saying_how_much_more_there_was():
    assert printable("ab\n" * 10, limit=6) == "ab\\nab... (34 more characters)"


# -- a console or pipe that is not UTF-8 (cp1252: a Windows pipe, `> out.txt`) --------------------
