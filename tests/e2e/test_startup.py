"""Start-up: the model's SDK is imported only by the process that asks the model, and only the
SDKs of the providers a run calls. pytest's own process imports none for a provider that asks
over the network: a child process asks (`evals.askers.processes`) and imports the SDK while pytest
plans and collects. A judge's SDK (anthropic) is not imported by a run that asks no judge,
though its key is still redacted; torch and huggingface_hub only when a local model or the Hub
is used; pydantic only when there is a models.json entry or a result file to check; the Luau
sandbox (pluau) only when a reply is graded, never to plan a run.

Every `pytest` is a real exec, since what a fresh interpreter imports is what is tested: a
sitecustomize on its PYTHONPATH notes the heavy modules each process of the run imports (xdist
workers and asking processes too). The model is a loopback server on a thread of the test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.harness import ROOT, harness_env
from tests.support.loopback import OpenAIServer

HEAVY = ("openai", "anthropic", "torch", "transformers", "huggingface_hub", "pydantic", "pluau")
# Loaded by every Python process the run starts (PYTHONPATH): an audit hook notes each heavy
# module as it is imported, in a file per process named by its pid, beside its command line.
SITECUSTOMIZE = f"""
import json, os, sys
_heavy = {HEAVY!r}
_out = os.path.join(os.environ["IMPORTS_SEEN"], f"{{os.getpid()}}.json")
_seen = set()
def _note(event, args):
    if event == "import" and args[0] in _heavy and args[0] not in _seen:
        _seen.add(args[0])
        with open(_out, "w") as f:
            json.dump({{"argv": sys.orig_argv, "modules": sorted(_seen)}}, f)
sys.addaudithook(_note)
with open(_out, "w") as f:
    json.dump({{"argv": sys.orig_argv, "modules": []}}, f)
"""


def imported(*args: str, tmp_path, env_extra: dict[str, str] | None = None) -> dict:
    """Which heavy modules pytest's processes (with -n, the workers too) imported, and which
    the asking processes did."""
    hook, seen = tmp_path / "hook", tmp_path / "seen"
    hook.mkdir()
    seen.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--run-dir={tmp_path / 'runs'}",
        f"--results-dir={tmp_path / 'results'}",
        *args,
    ]
    env = harness_env(
        ANTHROPIC_API_KEY="fake-anthropic-key",
        PYTHONPATH=str(hook),
        IMPORTS_SEEN=str(seen),
        **(env_extra or {}),
    )
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    processes = [json.loads(path.read_text()) for path in seen.glob("*.json")]
    asking = [p["modules"] for p in processes if "evals.askers.processes" in p["argv"]]
    pytest_processes = [
        p["modules"] for p in processes if "evals.askers.processes" not in p["argv"]
    ]  # pytest's, and xdist workers
    return {
        "exit": done.returncode,
        "pytest": sorted({m for modules in pytest_processes for m in modules}),
        "asking": sorted({m for modules in asking for m in modules}),
        "askers": len(asking),
        "output": done.stdout[-2000:],
        "workers": sum(
            any("exec(eval(sys.stdin.readline()))" in arg for arg in p["argv"]) for p in processes
        ),
    }  # as execnet starts an xdist worker


def test_an_openai_run_without_judged_items_imports_only_the_openai_sdk(tmp_path):
    with OpenAIServer() as server:
        # The default judges include an Anthropic model; no freeform item runs, so none is asked.
        seen = imported(
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            "--limit=2",
            tmp_path=tmp_path,
        )
    assert seen["exit"] == 0 and "2 wrong" in seen["output"], (
        seen
    )  # the loopback model names no letter: two wrong answers
    assert seen["pytest"] == [] and seen["askers"] == 1, seen
    assert "openai" in seen["asking"] and not {
        "anthropic",
        "torch",
        "transformers",
        "huggingface_hub",
    } & set(seen["asking"]), seen


def test_an_offline_run_imports_no_sdk(tmp_path):
    """Nor pydantic: with nothing in models.json, no schema is needed (evals/schema.py). The
    sandbox, to grade LeetCode's replies."""
    seen = imported("--provider=reference", "--limit=2", tmp_path=tmp_path)
    assert seen["exit"] == 0 and seen["pytest"] == ["pluau"] and seen["askers"] == 0, seen


