"""Evals that other packages register, through the `roblox_evals` entry point: the example
`examples/echo_eval` runs as a user who installed it would run it (`pytest -m echo`), with a
result file, a rerun that asks nothing and a verify that says ok, while the three built-in
evals behave as they do without it. An entry point that fails to import is one line; the
schemas read the registry of evals, and an eval's bands check its result files.

Installing the example into a throwaway venv would cost a resolver run per test; instead its
package folder and a `*.dist-info` holding its entry point are put on the PYTHONPATH of the
commands the test starts, which is all `importlib.metadata` reads. An interpreter reads that
PYTHONPATH as it starts, so those commands are real execs (tests/support/warm.py starts the others
warm), and `python -c` probes show what a fresh interpreter registers and imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evals.results import without_timing
from tests.support.harness import (
    ROOT,
    harness_env,
    read_result,
    result_files,
    run_cli,
    run_harness,
)
from tests.support.loopback import OpenAIServer

EXAMPLE = ROOT / "examples" / "echo_eval"
WORDS = [
    json.loads(line)["word"]
    for line in (EXAMPLE / "echo_eval" / "words.jsonl").read_text().splitlines()
]


def installed(tmp_path: Path, name: str, entry_points: str, *paths: Path) -> dict[str, str]:
    """The environment of a pytest that sees the distribution `name` installed: its
    entry_points.txt in a dist-info on the PYTHONPATH, beside `paths`."""
    site = tmp_path / "site"
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    return harness_env(PYTHONPATH=os.pathsep.join(map(str, [site, *paths])))


@pytest.fixture
def echo_env(tmp_path):
    return installed(tmp_path, "echo-eval", "[roblox_evals]\necho = echo_eval\n", EXAMPLE)


def echo_replies(request) -> str:
    """A model that repeats the word it is asked to (the last word of the prompt)."""
    return request.body["messages"][-1]["content"].rsplit(" ", 1)[-1]


def test_an_installed_eval_runs_with_its_marker_and_a_rerun_asks_nothing(echo_env, tmp_path):
    runs, results = tmp_path / "runs", tmp_path / "results"
    with OpenAIServer(echo_replies) as server:
        args = ["--provider=openai", "--model=m", f"--base-url={server.url}/v1", "-m", "echo", "-v"]
        done = run_harness(*args, run_dir=runs, results_dir=results, env=echo_env)
        asked = len(server.requests)
        first = read_result(results, "echo")
        rerun = run_harness(*args, run_dir=runs, results_dir=results, env=echo_env)
        asked_again = len(server.requests) - asked

    assert done.returncode == 0 and "5 passed" in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    assert "tests_evals/test_registered.py::test_registered[echo:echo-1] PASSED" in done.stdout
    assert asked == len(WORDS) and first["config"]["eval"] == "echo"
    assert first["summary"]["n"] == 5 and first["summary"]["accuracy"] == 1.0
    assert [row["expected"] for row in first["results"]] == WORDS
    assert not list(results.glob("multiple_choice/*")) and not list(
        results.glob("leetcode/*")
    )  # -m echo: only echo ran
    assert rerun.returncode == 0 and asked_again == 0, rerun.stdout[-3000:]
    assert without_timing(read_result(results, "echo")) == without_timing(first)


def test_an_installed_evals_own_flag_reaches_its_resources_and_verify_rescores_with_it(
    echo_env, tmp_path
):
    """echo declares `--echo-ignore-case` (`Task.flags`, as the eval guide shows): pytest takes it,
    `Echo.resources` gets its value, the result file records it (`gradedWith`), and verify
    rescores with what the file recorded, not with the default."""
    runs, results = tmp_path / "runs", tmp_path / "results"
    with OpenAIServer(lambda request: echo_replies(request).upper()) as server:
        args = ["--provider=openai", "--model=m", f"--base-url={server.url}/v1", "-m", "echo"]
        exact = run_harness(*args, run_dir=runs, results_dir=results, env=echo_env)
        assert exact.returncode == 0 and "5 wrong" in exact.stdout, (
            exact.stdout[-3000:] + exact.stderr[-2000:]
        )
        assert "gradedWith" not in read_result(results, "echo")  # the default: nothing recorded
        ignoring = run_harness(
            *args, "--echo-ignore-case", run_dir=runs, results_dir=results, env=echo_env
        )

    assert ignoring.returncode == 0 and "5 passed" in ignoring.stdout, (
        ignoring.stdout[-3000:] + ignoring.stderr[-2000:]
    )
    result = read_result(results, "echo")
    assert (
        result["gradedWith"] == {"--echo-ignore-case": True}
        and result["summary"]["accuracy"] == 1.0
    )
    (path,) = result_files(results, "echo")
    probe = (
        "from pathlib import Path; from evals.verify import compare; "
        f"print(*compare(Path({str(path)!r}), run_root=Path({str(runs)!r})))"
    )
    verified = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=echo_env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        verified.stdout.strip() == "ok"
    )  # before the record, verify rescored by exact match: DIFF


def test_evaluate_takes_an_evals_and_a_providers_own_flags_and_a_bare_resume_keeps_them(tmp_path):
    """Both packages written as the guides show, neither row saying `resume`: evaluate takes
    and hands on each package's own flag, its plan keeps both (`howToRun`), and a bare
    `evaluate NAME` passes them again."""
    from tests.support.board import META, evaluate_command

    env = installed(
        tmp_path,
        "echo-eval",
        "[roblox_evals]\necho = echo_eval\necho_provider = tests.support.echo_provider\n",
        EXAMPLE,
        ROOT,
    )
    data = tmp_path / "data"
    first = run_cli(
        evaluate_command(
            data,
            "Parrot",
            "--provider=echo",
            "--model=parrot",
            *META,
            "--evals=echo",
            "--stutter",
            "--echo-ignore-case",
            "--no-build",
        ),
        env=env,
    )
    (plan,) = (data / "plans").glob("*.json")
    assert json.loads(plan.read_text())["howToRun"] == {
        "--echo-ignore-case": True,
        "--stutter": True,
    }, first.stdout[-3000:] + first.stderr[-2000:]
    assert (
        "--echo-ignore-case" in first.stdout and "--stutter" in first.stdout
    )  # on echo's pytest command

    resumed = run_cli(
        evaluate_command(data, "Parrot", "--evals=echo", "--force", "--dry-run"), env=env
    )  # --force: run again

    commands = [line for line in resumed.stdout.splitlines() if line.strip().startswith("echo:")]
    assert resumed.returncode == 0 and commands, resumed.stdout[-3000:] + resumed.stderr[-2000:]
    assert all("--stutter" in line and "--echo-ignore-case" in line for line in commands), commands


def test_an_installed_eval_verifies_and_stays_off_the_board(echo_env, tmp_path):
    """The reference provider answers its gold replies; verify rescores the run from its
    folder; models.json and the schemas ask no entry for an echo result."""
    runs, results = tmp_path / "runs", tmp_path / "results"
    done = run_harness(
        "--provider=reference", "-m", "echo", run_dir=runs, results_dir=results, env=echo_env
    )
    assert done.returncode == 0 and "5 passed" in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    (path,) = result_files(results, "echo")
    probe = f"""
