"""The how-to-run flags, declared once (`evals.flags`): every one pytest takes is taken by
`evaluate` too, or declared pytest's own, and `evaluate` hands on what its pytest processes need."""

from __future__ import annotations

import pytest
from _pytest.config.argparsing import Parser

from evals.evaluate import parse_args
from evals.flags import forwarded
from evals.providers import how_to_run
from plugins.options import pytest_addoption

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
