"""The command line: every bad flag stops the run with a one-line usage error that names the
flag and the fix, before anything is collected or written; good flags collect exactly the
items they select; runs outside tests_evals need no eval flags at all.

pytest runs in-process through `pytester` (the harness plugin loads from its entry point as
it does on a real command line) against the repository's own tests_evals, with run and result
folders in tmp_path, always written with '=' so nothing lands in the repository's data/. The
one xdist case is a real exec (`runpytest_subprocess`), its workers processes of their own."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

from tests.support import ROOT
from tests.support.harness import API_KEYS, EVALS, USAGE_ERROR, bundled, usage_error


@pytest.fixture(scope="session")
def sdks():
    """The provider SDKs, imported once before the runs that build a real provider: pytester
    drops modules first imported during a run, so each such run would import them again (~2 s)."""
    import openai  # noqa: F401


@pytest.fixture
def dirs(tmp_path):
    """Run and result folders that do not exist yet: a run that writes anything creates them."""
    return tmp_path / "runs", tmp_path / "results"


@pytest.fixture
def run(pytester, dirs, monkeypatch):
    """pytest in-process on the eval items, with this test's run and result folders."""
    for name in API_KEYS:
        monkeypatch.delenv(name, raising=False)

    def run(*args: str) -> pytest.RunResult:
        run_dir, results_dir = dirs
        return pytester.runpytest_inprocess(
            EVALS, *args, f"--run-dir={run_dir}", f"--results-dir={results_dir}"
        )

    return run


def collected(result: pytest.RunResult) -> list[str]:
    """The RobloxQA items a `--co -q` run listed (other evals' files may sit beside them)."""
    assert result.ret == 0, "\n".join(result.outlines + result.errlines)
    return [
        line.split("::", 1)[1]
        for line in result.outlines
        if line.startswith("tests_evals/test_robloxqa.py::")
    ]


def written(*folders: Path) -> list[Path]:
    return [p for folder in folders if folder.exists() for p in [folder, *folder.rglob("*")]]


