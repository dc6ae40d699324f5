"""The how-to-run flags, declared once (`evals.flags`): every one pytest takes is taken by
`evaluate` too, or declared pytest's own, and `evaluate` hands on what its pytest processes need."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from _pytest.config.argparsing import Parser

from evals.evaluate import parse_args
from evals.flags import forwarded, how_to_run
from plugins.options import pytest_addoption
from tests.harness import ROOT, harness_env, run_harness
from tests.loopback import OpenAIServer

# Decided by evaluate itself: where files go (--data-dir), what it publishes (its NAME, --verify).
PYTEST_ONLY = {"--run-dir", "--results-dir", "--verify-published", "--publish"}
TOGETHER = {"--price-input": ["--price-output=1"], "--price-output": ["--price-input=1"]}


def pytest_how_to_run() -> list[str]:
    parser = Parser(_ispytest=True)
    pytest_addoption(parser)
    group = parser.getgroup("how to run")
    return [name for option in group.options for name in option.names()]


def test_every_how_to_run_flag_of_pytest_is_taken_by_evaluate_or_declared_pytest_only():
    pytest_flags = pytest_how_to_run()
    assert {"--concurrency", "--device", "--luau-timeout", "--responses-api", "--jest-url", "--energy-log"} <= set(pytest_flags)
    rows = {flag.name: flag for flag in how_to_run()}
    assert {name for name, flag in rows.items() if flag.pytest and not flag.evaluate_name} == PYTEST_ONLY
    for name in pytest_flags:
        if name in PYTEST_ONLY:
            continue
        flag = rows[name]  # a pytest option declared outside the table fails here
        value = [] if flag.switch else [flag.choices[0] if flag.choices else "1"]
        args = parse_args(["Some Model", flag.evaluate_name, *value, *TOGETHER.get(name, [])])  # evaluate takes it (argparse exits otherwise)
        assert getattr(args, flag.evaluate_dest) not in (None, False), name
    for name in PYTEST_ONLY:
        with pytest.raises(SystemExit):
            parse_args(["Some Model", name])


def test_evaluate_differs_where_the_table_says():
    args = parse_args(["Some Model", "--workers=3", "--processes=2"])
    assert forwarded(args, how_to_run()) == ["--concurrency=3", "-n", "2"]


def test_evaluate_takes_and_forwards_the_local_flags():
    args = parse_args(["Tiny", "--provider", "local", "--device", "cpu", "--luau-timeout", "5", "--dry-run", "--energy",
                       "--energy-source=nvml", "--api-key-env=MY_KEY"])
    assert (args.device, args.luau_timeout, args.dry_run) == ("cpu", 5.0, True)
    assert forwarded(args, how_to_run()) == ["--api-key-env=MY_KEY", "--energy", "--energy-source=nvml", "--luau-timeout=5.0",
                                             "--device=cpu"]


def test_nothing_is_forwarded_that_was_not_given():
    assert forwarded(parse_args(["Some Model"]), how_to_run()) == []


# -- what the providers declare -----------------------------------------------------------------


def test_the_built_in_providers_register_through_the_entry_point_group():
    from importlib.metadata import entry_points

    from evals.providers import PROVIDERS

    named = {point.value for point in entry_points(group="roblox_evals")}
    assert list(PROVIDERS) == ["openai", "anthropic", "live", "reference", "local"]
    assert {PROVIDERS[name].path.split(":")[0] for name in PROVIDERS} <= named


def test_a_batch_api_costs_what_the_result_files_record():
    """The result files record one price factor (`evals.results.BATCH_PRICE`): a provider
    whose Batch API costs another share fails here until they record the provider's own."""
    from evals.providers import PROVIDERS, batch_providers
    from evals.results import BATCH_PRICE

    factors = {name: info.batch_price for name, info in PROVIDERS.items() if info.batch_price is not None}
    assert set(factors) == {"openai", "anthropic", "live"} and set(factors.values()) == {BATCH_PRICE}
    assert batch_providers() == "openai, anthropic, and live endpoints that speak OpenAI's"


