"""`evaluate` between attempts, through the real CLI against loopback servers: a bare resume
sends its requests as the first attempt did (the how-to-run flags the plan keeps, by name), a
refused or unfinished attempt leaves models.json alone (its metadata waits in the plan), one
price of a published entry can be updated alone, and every hint is a command that works.

Each command (`evaluate`, `pytest --publish`, and the hint it printed, run as written) is exec'd as
a user runs it, a process with its own exit status, environment and streams, against servers on
threads of the test."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from tests.support.board import META, entry, evaluate_command, model_flags
from tests.support.harness import (
    MC,
    ROOT,
    Student,
    fail_first_mc,
    harness_command,
    harness_env,
    out,
    run_cli,
)
from tests.support.loopback import OpenAIServer
from tests.support.power import Power

MINE = "sk-loopback-my-own-key"


def run(data, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_cli(evaluate_command(data, *args), env=env or harness_env(), timeout=300)


def plan_text(data) -> str:
    (plan,) = (data / "plans").glob("*.json")
    return plan.read_text()


# -- item 1: a bare resume keeps every how-to-run flag it needs ------------------------------------


def test_a_bare_resume_sends_with_the_key_variable_the_first_attempt_named(
    server, student, tmp_path
):
    data, env = tmp_path / "data", harness_env(MY_KEY=MINE)
    fail_first_mc(server, 4)
    first = run(
        data, "Keyed", *model_flags(server), *META, "--evals=mc", "--api-key-env=MY_KEY", env=env
    )
    assert first.returncode == 1 and "not published" in first.stdout, out(first)
    server.clear_faults()
    asked = len(server.requests)

    resumed = run(data, "Keyed", "--evals=mc", env=env)

    assert resumed.returncode == 0, out(resumed)
    retried = server.requests[asked:]
    assert sorted(student.question_of(r.body) for r in retried) == sorted(q["id"] for q in MC[:4])
    assert {r.api_key for r in retried} == {MINE}  # not the default variable's key, nor "EMPTY"
    assert '"--api-key-env": "MY_KEY"' in plan_text(data) and MINE not in plan_text(data)


def test_a_bare_resume_after_a_smoke_test_keeps_the_responses_api(server, tmp_path):
    data = tmp_path / "data"
    smoke = run(
        data,
        "Responding",
        *model_flags(server),
        *META,
        "--evals=mc",
        "--limit=2",
        "--responses-api",
    )
    assert smoke.returncode == 0, out(smoke)
    asked = len(server.requests)

    real = run(
        data, "Responding", *META, "--evals=mc"
    )  # a smoke test keeps no metadata: it publishes nothing

    assert real.returncode == 0, out(real)
    paths = {r.path for r in server.requests[asked:]}
    assert paths == {"/v1/responses"}, paths
    assert len(server.requests) - asked == len(MC)  # a smoke test has its own run folder


def test_a_bare_resume_runs_the_evals_the_first_attempt_picked(server, tmp_path):
    data = tmp_path / "data"
    first = run(data, "Picky", *model_flags(server), *META, "--evals=mc,ff", "--limit=1")
    assert first.returncode == 0, out(first)

    plan = run(data, "Picky", "--dry-run")

    commands = [
        line.split(":")[0].strip()
        for line in plan.stdout.splitlines()
        if line.strip().startswith(("ff:", "mc:", "lc:"))
    ]
    assert sorted(commands) == ["ff", "mc"], plan.stdout  # not LeetCode, which it never picked
    assert '"picked"' in plan_text(data)
    everything = run(data, "Picky", "--dry-run", "--evals=mc,ff,lc")
    assert "lc:" in everything.stdout, out(everything)  # given again, --evals wins


def test_a_bare_resume_keeps_the_energy_meter_it_was_started_with(server, tmp_path):
    data, powercap = tmp_path / "data", tmp_path / "powercap"
    with Power(powercap):
        smoke = run(
            data,
            "Metered",
            *model_flags(server),
            *META,
            "--evals=mc",
            "--limit=2",
            "--energy",
            f"--energy-powercap={powercap}",
            "--energy-period=0.05",
        )
    assert smoke.returncode == 0, out(smoke)

    plan = run(data, "Metered", *META, "--dry-run", "--evals=mc,ff,lc")

    commands = [
        line for line in plan.stdout.splitlines() if line.strip().startswith(("ff:", "mc:", "lc:"))
    ]
    assert len(commands) == 3, plan.stdout
    assert all(
        "--energy " in line
        and f"--energy-powercap={powercap}" in line
        and "--energy-period=0.05" in line
        for line in commands
    ), commands


def test_a_resume_under_another_provider_drops_the_old_providers_own_flags(server, tmp_path):
    data = tmp_path / "data"
    smoke = run(
        data,
        "Switched",
        *model_flags(server),
        *META,
        "--evals=mc",
        "--limit=2",
        "--responses-api",
        "--api-key-env=OPENAI_API_KEY",
    )
    assert smoke.returncode == 0, out(smoke)

    other = run(
        data,
        "Switched",
        *META,
        "--provider=live",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        "--dry-run",
    )

    assert other.returncode == 0 and "Traceback" not in out(other), out(other)
    assert "--responses-api" not in other.stdout and "--api-key-env" not in other.stdout, (
        other.stdout
    )


# -- item 2: a refused or unfinished attempt writes nothing into models.json ----------------------


def test_a_refused_attempt_leaves_models_json_alone_and_its_metadata_waits_in_the_plan(
    server, tmp_path
):
    data = tmp_path / "data"
    fail_first_mc(server, 4)
    refused = run(data, "Waiting", *model_flags(server), *META)
    assert (
        refused.returncode == 1
        and "not published: multipleChoice: 4 of 40 answers failed" in refused.stdout
    ), out(refused)
    assert not (data / "models.json").exists()
    assert '"provider": "Loopback Labs"' in plan_text(data)
    server.clear_faults()

    published = run(data, "Waiting")  # no metadata flags: the plan has them

    assert published.returncode == 0 and "published 'Waiting'" in published.stdout, out(published)
    assert (
        entry(data, "Waiting")["provider"] == "Loopback Labs"
        and entry(data, "Waiting")["resultFiles"]
    )


def test_an_unfinished_board_leaves_models_json_alone(server, tmp_path):
    data = tmp_path / "data"
    done = run(data, "Partial", *model_flags(server), *META, "--evals=mc")
    assert (
        done.returncode == 0 and "not published yet: freeform, leetcode not finished" in done.stdout
    ), out(done)
    assert not (data / "models.json").exists()


def test_an_electricity_priced_run_without_its_kwh_leaves_models_json_alone(server, tmp_path):
    data = tmp_path / "data"
    meta = [m for m in META if not m.startswith("--price")] + ["--price-electricity=0.30"]
    done = run(data, "Unmetered", *model_flags(server), *meta)
    assert "needs all five kilowattHour values" in done.stdout, out(done)
    assert not (data / "models.json").exists()


def test_a_failed_attempt_leaves_a_published_entry_as_it_was(server, tmp_path):
    data = tmp_path / "data"
    assert run(data, "Stable", *model_flags(server), *META).returncode == 0
    before = (data / "models.json").read_bytes()
    server.fail_when(lambda r: True, 400)

    other = run(data, "Stable", "--effort=high", "--provider-name=Renamed Labs", "--evals=mc")

    assert other.returncode == 1, out(other)
    assert (data / "models.json").read_bytes() == before


# -- item 3: a partial price update of an existing entry --------------------------------------------


def test_one_price_of_a_published_entry_is_updated_alone(server, tmp_path):
    data = tmp_path / "data"
    assert run(data, "Priced", *model_flags(server), *META).returncode == 0
    asked = len(server.requests)

    output = run(data, "Priced", "--price-output=5")
    assert output.returncode == 0, out(output)
    assert entry(data, "Priced")["price"] == {"input": 1.25, "output": 5}
    inputs = run(data, "Priced", "--price-input=0.5")
    assert inputs.returncode == 0, out(inputs)
    assert entry(data, "Priced")["price"] == {"input": 0.5, "output": 5}
    assert len(server.requests) == asked  # reproduced offline


def test_one_price_of_an_entry_priced_by_electricity_is_one_line(server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "models.json").write_text(
        json.dumps(
            [
                {
                    "name": "Local",
                    "provider": "P",
                    "url": "https://p",
                    "releaseDate": "2026-01-02",
                    "size": None,
                    "price": {"electricity": 0.3},
                }
            ]
        )
    )
    done = run(data, "Local", *model_flags(server), "--price-output=5", "--dry-run")
    assert done.returncode == 2 and not server.requests and "Traceback" not in out(done), out(done)
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "--price-output alone updates one price per token, and 'Local' "
            "is priced per kWh: pass --price-input and --price-output together"
        )
    )


# -- item 8: the hint pytest --publish gives is a command that works --------------------------------


def test_the_hint_of_pytest_publish_for_a_new_model_is_a_command_that_publishes_it(
    server, tmp_path
):
    data = tmp_path / "data"
    done = run_cli(
        harness_command(
            *model_flags(server),
            "-m",
            "multiple_choice",
            "--publish=Hinted",
            "--api-key-env=OPENAI_API_KEY",
            run_dir=data / "runs",
            results_dir=data / "results",
        ),
        env=harness_env(),
        timeout=300,
    )
    line = next((line for line in done.stdout.splitlines() if "add it first with" in line), None)
    assert line, done.stdout[-3000:]
    hint = line.split("`")[1]
    filled = (
        hint.replace("PROVIDER_NAME", "'Loopback Labs'")
        .replace("MODEL_PAGE", "https://example.com/student")
        .replace("YYYY-MM-DD", "2026-11-01")
        .replace("USD_PER_MILLION_INPUT", "1.25")
        .replace("USD_PER_MILLION_OUTPUT", "10")
    )
    words = shlex.split(filled)
    assert (
        words[:3] == ["uv", "run", "evaluate"]
        and "--model=student-1" in words
        and "--provider=openai" in words
    ), hint
    assert "--api-key-env=OPENAI_API_KEY" in words, hint

    followed = run_cli(
        [sys.executable, "-m", "evals.evaluate", *words[3:]], env=harness_env(), timeout=300
    )

    assert followed.returncode == 0 and "published 'Hinted'" in followed.stdout, out(followed)
    assert entry(data, "Hinted")["resultFiles"]


def test_the_hint_keeps_the_identity_and_the_providers_own_flags(server, tmp_path):
    data = tmp_path / "data"
    done = run_cli(
        harness_command(
            *model_flags(server),
            "-m",
            "multiple_choice",
            "--publish=Elsewhere",
            "--effort=low",
            "--responses-api",
            run_dir=data / "runs",
            results_dir=data / "results",
        ),
        env=harness_env(),
        timeout=300,
    )
    line = next((line for line in done.stdout.splitlines() if "add it first with" in line), None)
    assert line, done.stdout[-3000:]
    words = shlex.split(line.split("`")[1])
    assert {
        "--effort=low",
        "--responses-api",
        f"--data-dir={data}",
        f"--judge=live:judge-a@{server.url}/v1",
    } <= set(words), line


# -- item 9: an offline metadata lookup says the flags avoid it -------------------------------------


def lookup_failure(tmp_path, *extra: str, env: dict[str, str] | None = None) -> str:
    with OpenAIServer(Student()) as server:
        done = run(
            tmp_path / "data",
            "Lookup",
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            "--evals=mc",
            *extra,
            env=env,
        )
        assert not server.requests
    assert done.returncode == 1 and "Traceback" not in out(done), out(done)
    assert not (tmp_path / "data").exists() or not (tmp_path / "data" / "models.json").exists()
    (line,) = done.stderr.strip().splitlines()
    return line


def test_an_unreachable_model_list_says_which_flags_avoid_the_lookup(tmp_path):
    line = lookup_failure(tmp_path, "--provider-name=P", "--url=https://p.example")
    assert "could not fetch the OpenRouter model list" in line
    assert line.endswith(
        "or pass --release-date and --price-input/--price-output or --price-electricity, and nothing is looked up"
    ), line


def test_a_model_list_answering_an_error_says_which_flags_avoid_the_lookup(tmp_path):
    with OpenAIServer(lambda r: "x") as broken:
        broken.fail_when(lambda r: True, 502)
        line = lookup_failure(
            tmp_path,
            "--url=https://p.example",
            "--release-date=2026-01-02",
            "--price-input=1",
            "--price-output=2",
            env=harness_env(OPENROUTER_API_BASE=f"{broken.url}/v1"),
        )
    assert "HTTP 502" in line and line.endswith(
        "or pass --provider-name, and nothing is looked up"
    ), line


def test_an_unreachable_hub_for_a_weights_url_says_which_flags_avoid_the_lookup(tmp_path):
    line = lookup_failure(
        tmp_path,
        "--provider-name=P",
        "--url=https://huggingface.co/org/model",
        "--release-date=2026-01-02",
    )
    assert line.endswith(
        "or pass --price-input/--price-output or --price-electricity, and nothing is looked up"
    ), line


def test_an_unreachable_hub_for_a_size_link_says_bytes_avoid_the_lookup(tmp_path):
    line = lookup_failure(tmp_path, *META, "--size", "https://huggingface.co/org/model")
    assert line.endswith("or pass --size as a number of bytes, and nothing is looked up"), line
