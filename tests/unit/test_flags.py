"""The how-to-run flags, declared once (`evals.flags`), in process: every one pytest takes is
taken by `evaluate` too or declared pytest's own, `evaluate` forwards what was given and nothing
else, providers and power sources register their own flags, a Batch API costs the price factor
the result files record, and OpenRouter is told by its host name alike everywhere. Through the
CLI it is tests/e2e/test_flags.py."""

from __future__ import annotations

import pytest
from _pytest.config.argparsing import Parser

from evals.evaluate import parse_args
from evals.command_line import how_to_run
from evals.flags import forwarded
from plugins.options import pytest_addoption

# Decided by evaluate itself: where files go (--data-dir), what it publishes (its NAME, --verify).
PYTEST_ONLY = {"--run-dir", "--results-dir", "--verify-published", "--publish", "--wrong-fails"}
TOGETHER = {"--price-input": ["--price-output=1"], "--price-output": ["--price-input=1"]}
VALUES = {"--jest-url": "http://jest"}  # a value its check takes (else "1")


def pytest_how_to_run() -> list[str]:
    parser = Parser(_ispytest=True)
    pytest_addoption(parser)
    group = parser.getgroup("how to run")
    return [name for option in group.options for name in option.names()]


def test_every_how_to_run_flag_of_pytest_is_taken_by_evaluate_or_declared_pytest_only():
    pytest_flags = pytest_how_to_run()
    assert {
        "--concurrency",
        "--device",
        "--luau-timeout",
        "--responses-api",
        "--jest-url",
        "--energy-log",
    } <= set(pytest_flags)
    rows = {flag.name: flag for flag in how_to_run()}
    assert {
        name for name, flag in rows.items() if flag.pytest and not flag.evaluate_name
    } == PYTEST_ONLY
    for name in pytest_flags:
        if name in PYTEST_ONLY:
            continue
        flag = rows[name]  # a pytest option declared outside the table fails here
        value = [] if flag.switch else [flag.choices[0] if flag.choices else VALUES.get(name, "1")]
        args = parse_args(
            ["Some Model", flag.evaluate_name, *value, *TOGETHER.get(name, [])]
        )  # evaluate takes it (argparse exits otherwise)
        assert getattr(args, flag.evaluate_dest) not in (None, False), name
    for name in PYTEST_ONLY:
        with pytest.raises(SystemExit):
            parse_args(["Some Model", name])


def test_evaluate_differs_where_the_table_says():
    args = parse_args(["Some Model", "--workers=3", "--processes=2"])
    assert forwarded(args, how_to_run()) == ["--concurrency=3", "-n", "2"]


def test_evaluate_takes_and_forwards_the_local_flags():
    args = parse_args(
        [
            "Tiny",
            "--provider",
            "local",
            "--device",
            "cpu",
            "--luau-timeout",
            "5",
            "--dry-run",
            "--energy",
            "--energy-source=nvml",
            "--api-key-env=MY_KEY",
        ]
    )
    assert (args.device, args.luau_timeout, args.dry_run) == ("cpu", 5.0, True)
    assert forwarded(args, how_to_run()) == [
        "--api-key-env=MY_KEY",
        "--energy",
        "--energy-source=nvml",
        "--luau-timeout=5.0",
        "--device=cpu",
    ]


def test_nothing_is_forwarded_that_was_not_given():
    assert forwarded(parse_args(["Some Model"]), how_to_run()) == []


# -- what the providers declare -----------------------------------------------------------------


def test_the_built_in_providers_register_through_the_entry_point_group():
    from importlib.metadata import entry_points

    from evals.entry_points import harness_module
    from evals.providers import PROVIDERS
    from evals.providers import _registry

    named = {point.value for point in entry_points(group="roblox_evals")}
    # The harness's own: a test before this one in the same process may have registered another
    # (an in-process pytest with `-p tests.support.echo_provider`).
    own = [name for name in PROVIDERS if harness_module(_registry._providers[name][0])]
    assert own == ["openai", "anthropic", "live", "reference", "local"]
    assert {_registry._providers[name][0] for name in own} <= named


