"""The bounded reader (evals.bounded): the depth scan counts only brackets outside strings, in
one pass; a file past the size limit, or no regular file, is refused before it is read whole."""

from __future__ import annotations

import json
import os
import sys

import pytest

from evals import bounded
from evals.errors import FileLimitError


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100 + "]" * 100,
        '["' + "[" * 1000 + '"]',  # brackets in a string are text
        '["\\"' + "[" * 200 + '"]',  # an escaped quote does not end the string
        '[{"a": "\\\\"}, ' + "[" * 98 + "]" * 98 + "]",  # an escaped backslash does not escape
        "[1, 2]" * 10_000,  # many brackets, none deep
    ],
)
def test_what_nests_at_most_the_limit_passes(text):
    bounded.check_depth(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 101 + "]" * 101,
        '{"a": ' * 101 + "1" + "}" * 101,
        '["\\\\", ' + "[" * 101,  # the string ends after its escaped backslash
        b"[" * 100_000,  # bytes too
    ],
)
def test_what_nests_deeper_is_refused_without_recursion(text):
    with pytest.raises(FileLimitError, match="nested more than 100 levels deep"):
        bounded.check_depth(text)


def test_a_deep_file_is_refused_before_json_loads(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(FileLimitError):
        bounded.load_json(path)


def test_a_file_past_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(["x" * 1000]))
    assert bounded.load_json(path, limit=2000) == ["x" * 1000]
    with pytest.raises(FileLimitError, match="larger than"):
        bounded.load_json(path, limit=999)


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        bounded.read_bytes(tmp_path / "none.json")
    (tmp_path / "file").write_text("")
    with pytest.raises(FileNotFoundError):
        bounded.read_bytes(tmp_path / "file" / "below.json")


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs or /dev/zero")
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_no_regular_file_is_refused_before_a_read(tmp_path, kind):
    path = tmp_path / "models.json"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a plain open would wait for one
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(FileLimitError, match="not a regular file"):
        bounded.read_bytes(path)


def test_a_line_past_the_line_limit_is_named():
    assert bounded.lines(b"a\nbb\n", limit=2) == [(1, b"a"), (2, b"bb"), (3, b"")]
    with pytest.raises(FileLimitError, match="line 2 is larger than"):
        bounded.lines(b"a\nbbb\n", limit=2)


def test_the_depth_scan_stays_linear_on_an_unterminated_string_of_escaped_quotes():
    """The string pattern walked escapes itself, and backtracked over an unterminated string
    of them: 80 KB of `\\"` took 20 s, a megabyte would take hours. Here a megabyte of them,
    given 10 s of an alarm (a linear scan takes milliseconds)."""
    import signal

    from evals import bounded
    from evals.errors import FileLimitError

    def too_long(*_):
        raise TimeoutError("the depth scan is not linear")

    hostile = "[" * 101 + '"' + '\\"' * 500_000
    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(10)
    try:
        with pytest.raises(FileLimitError, match="nested more than 100 levels"):
            bounded.check_depth(hostile)
        bounded.check_depth('["' + '\\"' * 500_000 + "[[[" * 50 + '"]')  # brackets in a string
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