def test_planning_a_run_loads_no_sandbox(tmp_path):
    """Collecting every eval's items, LeetCode's included, needs the work budget's factor and
    floor (the run's identity), not the VM: ~30 ms of start-up (bench/startup.py)."""
    seen = imported("--provider=reference", "--limit=2", "--collect-only", tmp_path=tmp_path)
    assert seen["exit"] == 0 and "leetcode" in seen["output"], seen
    assert seen["pytest"] == [], seen


@pytest.mark.parametrize("judge", ["anthropic:claude-judge"])
def test_a_judged_run_imports_the_judges_sdk(tmp_path, judge):
    with OpenAIServer() as server:
        seen = imported(
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            f"--judge={judge}@{server.url}",
            "-m",
            "freeform",
            "--limit=1",
            tmp_path=tmp_path,
        )
    assert "anthropic" in seen["asking"] and seen["pytest"] == [], seen


def test_an_xdist_controller_imports_no_sdk_and_still_checks_the_key(tmp_path):
    """The controller asks nothing, its workers do: importing the SDK there only delays the
    workers' start. A missing key still stops the command with one line. LeetCode grades in
    each worker, so `-n 2` really starts workers (an eval that only waits on the model would
    run in one process, with no controller to check)."""
    with OpenAIServer() as server:
        args = (
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "leetcode",
            "--limit=4",
            "-n",
            "2",
        )
        seen = imported(*args, tmp_path=tmp_path)
        assert seen["exit"] in (0, 1) and len(server.requests) == 4, seen
        assert seen["workers"] == 2, seen  # the premise: a controller and two workers ran
        assert seen["pytest"] == ["pluau"] and "openai" in seen["asking"], seen
        missing = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--run-dir={tmp_path / 'runs'}",
                f"--results-dir={tmp_path / 'results'}",
                *args,
            ],
            cwd=ROOT,
            env={**harness_env(), "OPENAI_API_KEY": ""},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert (
        missing.returncode == 4 and "OPENAI_API_KEY is not set" in missing.stderr + missing.stdout
    ), missing.stdout[-2000:] + missing.stderr[-2000:]
    assert len(server.requests) == 4


# Counts, in every process, how often the installed distributions are listed: each listing
# reads every distribution's folder (~5 ms with this project's ~100).
COUNT_SCANS = """
import importlib.metadata, json, os, sys
_real = importlib.metadata.distributions
_calls = []
def _counted(*args, **kwargs):
    _calls.append(1)
    return _real(*args, **kwargs)
importlib.metadata.distributions = _counted
import atexit
atexit.register(lambda: open(os.environ["SCANS_SEEN"], "w").write(json.dumps(len(_calls))))
"""


def test_pytest_lists_the_installed_distributions_a_fixed_number_of_times_not_once_a_plugin(
    tmp_path,
):
    """pytest looks each name of a `pytest_plugins` list up among the installed distributions'
    entry points before importing it; the harness's plugins are registered by their package
    first, so a start-up lists the distributions for pytest's own `pytest11` scan, its
    assertion rewriting and the harness's `roblox_evals` group: three times, not once more per
    plugin module (ten, before)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(COUNT_SCANS)
    scans = tmp_path / "scans.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--provider=reference"]
        + ["--collect-only", f"--run-dir={tmp_path / 'runs'}"],
        cwd=ROOT,
        env=harness_env(PYTHONPATH=str(hook), SCANS_SEEN=str(scans)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "tests collected" in done.stdout
    assert json.loads(scans.read_text()) <= 3


# Notes, in every process, the harness's modules it has imported (at each import statement and
# each connection it opens: a model's request), and which it had when it started an asking
# child (`evals.askers.processes`).
EVALS_SEEN = """
import json, os, sys
_out = os.path.join(os.environ["EVALS_SEEN"], f"{os.getpid()}.json")
_seen = {"argv": sys.orig_argv, "modules": [], "child_started_with": None}
def _note(event, args):
    if event == "subprocess.Popen" and "evals.askers.processes" in list(args[1]):
        _seen["child_started_with"] = sorted(m for m in sys.modules if m.startswith("evals"))
    elif event not in ("import", "socket.connect"):
        return
    _seen["modules"] = sorted(m for m in sys.modules if m.startswith("evals") or m == "filelock")
    with open(_out, "w") as f:
        json.dump(_seen, f)