@pytest.mark.parametrize("url, openrouter", [
    ("https://openrouter.ai/api/v1", True),
    ("http://openrouter.ai/api/v1/", True),
    ("https://eu.OpenRouter.ai/api/v1", True),
    ("https://myopenrouter.ai.example.com/v1", False),
    ("https://example.com/openrouter.ai/v1", False),
    ("https://openrouter.ai@evil.example/v1", False),  # the user info is not the host
    ("https://openrouter.ai.evil.example/v1", False),
    ("https://evil.example/v1?host=openrouter.ai", False),
    ("HTTPS://OpenRouter.AI/api/v1", True),
    ("https://openrouter.ai./api/v1", True),  # the same host, written fully qualified
    ("https://eu.openrouter.ai.:443/api/v1", True),
    ("https://openrouter.ai:8443/api/v1", True),
    ("http://127.0.0.1:8000/v1", False),
    ("", False),
    (None, False),
])
def test_openrouter_is_told_by_its_host_name_alike_everywhere(url, openrouter, monkeypatch):
    from evals import metadata
    from evals.providers import ProviderSpec, is_openrouter, key_variable

    monkeypatch.delenv("OPENROUTER_API_BASE", raising=False)
    assert is_openrouter(url) is openrouter
    assert metadata._is_openrouter(url) is openrouter
    if url:
        assert (key_variable(ProviderSpec("live", "m", base_url=url)) == "OPENROUTER_API_KEY") is openrouter


OPENROUTER_KEY = "sk-or-loopback-key-for-tests"


