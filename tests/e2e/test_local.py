"""`--provider local` through the real command line, with a tiny random checkpoint and LoRA
adapter made on the spot (no download): a run that resumes from a moved folder, one line without
the `local` extra, xdist refused, `--device`, and `evaluate` handing the local flags on. The
provider itself is tests/unit/test_local.py.

`pytest` and `evaluate` start warm (tests/support/warm.py); the runs without torch are real execs,
since what is tested is what a fresh interpreter imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals.results import without_timing
from evals.verify import rescore
from tests.support.harness import (
    ROOT,
    harness_env,
    read_result,
    result_files,
    run_harness,
)

MAX_TOKENS = 6


# The harness's cache folder (file hashes) is the session's, never the user's.
pytestmark = pytest.mark.usefixtures("own_cache")


def local_run(checkpoint: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_harness(
        "--provider",
        "local",
        f"--model={checkpoint}",
        f"--max-tokens={MAX_TOKENS}",
        "-m",
        "multiple_choice",
        "--limit",
        "4",
        *extra,
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        env=harness_env(ROBLOX_EVALS_CACHE=str(tmp_path / "cache")),
        timeout=300,
    )


def records(run_dir: Path) -> dict[Path, tuple[int, bytes]]:
    return {
        path: (path.stat().st_mtime_ns, path.read_bytes())
        for path in run_dir.rglob("calls/*/*.json")
    }


def test_a_run_end_to_end_resumes_and_follows_the_files_not_their_path(tiny, tmp_path):
    """The real command writes a result file whose config records the checkpoint's hash; run
    again from a moved copy of the folder, it finds the same run and asks nothing."""
    checkpoint = tmp_path / "models" / "tiny"
    shutil.copytree(tiny["checkpoint"], checkpoint)
    first = local_run(checkpoint, tmp_path)
    assert "result file:" in first.stdout, first.stdout + first.stderr
    result = read_result(tmp_path / "results", "multiple_choice")
    config = result["config"]
    assert config["model"].startswith("sha256:") and str(checkpoint) not in json.dumps(result)
    assert (
        config["decoding"] == "greedy"
        and config["maxNewTokens"] == MAX_TOKENS
        and config["dtype"] == "float32"
    )
    assert config["chatTemplate"].startswith("sha256:")
    assert len(result["results"]) == 4 and all(
        0 < row["usage"]["output"] <= MAX_TOKENS and row["usage"]["input"] > 50
        for row in result["results"]
    )
    asked = records(tmp_path / "runs")
    assert len(asked) == 4

    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    checkpoint.rename(moved)
    again = local_run(moved, tmp_path)
    assert "result file:" in again.stdout, again.stdout + again.stderr
    assert records(tmp_path / "runs") == asked  # every record read back, none rewritten
    (path,) = result_files(tmp_path / "results", "multiple_choice")
    rerun = json.loads(path.read_text())
    assert {k: v for k, v in rerun.items() if k != "timing"} == {
        k: v for k, v in result.items() if k != "timing"
    }
    # Offline rescoring (verify) finds the run from its result file alone: hashes, no paths.
    assert rescore(path, run_root=tmp_path / "runs") == without_timing(result)


def test_without_the_extra_one_line_says_how_to_install(tmp_path):
    """torch made unimportable, as without `uv sync --extra local`; and the harness itself
    never imports torch unless the local provider is used."""
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    (tmp_path / "ckpt" / "chat_template.jinja").write_text("{{ messages }}")
    blocked = (
        "import sys\n"
        "class Missing:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'torch': raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Missing()); sys.modules.pop('torch', None)\n"
        "import pytest; "
        f"sys.exit(pytest.main(['--provider', 'local', '--model={tmp_path / 'ckpt'}', '-m', 'multiple_choice', "
        f"'--run-dir={tmp_path / 'runs'}', '--results-dir={tmp_path / 'results'}']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=harness_env(ROBLOX_EVALS_CACHE=str(tmp_path / "cache")),
    )
    assert done.returncode == 4
    assert (
        "ERROR: --provider local needs the optional extra `local`" in done.stderr
        and "uv sync --extra local" in done.stderr
    )
    assert done.stderr.strip().count("\n") == 0, done.stderr

    harness_only = (
        "import sys, plugins, plugins.items, plugins.collector, evals.evaluate, evals.providers.checkpoint; "
        "print('torch' in sys.modules)"
    )
    imports = subprocess.run(
        [sys.executable, "-c", harness_only], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert imports.stdout.strip() == "False", imports.stderr


def test_xdist_workers_are_refused(tiny, tmp_path):
    done = run_harness(
        "--provider",
        "local",
        f"--model={tiny['checkpoint']}",
        "-n",
        "2",
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert (
        done.returncode == 4
        and "loads the model once per process" in done.stderr
        and "-n 0" in done.stderr
    )


def test_device_is_how_to_run(tmp_path):
    done = run_harness(
        "--provider",
        "openai",
        "--model",
        "gpt-5.5",
        "--device",
        "cpu",
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert (
        done.returncode == 4 and "--device applies to --provider local, not openai" in done.stderr
    )
    assert os.environ.get("ROBLOX_EVALS_CACHE")  # own_cache keeps hashes out of the user's cache


def test_evaluate_takes_the_local_flags_and_hands_them_on(tiny, tmp_path):
    from tests.support.board import evaluate

    done = evaluate(
        tmp_path / "data",
        "Tiny",
        "--provider",
        "local",
        f"--model={tiny['checkpoint']}",
        "--device",
        "cpu",
        "--luau-timeout",
        "5",
        "--judge=reference:gold",
        "--dry-run",
        "--no-build",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    commands = [
        line for line in done.stdout.splitlines() if line.strip().startswith(("ff:", "mc:", "lc:"))
    ]
    assert len(commands) == 3 and all(
        "--device=cpu" in line and "--luau-timeout=5.0" in line for line in commands
    ), done.stdout