MODEL = ["--model", "gpt-5.5"]
BAD_FLAGS = [
    pytest.param([], ["--provider is required", "reference", "pytest tests"], id="no-provider"),
    pytest.param(MODEL, ["--provider is required"], id="model-without-provider"),
    pytest.param(
        ["--provider", "opnai", *MODEL],
        ["--provider 'opnai' is unknown", "openai, anthropic, live, reference"],
        id="unknown-provider",
    ),
    pytest.param(
        ["--provider", "local", *MODEL],
        ["--model gpt-5.5: no such folder", "checkpoint folder", "--model=DIR"],
        id="local-model-not-a-folder",
    ),
    pytest.param(
        ["--provider", "openai"],
        ["--model is required with --provider openai", "--model", "--provider reference"],
        id="openai-without-model",
    ),
    pytest.param(
        [
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--effort",
            "high",
            "--thinking",
        ],
        ["--effort and --thinking", "pass one"],
        id="effort-and-thinking",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--effort", "extreme"],
        ["--effort 'extreme' is not one openai takes", "minimal", "xhigh"],
        id="unknown-effort",
    ),
    pytest.param(
        ["--provider", "anthropic", "--model", "claude-opus-4-5", "--effort", "minimal"],
        ["--effort 'minimal' is not one anthropic takes", "low, medium, high, xhigh, max"],
        id="effort-anthropic-lacks",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--thinking"],
        ["--thinking is not sent by --provider openai", "anthropic, live"],
        id="thinking-with-openai",
    ),
    pytest.param(
        ["--provider", "reference", "--effort", "high"],
        ["--effort is not sent by --provider reference"],
        id="effort-with-reference",
    ),
    pytest.param(
        ["--provider", "reference", "--max-tokens", "100"],
        ["--max-tokens is not sent by --provider reference"],
        id="max-tokens-with-reference",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--route", "deepinfra"],
        ["--route is not sent by --provider openai", "applies to live"],
        id="route-with-openai",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--base-url", "localhost:8000"],
        ["--base-url 'localhost:8000' is not an http(s) URL"],
        id="base-url-not-http",
    ),
    pytest.param(
        ["--provider", "live", "--model", "qwen3-8b"],
        ["--provider live needs --base-url", "http://127.0.0.1:8000/v1"],
        id="live-without-base-url",
    ),
    pytest.param(
        [
            "--provider",
            "live",
            "--model",
            "qwen3-8b",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--route",
            "deepinfra",
        ],
        ["--route", "--base-url https://openrouter.ai/api/v1"],
        id="route-without-openrouter",
    ),
    pytest.param(
        ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--responses-api"],
        ["--responses-api", "--provider openai, not anthropic"],
        id="responses-api-with-anthropic",
    ),
    pytest.param(
        ["--provider", "reference", "--split", "dev"],
        ["--split 'dev' is unknown", "test or train"],
        id="split-dev",
    ),
    pytest.param(
        ["--provider", "reference", "--limit", "0"],
        ["--limit must be at least 1", "got 0"],
        id="limit-0",
    ),
    pytest.param(
        ["--provider", "reference", "--epochs", "0"],
        ["--epochs must be at least 1", "got 0"],
        id="epochs-0",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--max-tokens", "0"],
        ["--max-tokens must be at least 1"],
        id="max-tokens-0",
    ),
    pytest.param(
        ["--provider", "reference", "--concurrency", "0"],
        ["--concurrency must be at least 1"],
        id="concurrency-0",
    ),
    # A number of the right type no run can use: one line, not a traceback on every leetcode item.
    *(
        pytest.param(
            ["--provider", "reference", f"--luau-timeout={value}"],
            [
                "--luau-timeout must be a number of seconds above 0 and at most 86400 (a day)",
                f"(got {shown})",
            ],
            id=f"luau-timeout-{value}",
        )
        for value, shown in [
            ("1e308", "1e+308"),
            ("nan", "nan"),
            ("inf", "inf"),
            ("0", "0.0"),
            ("-1", "-1.0"),
            ("86401", "86401.0"),
        ]
    ),
    pytest.param(
        ["--provider", "reference", "--energy", "--energy-period=nan"],
        ["--energy-period must be a number of seconds above 0"],
        id="energy-period-nan",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input=nan", "--price-output=10"],
        ["--price-input must be a finite number of USD, 0 or more", "(got nan)"],
        id="price-input-nan",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input=1", "--price-output=-inf"],
        ["--price-output must be a finite number of USD, 0 or more"],
        id="price-output-minus-inf",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input", "nan", "--price-output", "inf"],
        ["--price-input must be a finite number of USD, 0 or more (got nan)"],
        id="price-nan",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input", "1", "--price-output", "inf"],
        ["--price-output must be a finite number of USD, 0 or more (got inf)"],
        id="price-inf",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input=-1.5", "--price-output=2"],
        ["--price-input must be a finite number of USD, 0 or more (got -1.5)"],
        id="price-negative",
    ),
    pytest.param(
        ["--provider", "reference", "--concurrency=-4"],
        ["--concurrency must be at least 1 (got -4)"],
        id="concurrency-negative",
    ),
    pytest.param(
        ["--provider", "reference", "--energy-period=inf"],
        ["--energy-period must be a number of seconds above 0 and at most 86400 (a day) (got inf)"],
        id="energy-period-inf",
    ),
    pytest.param(
        ["--provider", "reference", "--energy-period=0"],
        ["--energy-period must be a number of seconds above 0 and at most 86400 (a day) (got 0.0)"],
        id="energy-period-0",
    ),
    # The energy flags: each mistake one line, before anything runs.
    pytest.param(
        ["--provider", "reference", "--energy", "--energy-source", "hwinfo"],
        ["--energy-source hwinfo reads HWiNFO's CSV log", "--energy-log PATH"],
        id="hwinfo-without-log",
    ),
    pytest.param(
        ["--provider", "reference", "--energy-log=/nowhere/sensors.csv"],
        ["--energy-log has no use without --energy", "add --energy"],
        id="log-without-energy",
    ),
    pytest.param(
        ["--provider", "reference", "--energy-source=nvml"],
        ["--energy-source has no use without --energy"],
        id="source-without-energy",
    ),
    pytest.param(
        ["--provider", "reference", "--energy-source=rapl", "--energy-period=5"],
        ["--energy-source, --energy-period have no use without --energy"],
        id="source-and-period-without-energy",
    ),
    pytest.param(
        [
            "--provider",
            "reference",
            "--energy",
            "--energy-source=rapl",
            "--energy-log=/nowhere/sensors.csv",
        ],
        ["--energy-log is for --energy-source hwinfo, not rapl"],
        id="log-with-rapl",
    ),
    pytest.param(
        [
            "--provider",
            "reference",
            "--energy",
            "--energy-source=hwinfo",
            "--energy-log=/nowhere/sensors.csv",
            "--energy-period=5",
        ],
        ["--energy-period is for --energy-source rapl or nvml, not hwinfo"],
        id="period-with-hwinfo",
    ),
    pytest.param(
        [
            "--provider",
            "reference",
            "--energy",
            "--energy-log=/nowhere/sensors.csv",
            "--energy-period=5",
        ],
        ["--energy-log and --energy-period belong to different power sources", "--energy-source"],
        id="log-and-period",
    ),
    # A log named and no source: the log is HWiNFO's (RAPL would be measured, or refused, instead).
    pytest.param(
        ["--provider", "reference", "--energy", "--energy-log=/nowhere/sensors.csv"],
        ["--energy: the HWiNFO log /nowhere/sensors.csv does not exist"],
        id="log-means-hwinfo",
    ),
    pytest.param(
        ["--provider", "reference", "--judge", "badform"],
        ["--judge 'badform'", "provider:model"],
        id="judge-badform",
    ),
    pytest.param(
        ["--provider", "reference", "--price-input", "1.25"],
        ["--price-input and --price-output go together", "pass both"],
        id="price-input-alone",
    ),
    pytest.param(
        ["--provider", "reference", "--price-output", "10"],
        ["--price-input and --price-output go together"],
        id="price-output-alone",
    ),
    pytest.param(
        ["--provider", "openai", *MODEL, "--api-key-env", "MY_EVAL_KEY"],
        ["MY_EVAL_KEY", "not set"],
        id="api-key-env-unset",
    ),
    pytest.param(
        ["--provider", "reference", "--api-key-env", "MY_EVAL_KEY"],
        ["--api-key-env", "--provider reference"],
        id="api-key-env-with-reference",
    ),
]