@pytest.mark.parametrize("url, openrouter", [
    ("http://openrouter.ai@{server}/api/v1", False),
    ("http://openrouter.ai.evil.example/api/v1", False),
    ("HTTP://OpenRouter.AI/api/v1", True),
    ("http://openrouter.ai./api/v1", True),
])
def test_only_openrouter_s_own_host_gets_its_key_and_extras(url, openrouter, tmp_path):
    """Through the CLI: OpenRouter's key and its request extras (the reasoning object) go to
    openrouter.ai only, told by the host name; the hosts that are not are reached directly
    (127.0.0.1) or through the loopback server as their HTTP proxy."""

    with OpenAIServer() as server:
        env = harness_env(OPENROUTER_API_KEY=OPENROUTER_KEY, HTTP_PROXY=server.url, NO_PROXY="127.0.0.1")
        done = run_harness("--provider=live", "--model=m-1", f"--base-url={url.format(server=server.url.removeprefix('http://'))}",
                           "--effort=high", "-m", "multiple_choice", "--limit=1",
                           env=env, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        assert done.returncode in (0, 1) and len(server.requests) == 1, done.stdout[-2000:] + done.stderr[-2000:]
        (request,) = server.requests
    assert (request.headers.get("authorization") == f"Bearer {OPENROUTER_KEY}") is openrouter
    assert OPENROUTER_KEY not in json.dumps(request.headers) or openrouter
    assert ("reasoning" in request.body, "reasoning_effort" in request.body) == (openrouter, not openrouter)


# -- power sources ------------------------------------------------------------------------------


def test_a_registered_power_source_is_a_choice_with_its_own_flag(monkeypatch):
    from evals import extensions
    from evals.energy import PowerSourceInfo, source
    from evals.flags import Flag

    meter = Flag("--energy-meter-port", "with --energy-source wattmeter: the meter's serial port", str, forward=True)
    made = {}
    extensions.sources()  # the built-ins loaded, then a copy that the test's source leaves behind
    monkeypatch.setattr(extensions, "_sources", {**extensions._sources})
    extensions.register_source("wattmeter", PowerSourceInfo(lambda *, port=None, clock: made.setdefault("port", port),
                                                            (("port", meter),)))
    flags = {flag.name: flag for flag in how_to_run()}
    assert flags["--energy-source"].choices == ("hwinfo", "rapl", "nvml", "wattmeter") and "--energy-meter-port" in flags
    args = parse_args(["Some Model", "--energy", "--energy-source=wattmeter", "--energy-meter-port=/dev/ttyUSB0"])
    assert forwarded(args, how_to_run())[-2:] == ["--energy-source=wattmeter", "--energy-meter-port=/dev/ttyUSB0"]
    source("wattmeter", port="/dev/ttyUSB0")
    assert made == {"port": "/dev/ttyUSB0"}


# -- a provider of a third party ----------------------------------------------------------------


def test_a_registered_provider_runs_with_its_own_flag_and_other_providers_refuse_it(tmp_path):
    from tests.harness import run_harness

    dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    done = run_harness("-p", "tests.echo_provider", "--provider=echo", "--model=parrot", "--stutter", "-m", "multiple_choice",
                       "--limit=2", **dirs)
    assert "2 failed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]  # echoing the question names no letter
    records = [json.loads(path.read_text()) for path in sorted(dirs["run_dir"].glob("multiple_choice/*/calls/*/candidate.json"))]
    assert len(records) == 2
    for record in records:
        first_line = record["request"]["prompt"].split("\n")[0]
        assert record["response"]["text"] == f"{first_line} {first_line}"  # --stutter reached the provider
        assert record["request"]["provider"] == {"provider": "echo", "model": "parrot"}  # and is not part of the identity

    refused = run_harness("-p", "tests.echo_provider", "--provider=reference", "--stutter", "-m", "multiple_choice", **dirs)
    assert refused.returncode == 4 and "--stutter applies to --provider echo, not reference" in refused.stderr, refused.stderr


def test_a_providers_own_identity_flag_is_sent_recorded_and_makes_a_run_of_its_own(tmp_path):
    """`--shout` is declared by the echo provider alone (`ProviderInfo.fields`): it reaches the
    provider, is in the run's config, record and folder name, and another provider refuses it;
    the shared fields' configs are as they were."""
    from tests.harness import run_harness

    dirs = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    args = ("-p", "tests.echo_provider", "--provider=echo", "--model=parrot", "-m", "multiple_choice", "--limit=1")
    plain, shouted = run_harness(*args, **dirs), run_harness(*args, "--shout", **dirs)
    assert plain.returncode == shouted.returncode == 1, shouted.stdout[-2000:] + shouted.stderr[-2000:]
    folders = sorted(path.name for path in (dirs["run_dir"] / "multiple_choice").iterdir())
    assert len(folders) == 2 and [name for name in folders if "-shout-" in name], folders  # two runs, the second named by it
    (loud,) = [json.loads(path.read_text()) for path in dirs["run_dir"].glob("multiple_choice/*-shout-*/calls/*/candidate.json")]
    assert loud["request"]["provider"] == {"provider": "echo", "model": "parrot", "shout": True}
    assert loud["response"]["text"] == loud["request"]["prompt"].split("\n")[0].upper()
    configs = [json.loads(path.read_text())["config"] for path in sorted((dirs["results_dir"] / "multiple_choice").glob("*.json"))]
    assert sorted(str(config.get("shout")) for config in configs) == ["None", "True"]
    loud_config = next(c for c in configs if c.get("shout"))
    assert list(loud_config)[:3] == ["eval", "provider", "model"] and {k: v for k, v in loud_config.items() if k != "shout"} == next(c for c in configs if not c.get("shout"))

    again = run_harness(*args, "--shout", **dirs)  # the same identity: the same run folder
    assert again.returncode == 1 and sorted(path.name for path in (dirs["run_dir"] / "multiple_choice").iterdir()) == folders

    refused = run_harness("-p", "tests.echo_provider", "--provider=reference", "--shout", "-m", "multiple_choice", **dirs)
    assert refused.returncode == 4 and "--shout is not sent by --provider reference" in refused.stderr and "it applies to echo" in refused.stderr, refused.stderr


def test_every_flag_of_evaluate_says_what_it_does_in_its_help():
    done = subprocess.run([sys.executable, "-m", "evals.evaluate", "--help"], capture_output=True, text=True, cwd=ROOT, check=True)
    options = done.stdout.split("\noptions:", 1)[1]
    # an option line ("  --name [VALUE]") whose next line is another option, or nothing: no help
    lines = options.splitlines()
    bare = [line.split()[0] for line, after in zip(lines, lines[1:] + [""])
            if re.fullmatch(r"  (-\w, )?--[\w-]+( [A-Z_]+)?( \.\.\.)?", line) and not after.startswith(" " * 24)]
    assert bare == []
