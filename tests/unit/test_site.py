"""The leaderboard site, in process: site data from models.json and result files (scores, average,
suite cost, sizes, paired comparisons, none across datasets), a deterministic data.js and
`build --check`, the JSON schemas, a bad result file as one line, and which registered evals
the board shows. The command, racing builds and the page are tests/e2e/test_site.py."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from evals import schema, site, stats
from evals.cache import RunCache
from evals.config import run_name
from evals.errors import DataFileError, ProviderError
from evals.names import attempt_key
from evals.providers import Completion, Usage
from evals.models_file import ENTRY_ORDER, load_models
from evals.results import summarize
from evals.tasks import TASKS, Column, Task
from tests.support.site_boards import (
    Echo,
    Spelling,
    _write_run,
    cli,
    comparison,
    page,
    read_data_js,
    registered,
    board_data,
    result_of,
    rewrite_result,
    spelling_rows,
)

# ---- fixtures: a small models.json with realistic result files -----------------------------------


# ---- site data ---------------------------------------------------------------------------------


def test_site_data_has_scores_average_and_suite_cost_per_published_model(board_data):
    models, results, _ = board_data
    rows = site.site_data(load_models(models, results=results), results_dir=results)["models"]

    # best average first; the entry without resultFiles is not on the board
    assert [r["name"] for r in rows] == ["beta-2", "alpha-1", "qwen-local-70b"]
    alpha, beta, qwen = rows[1], rows[0], rows[2]

    # each score's 95% interval is its result file's, the average's combines the three evals'
    summaries = {
        key: json.loads((results / folder / entry["resultFiles"][key]).read_text())["summary"]
        for entry in json.loads(models.read_text())[:1]
        for key, folder in site.RESULT_KEYS.items()
    }
    intervals = alpha.pop("ci95")
    assert intervals == {
        "freeform": summaries["freeform"]["ci95"],
        "multipleChoice": summaries["multipleChoice"]["ci95"],
        "leetcode": summaries["leetcode"]["overall"]["ci95"],
        "leetcodeEasy": summaries["leetcode"]["easy"]["ci95"],
        "leetcodeMedium": summaries["leetcode"]["medium"]["ci95"],
        "leetcodeHard": summaries["leetcode"]["hard"]["ci95"],
        "average": stats.average_interval(
            [
                (0.7, intervals["freeform"]),
                (0.85, intervals["multipleChoice"]),
                (0.5833, intervals["leetcode"]),
            ]
        ),
    }
    assert intervals["freeform"] == [0.3968, 0.8922]  # Wilson, 7 of 10
    assert intervals["average"][0] < alpha["average"] < intervals["average"][1]

    assert alpha == {
        "name": "alpha-1",
        "page": "alpha-1",
        "provider": "OpenAI",
        "url": "https://example.com/alpha-1",
        "releaseDate": "2025-08-07",
        "size": None,
        "sizeLabel": "—",
        "freeform": 0.7,
        "multipleChoice": 0.85,
        "leetcode": 0.5833,
        "leetcodeEasy": 1.0,
        "leetcodeMedium": 0.5,
        "leetcodeHard": 0.25,
        "average": 0.7111,  # (0.7 + 0.85 + 0.5833) / 3
        # tokens in 10*1000 + 20*400 + 12*800 = 27_600 at $2, out 10*500 + 20*100 + 12*1500 = 25_000
        # at $8 per million (judge tokens not counted): (55_200 + 200_000) / 1e6
        "cost": 0.2552,
        "costBasis": "tokens",
        "price": {"input": 2.0, "output": 8.0},
    }
    assert (beta["freeform"], beta["multipleChoice"], beta["leetcode"], beta["average"]) == (
        0.9,
        0.9,
        0.75,
        0.85,
    )
    assert (beta["leetcodeEasy"], beta["leetcodeMedium"], beta["leetcodeHard"]) == (1.0, 0.75, 0.5)
    assert beta["cost"] == 0.5784  # in 32_800 * 3 + out 32_000 * 15 = 578_400 per million

    # electricity: (0.8 + 0.5 + 0.2 + 0.3 + 0.45) kWh * $0.15, whatever the token counts
    assert (qwen["cost"], qwen["costBasis"]) == (0.3375, "electricity")
    assert (qwen["size"], qwen["sizeLabel"]) == (70_600_000_000, "70.6 GB")
    assert (qwen["freeform"], qwen["multipleChoice"], qwen["leetcode"], qwen["average"]) == (
        0.5,
        0.6,
        0.3333,
        0.4778,
    )


def test_electricity_priced_model_without_all_five_kwh_figures_has_no_cost(board_data):
    models, results, _ = board_data
    entries = json.loads(models.read_text())
    del entries[2]["kilowattHour"]["hard"]
    models.write_text(json.dumps(entries, indent=2) + "\n")
    qwen = next(
        r
        for r in site.site_data(load_models(models, results=results), results_dir=results)["models"]
        if r["name"] == "qwen-local-70b"
    )
    assert (qwen["cost"], qwen["costBasis"]) == (None, "electricity")


def test_human_sizes():
    assert [
        site.human_size(s)
        for s in (
            None,
            512,
            1_500,
            8_030_000_000,
            70_600_000_000,
            999_960_000_000,
            1_200_000_000_000,
        )
    ] == ["—", "512 B", "1.5 KB", "8.0 GB", "70.6 GB", "1.0 TB", "1.2 TB"]


def test_comparisons_are_the_paired_test_over_per_question_scores(board_data):
    models, results, _ = board_data
    # one of alpha-1's hard problems broke in the dataset: that question is left out of its comparisons
    rewrite_result(
        models,
        results,
        "alpha-1",
        "leetcode",
        lambda r: (
            r["results"][-1].update(status="datasetError", correct=False),
            r.update(summary=summarize(TASKS["leetcode"], r["results"])),
        ),
    )
    data = site.site_data(load_models(models, results=results), results_dir=results)
    assert [m["name"] for m in data["models"]] == ["beta-2", "alpha-1", "qwen-local-70b"]

    def scores(
        name: str, key: str, band: str | None = None
    ) -> dict[str, list[bool]]:  # one row per question: right or wrong
        rows = result_of(models, results, name, key)["results"]
        return {
            r["id"]: [r["correct"]]
            for r in rows
            if r["status"] != "datasetError" and band in (None, r.get("difficulty"))
        }

    beta_alpha = comparison(data, "freeform", "beta-2", "alpha-1")
    paired = stats.paired(scores("beta-2", "freeform"), scores("alpha-1", "freeform"))
    assert beta_alpha == {
        "a": 0,
        "b": 1,
        "difference": paired["difference"],
        "low": paired["ci95"][0],
        "high": paired["ci95"][1],
        "distinguishable": paired["distinguishable"],
        "shared": 10,
        "onlyA": 2,
        "onlyB": 0,
        "mcnemarP": paired["mcnemarP"],
    }
    assert (beta_alpha["difference"], beta_alpha["distinguishable"], beta_alpha["mcnemarP"]) == (
        20.0,
        False,
        0.5,
    )

    for key, (result_key, band) in site.SCORES.items():
        for first, second in (
            ("beta-2", "alpha-1"),
            ("beta-2", "qwen-local-70b"),
            ("alpha-1", "qwen-local-70b"),
        ):
            paired = stats.paired(scores(first, result_key, band), scores(second, result_key, band))
            got = comparison(data, key, first, second)
            assert [got[f] for f in ("difference", "low", "high", "shared", "mcnemarP")] == [
                paired["difference"],
                *paired["ci95"],
                paired["shared"],
                paired["mcnemarP"],
            ], (key, first, second)
    assert (
        comparison(data, "leetcode", "alpha-1", "qwen-local-70b")["shared"] == 11
    )  # the broken problem left out
    assert comparison(data, "leetcodeHard", "beta-2", "alpha-1")["shared"] == 3
    mc = comparison(data, "multipleChoice", "beta-2", "qwen-local-70b")  # 18 of 20 against 12 of 20
    assert (mc["difference"], mc["distinguishable"], mc["onlyA"], mc["onlyB"]) == (30.0, True, 6, 0)


def test_runs_of_different_datasets_are_not_compared(board_data):
    models, results, _ = board_data
    rewrite_result(
        models,
        results,
        "qwen-local-70b",
        "multipleChoice",
        lambda r: r["config"]["dataset"].update(sha256="1" * 64),
    )
    data = site.site_data(load_models(models, results=results), results_dir=results)
    assert comparison(data, "multipleChoice", "beta-2", "qwen-local-70b") is None
    assert comparison(data, "multipleChoice", "alpha-1", "qwen-local-70b") is None
    assert comparison(data, "multipleChoice", "beta-2", "alpha-1") is not None
    assert (
        comparison(data, "freeform", "alpha-1", "qwen-local-70b") is not None
    )  # its other evals used the same data
    assert (
        len(data["comparisons"]["multipleChoice"]) == 1
        and len(data["comparisons"]["leetcodeHard"]) == 3
    )


# ---- the CLI: --write, --check, bad data ------------------------------------------------------


def test_write_is_deterministic_and_rebuild_is_byte_identical(board_data, capsys):
    models, results, site_dir = board_data
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert capsys.readouterr().out.startswith("wrote ")
    first = (site_dir / "data.js").read_bytes()
    mtime = (site_dir / "data.js").stat().st_mtime_ns

    text = first.decode()
    assert text.endswith("};\n") and "\r" not in text and "\n\n" not in text
    assert text.count("window.LEADERBOARD = ") == 1
    assert [m["name"] for m in read_data_js(site_dir)["models"]] == [
        "beta-2",
        "alpha-1",
        "qwen-local-70b",
    ]
    assert "gamma-preview" not in text

    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert "up to date" in capsys.readouterr().out
    assert (site_dir / "data.js").read_bytes() == first
    assert (site_dir / "data.js").stat().st_mtime_ns == mtime  # not rewritten

    # a fresh build from an identical copy of the data, in another order on disk, is the same bytes
    pages = {path.name: path.read_bytes() for path in (site_dir / "models").iterdir()}
    assert sorted(pages) == ["alpha-1.js", "beta-2.js", "qwen-local-70b.js"]
    entries = json.loads(models.read_text())
    models.write_text(json.dumps(entries[::-1], indent=4) + "\n")
    shutil.rmtree(site_dir)
    assert (
        site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True) is True
    )
    assert (site_dir / "data.js").read_bytes() == first
    assert {path.name: path.read_bytes() for path in (site_dir / "models").iterdir()} == pages
    assert (
        site.build(models_path=models, results_dir=results, site_dir=site_dir, write=False) is False
    )


def test_check_catches_stale_data_js(board_data, capsys):
    models, results, site_dir = board_data
    assert site.main(cli(models, results, site_dir, "--check")) == 1  # never built
    assert (
        capsys.readouterr().err.strip().endswith("and 4 more are stale: run `uv run build --write`")
    )  # 2 model pages, 2 schemas

    site.main(cli(models, results, site_dir, "--write"))
    capsys.readouterr()
    assert site.main(cli(models, results, site_dir, "--check")) == 0
    built = (site_dir / "data.js").read_bytes()

    entries = json.loads(models.read_text())
    entries[0]["price"]["output"] = 10.0  # alpha-1 gets dearer
    models.write_text(json.dumps(entries, indent=2) + "\n")
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    err = capsys.readouterr().err
    # the board and alpha-1's own page, which shows its price
    assert (
        err
        == f"{site_dir / 'data.js'} and {site_dir / 'models' / 'alpha-1.js'} are stale: run `uv run build --write`\n"
    )
    assert (site_dir / "data.js").read_bytes() == built  # --check writes nothing

    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert site.main(cli(models, results, site_dir, "--check")) == 0


def test_the_json_schemas_are_written_and_checked_like_data_js(board_data, capsys):
    """site/schema/: the models' JSON Schemas, as `evals/schema.py` declares them; a schema
    file that is not what the models say is stale."""
    models, results, site_dir = board_data
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    written = {path.name: path.read_text() for path in (site_dir / "schema").iterdir()}
    assert written == {
        name: schema.schema_text(name) for name in ("models.schema.json", "result.schema.json")
    }
    models_schema, result_schema = (
        json.loads(written[name]) for name in ("models.schema.json", "result.schema.json")
    )
    assert models_schema["type"] == "array" and models_schema["items"] == {"$ref": "#/$defs/Entry"}
    entry = models_schema["$defs"]["Entry"]
    assert list(entry["properties"]) == list(ENTRY_ORDER) and entry["required"] == [
        "name",
        "provider",
        "url",
        "releaseDate",
        "price",
    ]
    assert entry["properties"]["size"]["anyOf"][0]["exclusiveMaximum"] == 2**53
    assert [ref["$ref"] for ref in result_schema["anyOf"]] == [
        "#/$defs/Result",
        "#/$defs/BandedResult",
    ]
    assert (
        result_schema["$defs"]["Summary"]["properties"]["ci95"]["description"]
        == "a [low, high] pair of fractions, low <= high"
    )
    capsys.readouterr()

    (site_dir / "schema" / "result.schema.json").write_text("{}\n")
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    assert (
        capsys.readouterr().err
        == f"{site_dir / 'schema' / 'result.schema.json'} is stale: run `uv run build --write`\n"
    )
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert (site_dir / "schema" / "result.schema.json").read_text() == written["result.schema.json"]


RESULT_DAMAGE = {
    # damage -> the end of the line that names it ("" where only the file is named)
    "missing": "resultFiles.leetcode: names ",  # the file, found missing by models.json's check
    "truncated": "",
    "binary": "",
    "not an object": "must be a result file: a JSON object with config, summary and results (got 42)",
    "no summary": (
        "summary.hard: missing (must be a summary: an object with n, correct, "
        "accuracy, ci95, apiErrors and tokens, and the other counts when there)"
    ),
    "wrong eval": "it is a freeform result, not leetcode",
    "huge token count": (
        "summary.overall.tokens.input: must be a count from 0 to 2**53 - 1 "
        "(got 100000000000000000000000000000000000000000000000000000000...)"
    ),
    "no n": "summary.overall.n: missing (must be a count from 0 to 2**53 - 1)",
    "no ci95": "summary.medium.ci95: missing (must be a [low, high] pair of fractions, low <= high)",
    "ci95 not a pair": "summary.overall.ci95: must be a [low, high] pair of fractions, low <= high (got [0.3])",
    "ci95 reversed": "summary.overall.ci95: must be a [low, high] pair of fractions, low <= high (got [0.8, 0.3])",
    "ci95 over 1": "summary.overall.ci95: must be a [low, high] pair of fractions, low <= high (got [0.3, 1.5])",
    "row without id": "results[3].id: missing (must be a string)",
    "bad epoch": "results[3].epoch: must be a count from 1 to 2**53 - 1 (got 0)",
    "bad difficulty": 'results[3].difficulty: must be one of easy, medium, hard (got "Easy")',
    "bad passAt": 'summary.easy.passAt: must be an object of fractions by k (1, 2, ...) (got {"1": "all"})',
    "bad batch": "summary.overall.batch.priceFactor: must be a fraction from 0 to 1 (got 2)",
    "unknown eval": 'config.eval: must be one of freeform, multiple_choice, leetcode (got "luau")',
    "two errors": "config.provider: must be a string (got null), and 1 more",
}


@pytest.mark.parametrize("damage", list(RESULT_DAMAGE))
def test_bad_result_file_is_one_line_naming_it(board_data, damage, capsys):
    """Missing, corrupt, or a field the site or the publish rules read of the wrong shape:
    one line naming the file, the field and what it must be, and how to fix it."""
    models, results, site_dir = board_data
    alpha = json.loads(models.read_text())[0]
    path = results / "leetcode" / alpha["resultFiles"]["leetcode"]
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "binary":
        path.write_bytes(b"\xff\xfe\x00garbage")
    elif damage == "not an object":
        path.write_text("42\n")
    elif damage != "wrong eval":
        result = json.loads(path.read_text())
        summary, row = result["summary"], result["results"][3]
        if damage == "no summary":
            del summary["hard"]
        elif damage == "huge token count":
            summary["overall"]["tokens"]["input"] = 10**400
        elif damage == "no n":
            del summary["overall"]["n"]
        elif damage == "no ci95":
            del summary["medium"]["ci95"]
        elif damage.startswith("ci95"):
            summary["overall"]["ci95"] = {
                "ci95 not a pair": [0.3],
                "ci95 reversed": [0.8, 0.3],
                "ci95 over 1": [0.3, 1.5],
            }[damage]
        elif damage == "row without id":
            del row["id"]
        elif damage == "bad epoch":
            row["epoch"] = 0
        elif damage == "bad difficulty":
            row["difficulty"] = "Easy"
        elif damage == "bad passAt":
            summary["easy"]["passAt"] = {"1": "all"}
        elif damage == "bad batch":
            summary["overall"]["batch"] = {
                "calls": 1,
                "tokens": {"input": 1, "output": 1},
                "priceFactor": 2,
            }
        elif damage == "unknown eval":
            result["config"]["eval"] = "luau"
        else:
            result["config"]["provider"] = None
            result["config"]["model"] = 5
        path.write_text(json.dumps(result))
    else:
        shutil.copy(results / "freeform" / alpha["resultFiles"]["freeform"], path)
    assert (
        site.main(cli(models, results, site_dir, "--write")) == 2
    )  # an exception would fail the test
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(
        f"build: {models if damage == 'missing' else path}: "
    ), err
    assert RESULT_DAMAGE[damage] in err and path.name in err, err
    if damage not in ("missing", "wrong eval"):
        assert err.endswith("; rerun its eval to write it again\n"), err
    assert not (site_dir / "data.js").exists()


# ---- what cannot be on the board: bad metadata, result files the publish rules refuse -------


# ---- build --write and publishing share the models.json lock --------------------------------


# ---- the page in headless Chromium ----------------------------------------------------------


# ---- the board's evals are the registry's ---------------------------------------------------


def test_an_eval_off_the_board_never_appears(registered, board_data, tmp_path):
    """Registered, with a result file in the results folder: the site is byte for byte the one
    built without it."""
    models, results, site_dir = board_data
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True)
    built = {
        path.relative_to(site_dir): path.read_bytes()
        for path in site_dir.rglob("*")
        if path.is_file()
    }

    task = registered(Echo)
    assert "echo" in TASKS and task.on_board is False
    _write_run(
        results, "echo", "alpha-1", "openai", spelling_rows(4, 4), runs=results.parent / "runs"
    )
    assert "echo" not in site.RESULT_KEYS.values() and not any(
        result_key == "echo" for result_key, _ in site.SCORES.values()
    )
    assert not site.build(
        models_path=models, results_dir=results, site_dir=site_dir, write=False
    )  # nothing stale
    shutil.rmtree(site_dir)
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True)
    assert {
        path.relative_to(site_dir): path.read_bytes()
        for path in site_dir.rglob("*")
        if path.is_file()
    } == built
    assert not any(word in text for text in built.values() for word in (b"echo", b"Echo"))


@pytest.mark.parametrize(
    "column, why",
    [
        (
            Column("leetcodeEasy", "Easy"),
            "'clash': its board column 'leetcodeEasy' is 'leetcode''s already",
        ),
        (
            Column("average", "Average"),
            "'clash': its board column 'average' is a field of every board row",
        ),
        (
            Column("clashMedium", "Medium", "medium"),
            "'clash': its board column 'clashMedium' reads band 'medium', not one of its bands",
        ),
    ],
    ids=["another eval's", "a row field", "not its band"],
)
def test_an_eval_whose_column_cannot_be_on_the_board_is_one_line(
    registered, board_data, column, why, capsys
):
    registered(
        type(
            "Clash",
            (Spelling,),
            {
                "__module__": __name__,
                "name": "clash",
                "tag": "cl",
                "key": "clash",
                "board": (column,),
            },
        )
    )
    line = f"eval {why.replace(':', f' ({__name__}):', 1)}; give it another key or band"
    with pytest.raises(DataFileError) as refused:
        dict(site.SCORES)
    assert str(refused.value) == line

    models, results, site_dir = board_data  # what `build` says, before it reads a result file
    assert site.main(cli(models, results, site_dir, "--check")) == 2
    assert capsys.readouterr().err == f"build: {line}\n"


# ---- a crowded board, a waived gate, one precision for costs, a phone's width ------------------
