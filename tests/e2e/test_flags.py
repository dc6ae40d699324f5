"""The how-to-run flags through the CLI: only OpenRouter's own host gets its key and its request
extras, a third party's provider (`tests.support.echo_provider`) runs with its own flags and the
other providers refuse them, and every flag of `evaluate --help` says what it does. The
declarations in process are tests/unit/test_flags.py.

`pytest` starts warm (tests/support/warm.py), a process with its own exit status and environment
(keys, HTTP_PROXY), against a loopback server on a thread of the test that is also the proxy;
`evaluate --help` is exec'd as it is."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from _pytest.config.argparsing import Parser

from plugins.options import pytest_addoption
from tests.support.harness import ROOT, harness_env, run_harness
from tests.support.loopback import OpenAIServer


def pytest_how_to_run() -> list[str]:
    parser = Parser(_ispytest=True)
    pytest_addoption(parser)
    group = parser.getgroup("how to run")
    return [name for option in group.options for name in option.names()]


# -- what the providers declare -----------------------------------------------------------------


OPENROUTER_KEY = "sk-or-loopback-key-for-tests"


@pytest.mark.parametrize(
    "url, openrouter",
    [
        ("http://openrouter.ai@{server}/api/v1", False),
        ("http://openrouter.ai.evil.example/api/v1", False),
        ("HTTP://OpenRouter.AI/api/v1", True),
        ("http://openrouter.ai./api/v1", True),
    ],
)
def test_only_openrouter_s_own_host_gets_its_key_and_extras(url, openrouter, tmp_path):
    """Through the CLI: OpenRouter's key and its request extras (the reasoning object) go to
    openrouter.ai only, told by the host name; the hosts that are not are reached directly
    (127.0.0.1) or through the loopback server as their HTTP proxy."""

    with OpenAIServer() as server:
        env = harness_env(
            OPENROUTER_API_KEY=OPENROUTER_KEY, HTTP_PROXY=server.url, NO_PROXY="127.0.0.1"
        )
        done = run_harness(
            "--provider=live",
            "--model=m-1",
            f"--base-url={url.format(server=server.url.removeprefix('http://'))}",
            "--effort=high",
            "-m",
            "multiple_choice",
            "--limit=1",
            env=env,
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
        assert done.returncode in (0, 1) and len(server.requests) == 1, (
            done.stdout[-2000:] + done.stderr[-2000:]
        )
        (request,) = server.requests
    assert (request.headers.get("authorization") == f"Bearer {OPENROUTER_KEY}") is openrouter
    assert OPENROUTER_KEY not in json.dumps(request.headers) or openrouter
    assert ("reasoning" in request.body, "reasoning_effort" in request.body) == (
        openrouter,
        not openrouter,
    )


# -- power sources ------------------------------------------------------------------------------


# -- a provider of a third party ----------------------------------------------------------------


def test_a_registered_provider_runs_with_its_own_flag_and_other_providers_refuse_it(tmp_path):
    from tests.support.harness import run_harness

    dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    done = run_harness(
        "-p",
        "tests.support.echo_provider",
        "--provider=echo",
        "--model=parrot",
        "--stutter",
        "-m",
        "multiple_choice",
        "--limit=2",
        **dirs,
    )
    assert "2 wrong" in done.stdout, (
        done.stdout[-2000:] + done.stderr[-2000:]
    )  # echoing the question names no letter
    records = [
        json.loads(path.read_text())
        for path in sorted(dirs["run_dir"].glob("multiple_choice/*/calls/*/candidate.json"))
    ]
    assert len(records) == 2
    for record in records:
        first_line = record["request"]["prompt"].split("\n")[0]
        assert (
            record["response"]["text"] == f"{first_line} {first_line}"
        )  # --stutter reached the provider
        assert record["request"]["provider"] == {
            "provider": "echo",
            "model": "parrot",
        }  # and is not part of the identity

    refused = run_harness(
        "-p",
        "tests.support.echo_provider",
        "--provider=reference",
        "--stutter",
        "-m",
        "multiple_choice",
        **dirs,
    )
    assert (
        refused.returncode == 4
        and "--stutter applies to --provider echo, not reference" in refused.stderr
    ), refused.stderr


def test_a_providers_own_identity_flag_is_sent_recorded_and_makes_a_run_of_its_own(tmp_path):
    """`--shout` is declared by the echo provider alone (`ProviderInfo.fields`): it reaches the
    provider, is in the run's config, record and folder name, and another provider refuses it;
    the shared fields' configs are as they were."""
    from tests.support.harness import run_harness

    dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    args = (
        "-p",
        "tests.support.echo_provider",
        "--provider=echo",
        "--model=parrot",
        "-m",
        "multiple_choice",
        "--limit=1",
    )
    plain, shouted = run_harness(*args, **dirs), run_harness(*args, "--shout", **dirs)
    assert plain.returncode == shouted.returncode == 0, (
        shouted.stdout[-2000:] + shouted.stderr[-2000:]
    )
    folders = sorted(path.name for path in (dirs["run_dir"] / "multiple_choice").iterdir())
    assert len(folders) == 2 and [name for name in folders if "-shout-" in name], (
        folders
    )  # two runs, the second named by it
    (loud,) = [
        json.loads(path.read_text())
        for path in dirs["run_dir"].glob("multiple_choice/*-shout-*/calls/*/candidate.json")
    ]
    assert loud["request"]["provider"] == {"provider": "echo", "model": "parrot", "shout": True}
    assert loud["response"]["text"] == loud["request"]["prompt"].split("\n")[0].upper()
    configs = [
        json.loads(path.read_text())["config"]
        for path in sorted((dirs["results_dir"] / "multiple_choice").glob("*.json"))
    ]
    assert sorted(str(config.get("shout")) for config in configs) == ["None", "True"]
    loud_config = next(c for c in configs if c.get("shout"))
    assert list(loud_config)[:3] == ["eval", "provider", "model"] and {
        k: v for k, v in loud_config.items() if k != "shout"
    } == next(c for c in configs if not c.get("shout"))

    again = run_harness(*args, "--shout", **dirs)  # the same identity: the same run folder
    assert (
        again.returncode == 0
        and sorted(path.name for path in (dirs["run_dir"] / "multiple_choice").iterdir()) == folders
    )

    refused = run_harness(
        "-p",
        "tests.support.echo_provider",
        "--provider=reference",
        "--shout",
        "-m",
        "multiple_choice",
        **dirs,
    )
    assert (
        refused.returncode == 4
        and "--shout is not sent by --provider reference" in refused.stderr
        and "it applies to echo" in refused.stderr
    ), refused.stderr


def test_every_flag_of_evaluate_says_what_it_does_in_its_help():
    done = subprocess.run(
        [sys.executable, "-m", "evals.evaluate", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    options = done.stdout.split("\noptions:", 1)[1]
    # an option line ("  --name [VALUE]") whose next line is another option, or nothing: no help
    lines = options.splitlines()
    bare = [
        line.split()[0]
        for line, after in zip(lines, lines[1:] + [""])
        if re.fullmatch(r"  (-\w, )?--[\w-]+( [A-Z_]+)?( \.\.\.)?", line)
        and not after.startswith(" " * 24)
    ]
    assert bare == []
