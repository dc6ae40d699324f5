"""Luau LeetCode through the whole harness: code extraction, the sandbox verdicts of hostile
solutions, per-difficulty summaries, and xdist runs agreeing with serial ones."""

from __future__ import annotations

import pytest

from evals.grading.luau_code import extract_code
from tests.support.harness import (
    PROBLEMS,
    run_harness,
)
from tests.support.loopback import Answer, OpenAIServer

MODULE = "local Solution = {}\nfunction Solution.twoSum(nums, target)\n\treturn {1, 2}\nend\nreturn Solution\n"


@pytest.mark.parametrize(
    "reply, expected",
    [
        (f"```luau\n{MODULE}```", MODULE),
        (f"```lua\n{MODULE}```", MODULE),
        (f"Here you go:\n```\n{MODULE}```\nDone.", MODULE),
        (f"```Luau\n{MODULE}```", MODULE),
        (f"A helper first:\n```luau\nlocal function helper() end\n```\nThen the module:\n```luau\n{MODULE}```", MODULE),
        (f"```luau\n{MODULE}```\nUsage:\n```luau\nprint(Solution.sum({{1}}, 1))\n```", MODULE),
        (f"```python\ndef twoSum(): pass\n```\n```luau\n{MODULE}```", MODULE),
        (MODULE, MODULE),  # bare code, no fence
        ("I cannot solve this.", None),
        ("```python\ndef twoSum(nums, target):\n    return [0, 1]\n```", None),
        ("```luau\n```", None),
        ("", None),
        ("Here:\r\n```luau\r\n" + MODULE.replace("\n", "\r\n") + "```\r\nDone.", MODULE),  # Windows line endings
    ],
    ids=["luau", "lua", "untagged", "tag-case", "helper-then-module", "module-then-usage", "python-then-luau", "bare",
         "prose", "python-only", "empty-fence", "empty", "crlf"],
)
def test_extract_code(reply, expected):
    assert extract_code(reply, "twoSum") == expected


HOSTILE = {
    "lc-easy-01-two-sum-indices": "local Solution = {}\nfunction Solution.twoSum() while true do end end\nreturn Solution",
    "lc-easy-02-balanced-brackets": "local t, s = {}, 'x'\nfor i = 1, 40 do s ..= s; t[i] = s end\nreturn {}",
    "lc-easy-03-alnum-palindrome": "local Solution = {}\nfunction Solution.isPalindrome(s) return Solution.isPalindrome(s) end\nreturn Solution",
    "lc-easy-04-stock-single-trade": "os.exit(0)\nreturn {}",
    "lc-easy-05-first-occurrence": "getfenv(0).expect = function() return setmetatable({}, {__index = function() return function() end end}) end\nreturn {}",
    "lc-easy-06-merge-sorted-lists": "for i = 1, 200000 do print(string.rep('spam', 64)) end\nreturn {}",
    "lc-easy-07-bit-count-table": "coroutine.yield()\nreturn {}",
}


def responder(request) -> Answer:
    prompt = request.body["messages"][-1]["content"]
    problem = next(p for p in PROBLEMS if p["problem_description"].strip() in prompt)
    if problem["task_id"] in HOSTILE:
        return Answer(f"```luau\n{HOSTILE[problem['task_id']]}\n```")
    code = problem["wrong_solution"] if problem["difficulty"] == "Hard" else problem["solution"]
    return Answer(f"Here is my solution.\n\n```luau\n{code}\n```", input_tokens=500, output_tokens=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One serial and one xdist run against the same model."""
    tmp = tmp_path_factory.mktemp("leetcode")
    with OpenAIServer(responder) as server:
        args = ["--provider=openai", "--model=coder", f"--base-url={server.url}/v1", "-m", "leetcode", "--luau-timeout=5"]
        serial = run_harness(*args, "-n", "0", run_dir=tmp / "a", results_dir=tmp / "ra", timeout=300)
        parallel = run_harness(*args, "-n", "2", run_dir=tmp / "b", results_dir=tmp / "rb", timeout=300)
    return tmp, serial, parallel


# Return annotations that nest as deep as they are long, at depths Luau compiles: a walk that
# recursed once per level would pass Python's recursion limit in the grading process.


# References that never finish, overrun a limit or fail, as a dataset may hold by mistake, and
# the reason each problem's DatasetError gives.