import json
from pathlib import Path
from evals import models_file, schema
from evals.extensions import builtin, on_board, tasks
from evals.verify import compare
print(json.dumps({{
    "verify": compare(Path({str(path)!r}), run_root=Path({str(runs)!r})),
    "evals": list(tasks()), "board": list(on_board()), "builtin": [n for n in tasks() if builtin(n)],
    "resultFiles": list(models_file.RESULT_KEYS), "kilowattHour": list(models_file.KWH_KEYS),
    "entryNeeds": sorted(schema.ResultFiles.model_fields),
}}))
"""
    seen = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env=echo_env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert seen["verify"] == ["ok", ""]
    assert seen["evals"] == ["freeform", "multiple_choice", "leetcode", "echo"]
    assert seen["board"] == seen["builtin"] == ["freeform", "multiple_choice", "leetcode"]
    assert seen["resultFiles"] == [
        "freeform",
        "multipleChoice",
        "leetcode",
    ]  # models.json asks no echo result
    assert seen["entryNeeds"] == sorted(seen["resultFiles"])
    assert seen["kilowattHour"] == ["freeform", "multipleChoice", "easy", "medium", "hard"]


def test_the_built_in_evals_are_unchanged_with_another_eval_installed(echo_env, tmp_path):
    """Same node ids, same result files (timing aside), the echo items beside them."""
    without = run_harness(
        "--provider=reference", "-q", run_dir=tmp_path / "a", results_dir=tmp_path / "ra"
    )
    with_echo = run_harness(
        "--provider=reference",
        "-q",
        run_dir=tmp_path / "b",
        results_dir=tmp_path / "rb",
        env=echo_env,
    )
    assert without.returncode == with_echo.returncode == 0, (
        with_echo.stdout[-3000:] + with_echo.stderr[-2000:]
    )
    for name in ("multiple_choice", "freeform", "leetcode"):
        assert without_timing(read_result(tmp_path / "ra", name)) == without_timing(
            read_result(tmp_path / "rb", name)
        )
        assert [p.name for p in result_files(tmp_path / "ra", name)] == [
            p.name for p in result_files(tmp_path / "rb", name)
        ]
    assert result_files(tmp_path / "rb", "echo") and not (tmp_path / "ra" / "echo").exists()

    ids = {
        env_name: run_cli(
            [
                sys.executable,
                "-m",
                "pytest",
                "--provider=reference",
                "--collect-only",
                "-q",
                f"--run-dir={tmp_path / 'c'}",
                f"--results-dir={tmp_path / 'rc'}",
            ],
            env=env,
        ).stdout.splitlines()
        for env_name, env in {"without": harness_env(), "with": echo_env}.items()
    }
    built_in = [line for line in ids["with"] if "::" in line and "test_registered" not in line]
    assert built_in == [line for line in ids["without"] if "::" in line]
    assert "tests_evals/test_robloxqa.py::test_multiple_choice[mc-001]" in built_in
    assert [line for line in ids["with"] if "test_registered" in line] == [
        f"tests_evals/test_registered.py::test_registered[echo:echo-{n}]" for n in range(1, 6)
    ]


def test_an_entry_point_that_fails_to_import_is_one_line_naming_it(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "broken_eval.py").write_text("import a_module_that_is_not_installed\n")
    env = installed(tmp_path, "broken-eval", "[roblox_evals]\nbroken = broken_eval\n", broken)
    done = run_harness(
        "--provider=reference", run_dir=tmp_path / "runs", results_dir=tmp_path / "results", env=env
    )
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "broken" in line]
    assert done.returncode == 2
    assert errors == [
        "ERROR: the roblox_evals entry point 'broken' of broken-eval 0.1.0 (broken_eval) failed to load: "
        "ModuleNotFoundError: No module named 'a_module_that_is_not_installed'; fix or uninstall broken-eval"
    ], done.stdout + done.stderr


def test_the_schemas_read_the_registry_of_evals_not_models_json_code():
    """schema builds its models from the registry of evals (evals/tasks/_registry.py);
    models_file.py, which checks models.json with those models, imports schema: one way, no cycle."""
    probe = (
        "import sys, evals.schema; print(sorted(m for m in sys.modules "
        "if m in ('evals.models_file', 'evals.tasks._registry')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=harness_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["['evals.tasks._registry']"]


BANDED = """
from evals.extensions import register_task
from evals.tasks import Task

