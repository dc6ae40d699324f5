"""What a model, a server or a dataset wrote reaches the terminal escaped, one line per item:
it can neither drive the terminal (set its title, clear it, write the clipboard) nor forge
lines of the report, while the files keep the text as it was; on a cp1252 console, text it
cannot encode shows as escapes. `printable` alone is tests/unit/test_hostile_text.py.

`pytest` starts warm (tests/support/warm.py), and what reaches its own streams is read; the
cp1252 commands are real execs, since PYTHONIOENCODING is read as the interpreter starts. The
server runs on a thread of the test."""

from __future__ import annotations

import json
import re
import subprocess

from tests.support.board import evaluate_command
from tests.support.harness import (
    ROOT,
    harness_command,
    harness_env,
    read_result,
    run_harness,
)
from tests.support.loopback import Answer, OpenAIServer, last_user_text

# Set the terminal's title, clear the screen, write the clipboard (OSC 52), a CSI in its 8-bit
# form, a bidi override that shows text reversed, then forged report lines and 4,000 newlines.
FORGED = "\n".join(
    ["PASSED tests_evals/test_leetcode.py::test_leetcode[lc-easy-01]", "=== 30 passed in 0.12s ==="]
)
HOSTILE = (
    "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m\u202edessap\u2028" + FORGED + "\n" * 4000
)
LUAU_STRING = "".join(
    c if c.isalnum() or c in " =:;._-[]()" else f"\\u{{{ord(c):x}}}" for c in HOSTILE
)
LEETCODE = [
    json.loads(line)
    for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()
][:3]


def hostile_model(request) -> Answer:
    """Every LeetCode reply errors while its module loads, with the hostile text as its message."""
    return Answer(f'```luau\nerror("{LUAU_STRING}", 0)\nreturn {{}}\n```')


def test_a_hostile_error_message_is_one_escaped_line_and_the_file_keeps_it_whole(tmp_path):
    with OpenAIServer(hostile_model) as server:
        # the first problem's request is refused, with the hostile text as the server's message
        server.fail_when(
            lambda r: LEETCODE[0]["problem_description"].strip() in last_user_text(r.body),
            400,
            body={"error": {"message": HOSTILE, "type": "invalid_request_error"}},
        )
        dataset = tmp_path / "problems.jsonl"
        dataset.write_text("".join(json.dumps(p) + "\n" for p in LEETCODE))
        done = run_harness(
            "--provider=openai",
            "--model=coder",
            f"--base-url={server.url}/v1",
            "-m",
            "leetcode",
            f"--dataset={dataset}",
            "--color=no",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
            timeout=300,
        )
    output = done.stdout + done.stderr
    assert not re.search(
        r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", output
    ), "a control character reached the terminal"
    assert "\\x1b]0;pwned\\x07" in output  # shown as its escapes
    wrong = [line for line in output.splitlines() if line.startswith("WRONG ")]
    assert len(wrong) == len(LEETCODE) - 1, output[-3000:]
    errors = [
        line for line in output.splitlines() if line.startswith("ApiError:") and "HTTP 400" in line
    ]
    assert errors and all("\\x1b[2J" in line and len(line) < 800 for line in errors), output[-3000:]
    assert all("more characters)" in line and len(line) < 800 for line in wrong)  # cut, saying so
    assert not any(
        line.startswith("PASSED") or re.match(r"=+ 30 passed", line) for line in output.splitlines()
    )
    assert len(output.splitlines()) < 60, output[-3000:]
    rows = [
        row
        for row in read_result(tmp_path / "results", "leetcode")["results"]
        if row["status"] != "apiError"
    ]
    assert len(rows) == 2 and all(
        HOSTILE.rstrip("\n") in row["note"] for row in rows
    )  # the file has the text as it was


def test_a_dataset_whose_reference_errors_with_hostile_text_is_one_escaped_error_line(tmp_path):
    dataset = tmp_path / "problems.jsonl"
    broken = {**LEETCODE[0], "solution": f'error("{LUAU_STRING}", 0)\nreturn {{}}'}
    dataset.write_text(json.dumps(broken) + "\n")
    done = run_harness(
        "--provider=reference",
        "-m",
        "leetcode",
        f"--dataset={dataset}",
        "--color=no",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert not re.search(
        r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", output
    ), "a control character reached the terminal"
    errors = [line for line in output.splitlines() if line.startswith("DatasetError:")]
    assert (
        len(errors) == 1 and "\\x1b]0;pwned\\x07" in errors[0] and "more characters)" in errors[0]
    ), output[-3000:]
    assert len(output.splitlines()) < 40, output[-3000:]


# -- a console or pipe that is not UTF-8 (cp1252: a Windows pipe, `> out.txt`) --------------------

CP1252 = {"PYTHONIOENCODING": "cp1252"}


def test_a_reply_in_cjk_and_emoji_reaches_a_cp1252_console_as_escapes(tmp_path):
    dataset = tmp_path / "problems.jsonl"
    dataset.write_text("".join(json.dumps(p) + "\n" for p in LEETCODE[:2]))
    with OpenAIServer(
        lambda request: Answer('```luau\nerror("答え 👍 é", 0)\nreturn {}\n```')
    ) as server:
        command = harness_command(
            "--provider=openai",
            "--model=coder",
            f"--base-url={server.url}/v1",
            "-m",
            "leetcode",
            f"--dataset={dataset}",
            "--color=no",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        done = subprocess.run(
            command, cwd=ROOT, env=harness_env(**CP1252), capture_output=True, timeout=300
        )
    stdout, stderr = done.stdout.decode("cp1252"), done.stderr.decode("cp1252")
    assert done.returncode == 0 and "Traceback" not in stdout + stderr, (
        stdout[-3000:] + stderr[-3000:]
    )
    wrong = [line for line in stdout.splitlines() if line.startswith("WRONG ")]
    assert len(wrong) == 2 and all(
        line.endswith("error in solution: \\u7b54\\u3048 \\U0001f44d \\xe9") for line in wrong
    ), wrong


def test_evaluate_on_a_cp1252_console_shows_a_name_it_cannot_encode_as_escapes(tmp_path):
    """print() raised UnicodeEncodeError on the model's name: stdout was strict, stderr is not."""
    done = subprocess.run(
        evaluate_command(tmp_path / "data", "モデル 👍", "--provider=reference", "--dry-run"),
        cwd=ROOT,
        env=harness_env(**CP1252),
        capture_output=True,
        timeout=120,
    )
    stdout, stderr = done.stdout.decode("cp1252"), done.stderr.decode("cp1252")
    assert done.returncode == 0 and stderr == "", stderr
    assert stdout.startswith("\\u30e2\\u30c7\\u30eb \\U0001f44d:\n")