def test_a_batch_api_costs_what_the_result_files_record():
    """The result files record one price factor (`evals.results.BATCH_PRICE`): a provider
    whose Batch API costs another share fails here until they record the provider's own."""
    from evals.providers import PROVIDERS, batch_providers
    from evals.results import BATCH_PRICE

    factors = {
        name: info.batch_price for name, info in PROVIDERS.items() if info.batch_price is not None
    }
    assert set(factors) == {"openai", "anthropic", "live"} and set(factors.values()) == {
        BATCH_PRICE
    }
    assert batch_providers() == "openai, anthropic, and live endpoints that speak OpenAI's"


@pytest.mark.parametrize(
    "url, openrouter",
    [
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
    ],
)
def test_openrouter_is_told_by_its_host_name_alike_everywhere(url, openrouter, monkeypatch):
    from evals import metadata
    from evals.providers import ProviderSpec, is_openrouter, key_variable

    monkeypatch.delenv("OPENROUTER_API_BASE", raising=False)
    assert is_openrouter(url) is openrouter
    assert metadata._is_openrouter(url) is openrouter
    if url:
        assert (
            key_variable(ProviderSpec("live", "m", base_url=url)) == "OPENROUTER_API_KEY"
        ) is openrouter


# -- power sources ------------------------------------------------------------------------------


def test_a_registered_power_source_is_a_choice_with_its_own_flag(monkeypatch):
    from evals.energy import PowerSourceInfo, _registry, register_source, source, sources
    from evals.flags import Flag

    meter = Flag(
        "--energy-meter-port",
        "with --energy-source wattmeter: the meter's serial port",
        str,
        forward=True,
    )
    made = {}
    sources()  # the built-ins loaded, then a copy that the test's source leaves behind
    monkeypatch.setattr(_registry, "_sources", {**_registry._sources})
    register_source(
        "wattmeter",
        PowerSourceInfo(
            lambda *, port=None, clock: made.setdefault("port", port), (("port", meter),)
        ),
    )
    flags = {flag.name: flag for flag in how_to_run()}
    assert (
        flags["--energy-source"].choices == ("hwinfo", "rapl", "nvml", "wattmeter")
        and "--energy-meter-port" in flags
    )
    args = parse_args(
        ["Some Model", "--energy", "--energy-source=wattmeter", "--energy-meter-port=/dev/ttyUSB0"]
    )
    assert forwarded(args, how_to_run())[-2:] == [
        "--energy-source=wattmeter",
        "--energy-meter-port=/dev/ttyUSB0",
    ]
    source("wattmeter", port="/dev/ttyUSB0")
    assert made == {"port": "/dev/ttyUSB0"}


# -- a provider of a third party ----------------------------------------------------------------


# -- an eval's own flags, and what a bare resume keeps -------------------------------------------


def test_an_owners_own_flag_is_kept_for_a_bare_resume_unless_its_row_says_not():
    """A row that leaves `resume` as it is: kept when an eval, provider or power source declares
    it (the provider's with its provider), never when the table does."""
    rows = {flag.name: flag for flag in how_to_run()}
    assert rows["--luau-timeout"].resume == "run"  # an eval's, its row silent
    assert rows["--jest-url"].resume is None  # an eval's that says resume=None
    assert rows["--device"].resume == "provider"  # a provider's
    assert rows["--concurrency"].resume is None and rows["--force"].resume is None  # the table's


def test_a_run_records_only_the_graded_flags_it_sets_to_other_than_their_defaults():
    from evals.tasks import TASKS, graded_with, recorded_values

    leetcode = TASKS["leetcode"]
    assert (
        graded_with(leetcode, {"luau_timeout": 10.0, "jest_url": "http://jest"}) == {}
    )  # its file as before
    assert graded_with(leetcode, {"luau_timeout": 5.0, "jest_url": None}) == {"--luau-timeout": 5.0}
    assert recorded_values(leetcode, {}) == {
        "luau_timeout": 10.0,
        "jest_url": None,
    }  # a file of before: the defaults
    assert recorded_values(leetcode, {"gradedWith": {"--luau-timeout": 5.0}}) == {
        "luau_timeout": 5.0,
        "jest_url": None,
    }


def test_a_hidden_flags_help_is_argparses_suppress():
    """`HIDDEN` is argparse.SUPPRESS by value, so that declaring a table row imports no argparse
    (the asking child, which parses no command line, is spared it)."""
    import argparse

    from evals.flags import HIDDEN

    assert HIDDEN == argparse.SUPPRESS