@register_task
class Tiers(Task):
    name, tag, key, prompt_version = "tiers", "ti", "tiers", "ti-v1"
    bands, band_field, on_board = ("low", "high"), "tier", False

    def load(self, source, split):
        return [], {"name": "bundled"}

    def prompt(self, sample):
        return ""

    def score(self, sample, completion, scoring):
        return {}
"""


def test_an_eval_with_bands_has_its_result_files_checked_by_its_own_bands(tmp_path):
    """The banded result model comes from `Task.bands` and `band_field`, for any eval."""
    (tmp_path / "tiers_eval.py").write_text(BANDED)
    env = installed(tmp_path, "tiers-eval", "[roblox_evals]\ntiers = tiers_eval\n", tmp_path)
    probe = """
import json
from evals import schema
summary = {"n": 1, "correct": 1, "accuracy": 1.0, "ci95": [0.2, 1.0], "tokens": {"input": 1, "output": 1}}
def result(band, eval="tiers"):
    return {"config": {"eval": eval, "provider": "p", "model": "m"}, \
"summary": {"overall": summary, "low": summary, "high": summary},
            "results": [{"id": "a", "status": "correct", "correct": True, "tier": band}]}
print(json.dumps([schema.problem(schema.result_model(r), r) \
for r in (result("low"), result("mid"), result("low", "leetcode"))]))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    ok, wrong_band, leetcode = json.loads(done.stdout)
    assert ok is None
    assert wrong_band == 'results[0].tier: must be one of low, high (got "mid")'
    assert leetcode.startswith("summary.easy: missing")  # leetcode's own model: its bands
