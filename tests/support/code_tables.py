"""LeetCode replies in the shapes models write them, built from the bundled problems' own
solutions (and their known-wrong ones): `REPLIES` maps a case id to (reply, entry point, the
modules in it by name: "solution", "draft").
`tests/graders/test_readings.py` pins what the code extraction reads from each; the
sandbox's table runs each problem's solutions (`SOLUTIONS`)."""

from __future__ import annotations

import json

from evals.datasets.leetcode import BUNDLED

PROBLEMS = [json.loads(line) for line in BUNDLED.read_text(encoding="utf-8").splitlines() if line]

# Each shape wraps a module ({code}); {draft} is another module, a draft the reply moves past.
SHAPES = {
    "luau": "```luau\n{code}\n```",
    "lua": "Here is the solution:\n\n```lua\n{code}\n```\n",
    "untagged": "```\n{code}\n```",
    "tag-case": "```Luau\n{code}\n```",
    "bare": "{code}",
    "crlf": "Here:\r\n```luau\r\n{code_crlf}\r\n```\r\nDone.",
    "prose-around": "The idea: walk the input once.\n\n```luau\n{code}\n```\n\nThis runs in linear time.",
    "helper-first": "A helper first:\n```luau\nlocal function helper() end\n```\nThen:\n```luau\n{code}\n```",
    "usage-after": "```luau\n{code}\n```\nUsage:\n```luau\nprint(Solution)\n```",
    "python-then-luau": "```python\ndef solve():\n    pass\n```\n```luau\n{code}\n```",
    "draft-then-final": "First try:\n```luau\n{draft}\n```\nFixed:\n```luau\n{code}\n```",
    "think-draft": "<think>\n```luau\n{draft}\n```\n</think>\n```luau\n{code}\n```",
    "plain-thinking-draft": "Thinking...\n```luau\n{draft}\n```\n...done thinking.\n\n```luau\n{code}\n```",
    "unclosed-fence": "```luau\n{code}\n",
    "indented-fence": "  ```luau\n{code}\n  ```",
    "python-only": "```python\ndef solve():\n    return 0\n```",
    "prose-only": "I cannot solve this problem.",
    "empty-fence": "```luau\n```",
}


def _reply(shape: str, problem: dict, code: str, draft: str) -> str:
    return SHAPES[shape].format(code=code, code_crlf=code.replace("\n", "\r\n"), draft=draft)


REPLIES: dict[str, tuple[str, str, dict[str, str]]] = {}
SOLUTIONS: dict[str, tuple[str, str]] = {}  # id -> (solution, tests)
for problem in PROBLEMS:
    solution, wrong = problem["solution"].strip(), (problem.get("wrong_solution") or "").strip()
    draft = wrong or problem["starter_code"].strip()
    for shape in SHAPES:
        REPLIES[f"{problem['task_id']}:{shape}"] = (
            _reply(shape, problem, solution, draft),
            problem["entry_point"],
            {"solution": solution, "draft": draft},
        )
    SOLUTIONS[f"{problem['task_id']}:solution"] = (solution, problem["test"])
    if wrong:
        SOLUTIONS[f"{problem['task_id']}:wrong"] = (wrong, problem["test"])
    SOLUTIONS[f"{problem['task_id']}:starter"] = (problem["starter_code"], problem["test"])

# Hostile programs against the first problem's tests: each must end within the limits, the
# same way every time.
_FIRST = PROBLEMS[0]
HOSTILE = {
    "loop-forever": "while true do end",
    "error-on-load": 'error("no")',
    "syntax-error": "local function (",
    "deep-recursion": "local function f(n) return f(n + 1) + 1 end\nreturn f(1)",
    "string-bomb": 'local s = "x"\nwhile true do s = s .. s end',
    "returns-nothing": "local Solution = {}",
    "host-calls": "return { os = os, io = io, require = require, getfenv = getfenv }",
}
for _name, _code in HOSTILE.items():
    SOLUTIONS[f"hostile:{_name}"] = (_code, _FIRST["test"])