sys.addaudithook(_note)
"""


def test_pytest_starts_the_asking_child_having_imported_the_providers_registration_alone(
    tmp_path,
):
    """The child is started before pytest parses its command line, as soon as the provider's
    registration says it asks over the network and which SDK to import: the provider's own
    module (`evals.providers.openai`, its registration) and the registry, not the provider's
    implementation, the messages or the retries (~12 ms of the launch to a first request), and
    the asking child imports, of the extensions, the ones its run uses: not every eval's and
    provider's (~10 ms), since pytest's process has loaded and checked them all; nor filelock
    (~10 ms), which only pytest's process takes (--force, models.json)."""
    hook, seen = tmp_path / "hook", tmp_path / "seen"
    hook.mkdir()
    seen.mkdir()
    (hook / "sitecustomize.py").write_text(EVALS_SEEN)
    with OpenAIServer() as server:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--provider=openai"]
            + ["--model=m", f"--base-url={server.url}/v1", "-m", "multiple_choice", "--limit=2"]
            + [f"--run-dir={tmp_path / 'runs'}", f"--results-dir={tmp_path / 'results'}"],
            cwd=ROOT,
            env=harness_env(PYTHONPATH=str(hook), EVALS_SEEN=str(seen)),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0 and "2 wrong" in done.stdout, done.stdout[-2000:] + done.stderr
    processes = [json.loads(path.read_text()) for path in seen.glob("*.json")]
    (parent,) = [p for p in processes if p["child_started_with"] is not None]
    (child,) = [p for p in processes if "evals.askers.processes" in p["argv"]]
    assert "evals.providers.openai" in parent["child_started_with"]
    assert not {
        "evals.messages",
        "evals.providers._base",
        "evals.providers._make",
        "evals.providers._openai",
        "evals.providers._retry",
    } & set(parent["child_started_with"]), parent["child_started_with"]
    assert {"evals.tasks.multiple_choice", "evals.providers._openai"} <= set(child["modules"])
    assert not {
        "evals.tasks.leetcode",
        "evals.tasks.freeform",
        "evals.providers._anthropic",
        "evals.providers.local",
        "evals.energy.rapl",
        "filelock",
    } & set(child["modules"]), child["modules"]


LOAD_NAMED = """
import json, sys
from evals import entry_points
from evals.providers import PROVIDERS
from evals.tasks import TASKS

found = entry_points.entry_points_found()
entry_points.load_named(["openai", "multiple_choice"], found)
seen = {"partial": entry_points._state == "partial", "openai": PROVIDERS["openai"].key_env,
        "task": TASKS["multiple_choice"].name, "leetcode loaded": "evals.tasks.leetcode" in sys.modules}
seen["miss"] = PROVIDERS.get("reference") is not None  # registered by a module not imported yet
seen["after miss"] = [entry_points._state == "partial", "evals.tasks.leetcode" in sys.modules]
print(json.dumps(seen))
"""
LISTED = """
import json
from evals import entry_points
from evals.tasks import TASKS

entry_points.load_named(["multiple_choice"], entry_points.entry_points_found())
print(json.dumps(list(TASKS)))
"""


def _fresh(script: str) -> object:
    """What `script` prints, run in an interpreter of its own (whose registries are unloaded)."""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=harness_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_child_loading_the_extensions_its_run_names_answers_them_and_loads_the_rest_on_a_miss():
    """The asking child imports only the entry points its run names (`load_named`); a question
    by a name they did not register loads every other one first, so it is never refused."""
    assert _fresh(LOAD_NAMED) == {
        "partial": True,
        "openai": "OPENAI_API_KEY",
        "task": "multiple_choice",
        "leetcode loaded": False,
        "miss": True,
        "after miss": [False, True],
    }


def test_after_loading_named_extensions_a_list_of_a_registry_still_holds_every_one():
    assert _fresh(LISTED) == ["freeform", "multiple_choice", "leetcode"]
