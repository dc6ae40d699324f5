"""Start-up: a run imports the SDK of each provider it calls and nothing heavier. A judge's
SDK (anthropic, seconds to import) is not imported by a run that asks no judge, though its
key is still redacted; torch and huggingface_hub only when a local model or the Hub is used;
pydantic only when there is a models.json entry or a result file to check."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import ROOT, harness_env
from tests.loopback import OpenAIServer

# pytest.main in a child, then which heavy modules it imported.
PROBE = """
import json, sys, pytest
code = pytest.main(sys.argv[1:])
print(json.dumps({"exit": int(code), "modules": sorted(m for m in ("openai", "anthropic", "torch", "transformers", "huggingface_hub", "httpx", "pydantic") if m in sys.modules)}))
"""


def imported(*args: str, tmp_path, env_extra: dict[str, str] | None = None) -> dict:
    command = [sys.executable, "-c", PROBE, "-q", "-p", "no:cacheprovider", f"--run-dir={tmp_path / 'runs'}", f"--results-dir={tmp_path / 'results'}", *args]
    done = subprocess.run(command, cwd=ROOT, env=harness_env(ANTHROPIC_API_KEY="fake-anthropic-key", **(env_extra or {})),
                          capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_openai_run_without_judged_items_imports_only_the_openai_sdk(tmp_path):
    with OpenAIServer() as server:
        # The default judges include an Anthropic model; no freeform item runs, so none is asked.
        seen = imported("--provider=openai", "--model=m", f"--base-url={server.url}/v1", "-m", "multiple_choice", "--limit=2", tmp_path=tmp_path)
    assert "openai" in seen["modules"] and not {"anthropic", "torch", "transformers", "huggingface_hub"} & set(seen["modules"]), seen
    assert seen["exit"] in (0, 1)


def test_an_offline_run_imports_no_sdk(tmp_path):
    """Nor pydantic: with nothing in models.json, no schema is needed (evals/schema.py)."""
    seen = imported("--provider=reference", "--limit=2", tmp_path=tmp_path)
    assert seen["exit"] == 0 and not {"openai", "anthropic", "torch", "transformers", "huggingface_hub", "pydantic"} & set(seen["modules"]), seen


@pytest.mark.parametrize("judge", ["anthropic:claude-judge"])
def test_a_judged_run_imports_the_judges_sdk(tmp_path, judge):
    with OpenAIServer() as server:
        seen = imported("--provider=openai", "--model=m", f"--base-url={server.url}/v1", f"--judge={judge}@{server.url}",
                        "-m", "freeform", "--limit=1", tmp_path=tmp_path)
    assert "anthropic" in seen["modules"]


def test_an_xdist_controller_imports_no_sdk_and_still_checks_the_key(tmp_path):
    """The controller asks nothing, its workers do: importing the SDK there only delays the
    workers' start. A missing key still stops the command with one line."""
    with OpenAIServer() as server:
        args = ("--provider=openai", "--model=m", f"--base-url={server.url}/v1", "-m", "multiple_choice", "--limit=4", "-n", "2")
        seen = imported(*args, tmp_path=tmp_path)
        assert seen["exit"] in (0, 1) and len(server.requests) == 4, seen
        assert not {"openai", "anthropic"} & set(seen["modules"]), seen
        missing = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--run-dir={tmp_path / 'runs'}",
                                  f"--results-dir={tmp_path / 'results'}", *args],
                                 cwd=ROOT, env={**harness_env(), "OPENAI_API_KEY": ""}, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 4 and "OPENAI_API_KEY is not set" in missing.stderr + missing.stdout, missing.stdout[-2000:] + missing.stderr[-2000:]
    assert len(server.requests) == 4
