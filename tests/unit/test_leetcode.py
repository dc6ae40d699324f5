"""Luau LeetCode, in process: the code extracted from a reply (fenced with any tag, after a
helper, before a usage example, or bare), or none. Whole runs through the harness are
tests/e2e/test_leetcode.py."""

from __future__ import annotations

import pytest

from evals.grading.luau_code import extract_code

MODULE = "local Solution = {}\nfunction Solution.twoSum(nums, target)\n\treturn {1, 2}\nend\nreturn Solution\n"


@pytest.mark.parametrize(
    "reply, expected",
    [
        (f"```luau\n{MODULE}```", MODULE),
        (f"```lua\n{MODULE}```", MODULE),
        (f"Here you go:\n```\n{MODULE}```\nDone.", MODULE),
        (f"```Luau\n{MODULE}```", MODULE),
        (
            f"A helper first:\n```luau\nlocal function helper() end\n```\nThen the module:\n```luau\n{MODULE}```",
            MODULE,
        ),
        (f"```luau\n{MODULE}```\nUsage:\n```luau\nprint(Solution.sum({{1}}, 1))\n```", MODULE),
        (f"```python\ndef twoSum(): pass\n```\n```luau\n{MODULE}```", MODULE),
        (MODULE, MODULE),  # bare code, no fence
        ("I cannot solve this.", None),
        ("```python\ndef twoSum(nums, target):\n    return [0, 1]\n```", None),
        ("```luau\n```", None),
        ("", None),
        (
            "Here:\r\n```luau\r\n" + MODULE.replace("\n", "\r\n") + "```\r\nDone.",
            MODULE,
        ),  # Windows line endings
    ],
    ids=[
        "luau",
        "lua",
        "untagged",
        "tag-case",
        "helper-then-module",
        "module-then-usage",
        "python-then-luau",
        "bare",
        "prose",
        "python-only",
        "empty-fence",
        "empty",
        "crlf",
    ],
)
def test_extract_code(reply, expected):
    assert extract_code(reply, "twoSum") == expected


# Return annotations that nest as deep as they are long, at depths Luau compiles: a walk that
# recursed once per level would pass Python's recursion limit in the grading process.


# References that never finish, overrun a limit or fail, as a dataset may hold by mistake, and
# the reason each problem's DatasetError gives.


@pytest.mark.parametrize(
    "value, line",
    [
        ("abc", "gradedWith.--luau-timeout is 'abc', not a value of --luau-timeout"),
        (1e308, "gradedWith.--luau-timeout: --luau-timeout must be a number of seconds above 0"),
        (-1, "gradedWith.--luau-timeout: --luau-timeout must be a number of seconds above 0"),
    ],
)
def test_a_recorded_flag_value_a_hand_edit_broke_is_one_line_naming_the_field(value, line):
    """Verify rescores with the values a result file recorded: one the flag itself would turn
    down is the file's fault, said as such (not Python's TypeError or OverflowError)."""
    from evals.errors import DataFileError
    from evals.tasks import TASKS, recorded_values

    with pytest.raises(DataFileError) as raised:
        recorded_values(TASKS["leetcode"], {"gradedWith": {"--luau-timeout": value}})
    assert str(raised.value).startswith(line), str(raised.value)
    recorded = recorded_values(TASKS["leetcode"], {"gradedWith": {"--luau-timeout": 0.5}})
    assert 0.5 in recorded.values()