@pytest.mark.parametrize("args, says", BAD_FLAGS)
def test_bad_flag_is_a_one_line_usage_error(run, dirs, args, says):
    line = usage_error(run(*args))
    for part in says:
        assert part in line, line
    assert not written(*dirs)


@pytest.mark.parametrize(
    "args, variable",
    [
        (["--provider", "openai", "--model", "x"], "OPENAI_API_KEY"),
        (["--provider", "anthropic", "--model", "claude-sonnet-4-5"], "ANTHROPIC_API_KEY"),
        (
            [
                "--provider",
                "live",
                "--model",
                "deepseek/deepseek-v3.2",
                "--base-url",
                "https://openrouter.ai/api/v1",
            ],
            "OPENROUTER_API_KEY",
        ),
    ],
    ids=["openai", "anthropic", "openrouter"],
)
def test_missing_api_key_names_the_variable(sdks, run, dirs, args, variable):
    line = usage_error(run(*args, "-m", "multiple_choice"))  # no judge: the candidate's key alone
    assert f"environment variable {variable} is not set" in line and "--api-key-env" in line
    assert not written(*dirs)


OPENROUTER_JUDGE = "--judge live:deepseek/deepseek-v3.2@https://openrouter.ai/api/v1"


@pytest.mark.parametrize(
    "args, keys, says",
    [
        # The README's main command with no key: the candidate's and the three default judges' two others.
        pytest.param(
            ["--provider", "openai", *MODEL],
            {},
            [
                "three API keys are not set",
                "OPENAI_API_KEY (--provider openai, --judge openai:gpt-5-mini)",
                "ANTHROPIC_API_KEY (--judge anthropic:claude-haiku-4-5)",
                f"OPENROUTER_API_KEY ({OPENROUTER_JUDGE})",
                "--api-key-env",
                "pick judges you have keys for with --judge PROVIDER:MODEL",
            ],
            id="main-command",
        ),
        pytest.param(
            ["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            {"OPENAI_API_KEY": "sk-openai-0123456789"},
            [
                "two API keys are not set",
                "ANTHROPIC_API_KEY (--provider anthropic, --judge anthropic:claude-haiku-4-5)",
                "OPENROUTER_API_KEY",
            ],
            id="anthropic-candidate",
        ),
        pytest.param(
            [
                "--provider",
                "openai",
                *MODEL,
                "--api-key-env",
                "MY_EVAL_KEY",
                "--judge",
                "anthropic:claude-haiku-4-5",
            ],
            {},
            [
                "two API keys are not set",
                "MY_EVAL_KEY (--provider openai)",
                "ANTHROPIC_API_KEY (--judge anthropic:claude-haiku-4-5)",
            ],
            id="api-key-env-and-a-judge",
        ),
        pytest.param(
            [
                "--provider",
                "live",
                "--model",
                "qwen/qwen3-235b",
                "--base-url",
                "https://openrouter.ai/api/v1",
                "-m",
                "freeform",
            ],
            {},
            [
                "three API keys are not set",
                f"OPENROUTER_API_KEY (--provider live, {OPENROUTER_JUDGE})",
                "OPENAI_API_KEY (--judge openai:gpt-5-mini)",
            ],
            id="openrouter-candidate-freeform",
        ),
    ],
)
def test_every_missing_key_is_named_in_one_error_line(
    sdks, run, dirs, monkeypatch, args, keys, says
):
    """Not one failed run per key: every key the command needs and lacks, with what needs it."""
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    line = usage_error(run(*args))
    for part in says:
        assert part in line, line
    assert not written(*dirs)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--provider", "openai", *MODEL], id="default-judges"),
        pytest.param(
            ["--provider", "openai", *MODEL, "-k", "freeform"], id="selected-by-k"
        ),  # the selection decides, after collection
        pytest.param(
            [
                "--provider",
                "reference",
                "--judge",
                "anthropic:claude-haiku-4-5",
                "--judge",
                "live:x@https://openrouter.ai/api/v1",
            ],
            id="reference-candidate",
        ),
    ],
)
def test_the_judges_missing_keys_are_one_error_line_in_the_candidates_form(
    sdks, run, dirs, monkeypatch, args
):
    """Found once the items are selected, and printed as any usage error, not as pytest's
    internal `! _pytest.outcomes.Exit: ... !`."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    result = run(*args)
    out = "\n".join(result.outlines + result.errlines)
    assert result.ret == USAGE_ERROR and "Exit" not in out and "Traceback" not in out, out
    (line,) = [line for line in result.errlines if line.strip()]
    assert line.startswith(
        "ERROR: two API keys are not set: ANTHROPIC_API_KEY (--judge "
        "anthropic:claude-haiku-4-5), OPENROUTER_API_KEY (--judge live:"
    ), line
    assert line.endswith("; or pick judges you have keys for with --judge PROVIDER:MODEL"), line
    assert not written(*dirs)


def test_missing_dataset_file(run, dirs, tmp_path):
    missing = tmp_path / "missing.jsonl"
    line = usage_error(run("--provider", "reference", f"--dataset={missing}"))
    assert str(missing) in line and "no such dataset file" in line and "--dataset" in line
    assert not written(*dirs)


def test_missing_dataset_file_for_one_eval(run, dirs, tmp_path):
    missing = tmp_path / "missing.jsonl"
    line = usage_error(run("--provider", "reference", f"--dataset=mc={missing}"))
    assert f"--dataset {missing}" in line and "no such file" in line
    assert not written(*dirs)


def test_dataset_with_unknown_eval_prefix(run, dirs, tmp_path):
    line = usage_error(run("--provider", "reference", f"--dataset=quiz={tmp_path / 'q.jsonl'}"))
    assert "unknown eval 'quiz'" in line and "mc=" in line
    assert not written(*dirs)


GOOD = {
    "id": "x-1",
    "question": "Which call sends a RemoteEvent to the server?",
    "choices": ["FireClient", "FireServer"],
    "answer": "B",
}


@pytest.mark.parametrize(
    "second_line, says",
    [
        ('{"id": "x-2", "question": "Q?", "choices": ["a", "b"],', ["record 2", "not valid JSON"]),
        (
            json.dumps({"id": "x-2", "choices": ["a", "b"], "answer": "A"}),
            ["record 2", "missing column", "'question'"],
        ),
        (
            json.dumps({"id": "x-2", "question": "Q?", "choices": ["a", "b"], "answer": "E"}),
            ["record 2", "'E'"],
        ),
    ],
    ids=["invalid-json", "missing-column", "answer-not-a-choice"],
)
@pytest.mark.parametrize("prefix", ["", "mc="], ids=["bare", "mc"])
def test_malformed_dataset_record(run, dirs, tmp_path, second_line, says, prefix):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + second_line + "\n")
    line = usage_error(run("--provider", "reference", f"--dataset={prefix}{path}"))
    assert str(path) in line, line
    for part in says:
        assert part in line, line
    assert not written(*dirs)


# -- usage errors once missed, kept as regression tests ---------------------------------------------


def test_provider_local_alone_asks_for_a_checkpoint_folder(run):
    assert (
        "--model is required with --provider local (a checkpoint folder: --model=DIR)"
        in usage_error(run("--provider", "local"))
    )


def test_unknown_provider_alone_says_unknown(run):
    assert "--provider 'opnai' is unknown" in usage_error(run("--provider", "opnai"))


def test_judge_with_unknown_provider(run, dirs):
    line = usage_error(run("--provider", "reference", "--judge", "nosuch:model"))
    assert "--judge" in line and "nosuch" in line
    assert not written(*dirs)


def test_judge_api_key_missing(sdks, run, dirs):
    """Checked once the selection is known (after collection), before anything is asked."""
    result = run("--provider", "reference", "--judge", "openai:gpt-5-mini")
    out = "\n".join(result.outlines + result.errlines)
    errors = [line for line in result.outlines + result.errlines if "ERROR" in line]
    assert result.ret == USAGE_ERROR and len(errors) == 1 and "Traceback" not in out, out
    assert "--judge openai:gpt-5-mini" in errors[0] and "OPENAI_API_KEY" in errors[0]
    assert not written(*dirs)


def test_judge_api_key_missing_under_xdist_stops_with_the_line(sdks, pytester, dirs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_dir, results_dir = dirs
    result = pytester.runpytest_subprocess(
        EVALS,
        "-n",
        "2",
        "--provider=reference",
        "--judge=openai:gpt-5-mini",
        f"--run-dir={run_dir}",
        f"--results-dir={results_dir}",
    )
    out = "\n".join(result.outlines + result.errlines)
    # A usage error, as without workers (exit 4), not an interruption (2) that `evaluate` would offer to resume.
    assert result.ret == USAGE_ERROR and "INTERNALERROR" not in out and "Traceback" not in out, out
    assert "--judge openai:gpt-5-mini: the environment variable OPENAI_API_KEY is not set" in out
    assert not written(*dirs)


def test_judges_need_no_key_when_no_judged_item_is_selected(sdks, run, dirs):
    """-m "not freeform" mentions freeform and still runs no judge: the selection decides."""
    result = run("--provider", "reference", "--judge", "openai:gpt-5-mini", "-m", "not freeform")
    assert result.ret == 0, "\n".join(result.outlines[-20:] + result.errlines)
    assert not (dirs[0] / "freeform").exists()


# -- good flags: what is collected ---------------------------------------------------------------


def test_reference_collects_the_bundled_test_split(run):
    mc, ff = bundled("multiple_choice"), bundled("freeform")
    items = collected(run("--provider", "reference", "--co", "-q"))
    assert items == [f"test_multiple_choice[{i}]" for i in mc] + [f"test_freeform[{i}]" for i in ff]
    assert len(items) == len(mc) + len(ff) and "test_multiple_choice[mc-001]" in items
    assert len(items) == len(set(items))


@pytest.mark.parametrize(
    "args, which",
    [
        (["-m", "freeform"], "freeform"),
        (["-m", "multiple_choice"], "multiple_choice"),
        (["-k", "multiple_choice"], "multiple_choice"),
        (["-k", "freeform"], "freeform"),
    ],
)
def test_select_one_eval(run, args, which):
    items = collected(run("--provider", "reference", "--co", "-q", *args))
    assert items == [f"test_{which}[{i}]" for i in bundled(which)]


def test_split_train_and_limit(run):
    items = collected(run("--provider", "reference", "--co", "-q", "--split=train", "--limit=2"))
    assert items == [
        f"test_multiple_choice[{i}]" for i in bundled("multiple_choice", "train")[:2]
    ] + [f"test_freeform[{i}]" for i in bundled("freeform", "train")[:2]]


def test_bare_dataset_file_replaces_only_the_evals_it_fits(run, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "id": "x-2"}) + "\n")
    items = collected(run("--provider", "reference", "--co", "-q", f"--dataset={path}"))
    assert items == ["test_multiple_choice[x-1]", "test_multiple_choice[x-2]"] + [
        f"test_freeform[{i}]" for i in bundled("freeform")
    ]


def test_collect_only_asks_no_model(run, dirs):
    collected(run("--provider", "reference", "--co", "-q", "-m", "multiple_choice"))
    deadline = time.monotonic() + 3  # the prefetch threads outlive the in-process run
    while time.monotonic() < deadline and not written(*dirs):
        time.sleep(0.05)
    assert not written(*dirs)


# -- the harness's own tests need no eval flags ----------------------------------------------------


def test_plain_test_file_needs_no_flags(pytester):
    pytester.makepyfile("def test_ok():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_harness_tests_in_the_repo_need_no_flags(pytester, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = pytester.runpytest_inprocess("tests/unit/test_judges.py", "--co", "-q")
    assert result.ret == 0, "\n".join(result.outlines + result.errlines)
    assert any("test_judges.py::test_parse_verdict" in line for line in result.outlines)
    assert not any("test_robloxqa" in line for line in result.outlines)


@pytest.mark.parametrize(
    "markexpr", ["multiple_choice", "not freeform", "multiple_choice or leetcode"]
)
def test_only_the_evals_m_can_select_are_planned(run, tmp_path, markexpr):
    """Another eval's dataset is not even loaded: here it does not exist, and nothing minds."""
    result = run(
        "--provider",
        "reference",
        "-m",
        markexpr,
        "--limit=1",
        f"--dataset=ff={tmp_path / 'missing.jsonl'}",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "freeform" not in "".join(line for line in result.stdout.lines if "result file:" in line)


def test_an_eval_m_can_select_is_planned(run, tmp_path):
    result = run(
        "--provider",
        "reference",
        "-m",
        "freeform or multiple_choice",
        "--limit=1",
        f"--dataset=ff={tmp_path / 'missing.jsonl'}",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "missing.jsonl: no such file" in result.stderr.str() + result.stdout.str()
