"""The leaderboard site: site data from models.json and result files (scores, average, suite
cost), a deterministic data.js, `build --check`, bad data as one line; then the page itself in
headless Chromium driven by Selenium (tests/support/browser.py): no console errors, every published
model, sorting, the chart, the empty board; a crowded board (ten close models, labels that must
not overlap), a waived error gate, costs to one precision, and a phone's 390 px width."""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from evals import extensions, schema, site, stats
from evals.cache import RunCache
from evals.config import run_name
from evals.errors import ProviderError, RegistryError
from evals.names import attempt_key
from evals.providers import Completion, Usage
from evals.registry import ENTRY_ORDER, load_models
from evals.results import summarize
from evals.tasks import TASKS, Column, Task
from tests.support import ROOT
from tests.support.browser import (
    SKIP_WITHOUT_CHROMIUM,
    BrowserUnavailable,
    skipped_without_chromium,
    start_chromium,
)

STATIC = ("index.html", "model.html", "common.js", "app.js", "model.js", "style.css")


# ---- fixtures: a small registry with realistic result files -----------------------------------

def _rows(eval_name: str, *, n: int, correct: int, usage: tuple[int, int], difficulty: str | None = None, offset: int = 0) -> list[dict]:
    rows = []
    for i in range(n):
        ok = i < correct
        row = {
            "id": f"{eval_name[:2]}-{offset + i:04d}",
            "status": "correct" if ok else "wrong",
            "correct": ok,
            "usage": {"input": usage[0], "output": usage[1], "reasoning": usage[1] // 2, "cached": 0},
            "latency": 1.5,
        }
        if eval_name == "multiple_choice":
            row |= {"expected": "B", "answer": "B" if ok else "C"}
        elif eval_name == "freeform":
            verdict = "CORRECT" if ok else "INCORRECT"
            row |= {
                "verdicts": [{"judge": f"openai:judge-{j}", "verdict": verdict} for j in "abc"],
                "agreed": True,
                # judges are not the candidate's cost: large numbers that would show if counted
                "judgeUsage": {"input": 90_000, "output": 9_000, "reasoning": 0, "cached": 0},
            }
        else:
            row |= {"difficulty": difficulty, "tests": "5/5" if ok else "3/5", "note": None if ok else "2 tests failed", "work": 1200, "workBudget": 50_000}
        rows.append(row)
    return rows


def _write_run(results: Path, eval_name: str, model: str, provider: str, rows: list[dict], *, runs: Path | None = None,
               replies: dict[str, str] | None = None, dataset: str = "0" * 64) -> str:
    """The result file of `rows`, and with `runs` its run folder: a candidate cache record per
    row (under the row's attempt key), the reply `replies[id]` or a plain one, an API error's
    record for an apiError row."""
    task = TASKS[eval_name]
    config = {"eval": eval_name, "provider": provider, "model": model, "split": "test",
              "dataset": {"source": "bundled", "sha256": dataset}, "promptVersion": task.prompt_version, "harnessVersion": 1}
    # the summary as the harness computes it; the rest of the file written here, as it is laid out
    result = {"config": config, "summary": summarize(task, rows), "publishable": True, "notPublishable": [],
              "timing": {"wall": 12.5}, "results": sorted(rows, key=lambda r: r["id"])}
    name = run_name(config) + ".json"
    (results / eval_name).mkdir(parents=True, exist_ok=True)
    (results / eval_name / name).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if runs is not None:
        cache = RunCache(runs / eval_name / run_name(config), session="s")
        for row in rows:
            request = {"provider": {"provider": provider, "model": model}, "prompt": question_of(row["id"]), "system": "You are a Roblox expert."}
            if row["status"] == "apiError":
                outcome = ProviderError("rate limited for good", kind="rate_limit", status=429)
            else:
                text = (replies or {}).get(row["id"], f"My answer to {row['id']}, epoch {row.get('epoch', 1)}.")
                outcome = Completion(text=text, reasoning=f"Thinking about {row['id']}.", usage=Usage(10, 20))
            cache.store(attempt_key(row["id"], row.get("epoch")), "candidate", request, outcome)
    return name


def question_of(item_id: str) -> str:
    return f"Question {item_id}: how does a RemoteEvent reach the server?"


HOSTILE = '</script><script>alert(1)</script><img src=x onerror="window.__pwned = 1"> & \u2028 done \x1b]0;title\x07 \u202edesrever\nnext line'


def _publish(results: Path, model: str, provider: str, *, ff: tuple[int, int], mc: tuple[int, int], lc: dict[str, int],
             usage: dict[str, tuple[int, int]], runs: Path | None = None, replies: dict[str, str] | None = None) -> dict[str, str]:
    """Writes the three result files (and with `runs` their run folders): ff/mc = (n, correct),
    lc = correct of 4 per difficulty, usage = per-row (input, output) tokens per eval."""
    leetcode = []
    for band, correct in lc.items():
        leetcode += _rows("leetcode", n=4, correct=correct, usage=usage["leetcode"], difficulty=band, offset=len(leetcode))
    more = {"runs": runs, "replies": replies}
    return {
        "freeform": _write_run(results, "freeform", model, provider, _rows("freeform", n=ff[0], correct=ff[1], usage=usage["freeform"]), **more),
        "multipleChoice": _write_run(results, "multiple_choice", model, provider,
                                     _rows("multiple_choice", n=mc[0], correct=mc[1], usage=usage["multiple_choice"]), **more),
        "leetcode": _write_run(results, "leetcode", model, provider, leetcode, **more),
    }


def make_registry(root: Path) -> tuple[Path, Path]:
    """models.json + data/results under `root`: two token-priced models, one priced by
    electricity, and one entry without results (not published). The first two have their run
    folders under root/runs (alpha-1's last freeform reply (fr-0009) is hostile HTML); qwen-local-70b's
    are not in this checkout."""
    results, runs = root / "results", root / "runs"
    models = [
        {
            "name": "alpha-1", "provider": "OpenAI", "url": "https://example.com/alpha-1", "releaseDate": "2025-08-07",
            "size": None, "price": {"input": 2.0, "output": 8.0},
            "resultFiles": _publish(results, "alpha-1", "openai", ff=(10, 7), mc=(20, 17), lc={"easy": 4, "medium": 2, "hard": 1},
                                    usage={"freeform": (1000, 500), "multiple_choice": (400, 100), "leetcode": (800, 1500)},
                                    runs=runs, replies={"fr-0009": HOSTILE}),
        },
        {
            "name": "beta-2", "provider": "Anthropic", "url": "https://example.com/beta-2", "releaseDate": "2025-09-29",
            "size": None, "price": {"input": 3, "output": 15},
            "resultFiles": _publish(results, "beta-2", "anthropic", ff=(10, 9), mc=(20, 18), lc={"easy": 4, "medium": 3, "hard": 2},
                                    usage={"freeform": (1200, 700), "multiple_choice": (500, 50), "leetcode": (900, 2000)}, runs=runs),
        },
        {
            "name": "qwen-local-70b", "provider": "Qwen", "url": "https://example.com/qwen-local-70b", "releaseDate": "2025-04-29",
            "size": 70_600_000_000, "price": {"electricity": 0.15},
            "kilowattHour": {"freeform": 0.8, "multipleChoice": 0.5, "easy": 0.2, "medium": 0.3, "hard": 0.45},
            "resultFiles": _publish(results, "qwen-local-70b", "live", ff=(10, 5), mc=(20, 12), lc={"easy": 3, "medium": 1, "hard": 0},
                                    usage={"freeform": (1000, 900), "multiple_choice": (400, 300), "leetcode": (800, 2500)}),
        },
        {
            "name": "gamma-preview", "provider": "Gamma", "url": "https://example.com/gamma", "releaseDate": "2025-10-01",
            "size": 8_000_000_000, "price": {"input": 0.5, "output": 1.5},
        },
    ]
    path = root / "models.json"
    path.write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    return path, results


@pytest.fixture
def registry(tmp_path: Path) -> tuple[Path, Path, Path]:
    models, results = make_registry(tmp_path)
    return models, results, tmp_path / "site"


def cli(models: Path, results: Path, site_dir: Path, *flags: str) -> list[str]:
    return [*flags, f"--models={models}", f"--results={results}", f"--site={site_dir}"]


def read_data_js(site_dir: Path) -> dict:
    text = (site_dir / "data.js").read_text(encoding="utf-8")
    body = text[text.index("window.LEADERBOARD = ") + len("window.LEADERBOARD = "):]
    assert body.endswith("};\n")
    return json.loads(body[:-2])


# ---- site data ---------------------------------------------------------------------------------

def test_site_data_has_scores_average_and_suite_cost_per_published_model(registry):
    models, results, _ = registry
    rows = site.site_data(load_models(models, results=results), results_dir=results)["models"]

    # best average first; the entry without resultFiles is not on the board
    assert [r["name"] for r in rows] == ["beta-2", "alpha-1", "qwen-local-70b"]
    alpha, beta, qwen = rows[1], rows[0], rows[2]

    # each score's 95% interval is its result file's, the average's combines the three evals'
    summaries = {key: json.loads((results / folder / entry["resultFiles"][key]).read_text())["summary"]
                 for entry in json.loads(models.read_text())[:1] for key, folder in site.RESULT_KEYS.items()}
    intervals = alpha.pop("ci95")
    assert intervals == {
        "freeform": summaries["freeform"]["ci95"], "multipleChoice": summaries["multipleChoice"]["ci95"],
        "leetcode": summaries["leetcode"]["overall"]["ci95"], "leetcodeEasy": summaries["leetcode"]["easy"]["ci95"],
        "leetcodeMedium": summaries["leetcode"]["medium"]["ci95"], "leetcodeHard": summaries["leetcode"]["hard"]["ci95"],
        "average": stats.average_interval([(0.7, intervals["freeform"]), (0.85, intervals["multipleChoice"]), (0.5833, intervals["leetcode"])]),
    }
    assert intervals["freeform"] == [0.3968, 0.8922]  # Wilson, 7 of 10
    assert intervals["average"][0] < alpha["average"] < intervals["average"][1]

    assert alpha == {
        "name": "alpha-1", "page": "alpha-1", "provider": "OpenAI", "url": "https://example.com/alpha-1", "releaseDate": "2025-08-07",
        "size": None, "sizeLabel": "—",
        "freeform": 0.7, "multipleChoice": 0.85,
        "leetcode": 0.5833, "leetcodeEasy": 1.0, "leetcodeMedium": 0.5, "leetcodeHard": 0.25,
        "average": 0.7111,  # (0.7 + 0.85 + 0.5833) / 3
        # tokens in 10*1000 + 20*400 + 12*800 = 27_600 at $2, out 10*500 + 20*100 + 12*1500 = 25_000
        # at $8 per million (judge tokens not counted): (55_200 + 200_000) / 1e6
        "cost": 0.2552, "costBasis": "tokens", "price": {"input": 2.0, "output": 8.0},
    }
    assert (beta["freeform"], beta["multipleChoice"], beta["leetcode"], beta["average"]) == (0.9, 0.9, 0.75, 0.85)
    assert (beta["leetcodeEasy"], beta["leetcodeMedium"], beta["leetcodeHard"]) == (1.0, 0.75, 0.5)
    assert beta["cost"] == 0.5784  # in 32_800 * 3 + out 32_000 * 15 = 578_400 per million

    # electricity: (0.8 + 0.5 + 0.2 + 0.3 + 0.45) kWh * $0.15, whatever the token counts
    assert (qwen["cost"], qwen["costBasis"]) == (0.3375, "electricity")
    assert (qwen["size"], qwen["sizeLabel"]) == (70_600_000_000, "70.6 GB")
    assert (qwen["freeform"], qwen["multipleChoice"], qwen["leetcode"], qwen["average"]) == (0.5, 0.6, 0.3333, 0.4778)


def test_electricity_priced_model_without_all_five_kwh_figures_has_no_cost(registry):
    models, results, _ = registry
    entries = json.loads(models.read_text())
    del entries[2]["kilowattHour"]["hard"]
    models.write_text(json.dumps(entries, indent=2) + "\n")
    qwen = next(r for r in site.site_data(load_models(models, results=results), results_dir=results)["models"] if r["name"] == "qwen-local-70b")
    assert (qwen["cost"], qwen["costBasis"]) == (None, "electricity")


def test_human_sizes():
    assert [site.human_size(s) for s in (None, 512, 1_500, 8_030_000_000, 70_600_000_000, 999_960_000_000, 1_200_000_000_000)] == [
        "—", "512 B", "1.5 KB", "8.0 GB", "70.6 GB", "1.0 TB", "1.2 TB"]


def result_of(models: Path, results: Path, name: str, key: str) -> dict:
    entry = next(e for e in json.loads(models.read_text()) if e["name"] == name)
    return json.loads((results / site.RESULT_KEYS[key] / entry["resultFiles"][key]).read_text())


def comparison(data: dict, key: str, first: str, second: str) -> dict | None:
    """data.js's comparison of two models on a score, by name, as stored (first before second on the board)."""
    index = {m["name"]: i for i, m in enumerate(data["models"])}
    rows = [r for r in data["comparisons"][key] if r[:2] == [index[first], index[second]]]
    assert len(rows) <= 1
    return dict(zip(data["comparisonFields"], rows[0])) if rows else None


def test_comparisons_are_the_paired_test_over_per_question_scores(registry):
    models, results, _ = registry
    # one of alpha-1's hard problems broke in the dataset: that question is left out of its comparisons
    rewrite_result(models, results, "alpha-1", "leetcode", lambda r: (
        r["results"][-1].update(status="datasetError", correct=False), r.update(summary=summarize(TASKS["leetcode"], r["results"]))))
    data = site.site_data(load_models(models, results=results), results_dir=results)
    assert [m["name"] for m in data["models"]] == ["beta-2", "alpha-1", "qwen-local-70b"]

    def scores(name: str, key: str, band: str | None = None) -> dict[str, list[bool]]:  # one row per question: right or wrong
        rows = result_of(models, results, name, key)["results"]
        return {r["id"]: [r["correct"]] for r in rows if r["status"] != "datasetError" and band in (None, r.get("difficulty"))}

    beta_alpha = comparison(data, "freeform", "beta-2", "alpha-1")
    paired = stats.paired(scores("beta-2", "freeform"), scores("alpha-1", "freeform"))
    assert beta_alpha == {"a": 0, "b": 1, "difference": paired["difference"], "low": paired["ci95"][0], "high": paired["ci95"][1],
                          "distinguishable": paired["distinguishable"], "shared": 10, "onlyA": 2, "onlyB": 0, "mcnemarP": paired["mcnemarP"]}
    assert (beta_alpha["difference"], beta_alpha["distinguishable"], beta_alpha["mcnemarP"]) == (20.0, False, 0.5)

    for key, (result_key, band) in site.SCORES.items():
        for first, second in (("beta-2", "alpha-1"), ("beta-2", "qwen-local-70b"), ("alpha-1", "qwen-local-70b")):
            paired = stats.paired(scores(first, result_key, band), scores(second, result_key, band))
            got = comparison(data, key, first, second)
            assert [got[f] for f in ("difference", "low", "high", "shared", "mcnemarP")] == [
                paired["difference"], *paired["ci95"], paired["shared"], paired["mcnemarP"]], (key, first, second)
    assert comparison(data, "leetcode", "alpha-1", "qwen-local-70b")["shared"] == 11  # the broken problem left out
    assert comparison(data, "leetcodeHard", "beta-2", "alpha-1")["shared"] == 3
    mc = comparison(data, "multipleChoice", "beta-2", "qwen-local-70b")  # 18 of 20 against 12 of 20
    assert (mc["difference"], mc["distinguishable"], mc["onlyA"], mc["onlyB"]) == (30.0, True, 6, 0)


def test_runs_of_different_datasets_are_not_compared(registry):
    models, results, _ = registry
    rewrite_result(models, results, "qwen-local-70b", "multipleChoice", lambda r: r["config"]["dataset"].update(sha256="1" * 64))
    data = site.site_data(load_models(models, results=results), results_dir=results)
    assert comparison(data, "multipleChoice", "beta-2", "qwen-local-70b") is None
    assert comparison(data, "multipleChoice", "alpha-1", "qwen-local-70b") is None
    assert comparison(data, "multipleChoice", "beta-2", "alpha-1") is not None
    assert comparison(data, "freeform", "alpha-1", "qwen-local-70b") is not None  # its other evals used the same data
    assert len(data["comparisons"]["multipleChoice"]) == 1 and len(data["comparisons"]["leetcodeHard"]) == 3


# ---- the CLI: --write, --check, bad data ------------------------------------------------------

def test_write_is_deterministic_and_rebuild_is_byte_identical(registry, capsys):
    models, results, site_dir = registry
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert capsys.readouterr().out.startswith("wrote ")
    first = (site_dir / "data.js").read_bytes()
    mtime = (site_dir / "data.js").stat().st_mtime_ns

    text = first.decode()
    assert text.endswith("};\n") and "\r" not in text and "\n\n" not in text
    assert text.count("window.LEADERBOARD = ") == 1
    assert [m["name"] for m in read_data_js(site_dir)["models"]] == ["beta-2", "alpha-1", "qwen-local-70b"]
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
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True) is True
    assert (site_dir / "data.js").read_bytes() == first
    assert {path.name: path.read_bytes() for path in (site_dir / "models").iterdir()} == pages
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=False) is False


def test_check_catches_stale_data_js(registry, capsys):
    models, results, site_dir = registry
    assert site.main(cli(models, results, site_dir, "--check")) == 1  # never built
    assert capsys.readouterr().err.strip().endswith("and 4 more are stale: run `uv run build --write`")  # 2 model pages, 2 schemas

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
    assert err == f"{site_dir / 'data.js'} and {site_dir / 'models' / 'alpha-1.js'} are stale: run `uv run build --write`\n"
    assert (site_dir / "data.js").read_bytes() == built  # --check writes nothing

    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert site.main(cli(models, results, site_dir, "--check")) == 0


def test_the_json_schemas_are_written_and_checked_like_data_js(registry, capsys):
    """site/schema/: the models' JSON Schemas, as `evals/schema.py` declares them; a schema
    file that is not what the models say is stale."""
    models, results, site_dir = registry
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    written = {path.name: path.read_text() for path in (site_dir / "schema").iterdir()}
    assert written == {name: schema.schema_text(name) for name in ("models.schema.json", "result.schema.json")}
    models_schema, result_schema = (json.loads(written[name]) for name in ("models.schema.json", "result.schema.json"))
    assert models_schema["type"] == "array" and models_schema["items"] == {"$ref": "#/$defs/Entry"}
    entry = models_schema["$defs"]["Entry"]
    assert list(entry["properties"]) == list(ENTRY_ORDER) and entry["required"] == ["name", "provider", "url", "releaseDate", "price"]
    assert entry["properties"]["size"]["anyOf"][0]["exclusiveMaximum"] == 2**53
    assert [ref["$ref"] for ref in result_schema["anyOf"]] == ["#/$defs/Result", "#/$defs/BandedResult"]
    assert result_schema["$defs"]["Summary"]["properties"]["ci95"]["description"] == "a [low, high] pair of fractions, low <= high"
    capsys.readouterr()

    (site_dir / "schema" / "result.schema.json").write_text("{}\n")
    assert site.main(cli(models, results, site_dir, "--check")) == 1
    assert capsys.readouterr().err == f"{site_dir / 'schema' / 'result.schema.json'} is stale: run `uv run build --write`\n"
    assert site.main(cli(models, results, site_dir, "--write")) == 0
    assert (site_dir / "schema" / "result.schema.json").read_text() == written["result.schema.json"]


RESULT_DAMAGE = {
    # damage -> the end of the line that names it ("" where only the file is named)
    "missing": "resultFiles.leetcode: names ",  # the file, found missing by models.json's check
    "truncated": "",
    "binary": "",
    "not an object": "must be a result file: a JSON object with config, summary and results (got 42)",
    "no summary": "summary.hard: missing (must be a summary: an object with n, correct, accuracy, ci95, apiErrors and tokens, and the other counts when there)",
    "wrong eval": "it is a freeform result, not leetcode",
    "huge token count": "summary.overall.tokens.input: must be a count from 0 to 2**53 - 1 (got 100000000000000000000000000000000000000000000000000000000...)",
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
    "two errors": 'config.provider: must be a string (got null), and 1 more',
}


@pytest.mark.parametrize("damage", list(RESULT_DAMAGE))
def test_bad_result_file_is_one_line_naming_it(registry, damage, capsys):
    """Missing, corrupt, or a field the site or the publish rules read of the wrong shape:
    one line naming the file, the field and what it must be, and how to fix it."""
    models, results, site_dir = registry
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
            summary["overall"]["ci95"] = {"ci95 not a pair": [0.3], "ci95 reversed": [0.8, 0.3], "ci95 over 1": [0.3, 1.5]}[damage]
        elif damage == "row without id":
            del row["id"]
        elif damage == "bad epoch":
            row["epoch"] = 0
        elif damage == "bad difficulty":
            row["difficulty"] = "Easy"
        elif damage == "bad passAt":
            summary["easy"]["passAt"] = {"1": "all"}
        elif damage == "bad batch":
            summary["overall"]["batch"] = {"calls": 1, "tokens": {"input": 1, "output": 1}, "priceFactor": 2}
        elif damage == "unknown eval":
            result["config"]["eval"] = "luau"
        else:
            result["config"]["provider"] = None
            result["config"]["model"] = 5
        path.write_text(json.dumps(result))
    else:
        shutil.copy(results / "freeform" / alpha["resultFiles"]["freeform"], path)
    assert site.main(cli(models, results, site_dir, "--write")) == 2  # an exception would fail the test
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"build: {models if damage == 'missing' else path}: "), err
    assert RESULT_DAMAGE[damage] in err and path.name in err, err
    if damage not in ("missing", "wrong eval"):
        assert err.endswith("; rerun its eval to write it again\n"), err
    assert not (site_dir / "data.js").exists()


# ---- what cannot be on the board: bad metadata, result files the publish rules refuse -------


def rewrite_result(models: Path, results: Path, name: str, key: str, edit) -> Path:
    """Edit one of `name`'s result files (config or summary, leaving its stored `publishable`
    as it was) and file it under its run's name, as if its run had produced it."""
    entries = json.loads(models.read_text())
    entry = next(e for e in entries if e["name"] == name)
    old = results / site.RESULT_KEYS[key] / entry["resultFiles"][key]
    result = json.loads(old.read_text())
    edit(result)
    old.unlink()
    new = old.with_name(run_name(result["config"]) + ".json")
    new.write_text(json.dumps(result, indent=2) + "\n")
    entry["resultFiles"][key] = new.name
    models.write_text(json.dumps(entries, indent=2) + "\n")
    return new


# ---- build --write and publishing share the models.json lock --------------------------------


# ---- the page in headless Chromium ----------------------------------------------------------

class Page:
    """One headless Chromium for the module, started on first use: when it is not installed,
    each browser test fails (not skips) with the install line; it skips with that line where
    SITE_TESTS_SKIP_WITHOUT_CHROMIUM=1 (CI's Windows and macOS runners)."""

    def __init__(self):
        self._browser: WebDriver | None = None
        self._error: str | None = None
        self._skip = False
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-profile-", ignore_cleanup_errors=True)

    def browser(self) -> WebDriver:
        if self._browser is None:
            if not self._error:
                try:
                    self._browser = start_chromium(Path(self._profile.name))
                except BrowserUnavailable as error:
                    self._error = f"the site tests need headless Chromium: {error}"
                    self._skip = skipped_without_chromium(error)
            if self._error:
                if self._skip:
                    pytest.skip(f"{self._error} ({SKIP_WITHOUT_CHROMIUM}=1)")
                pytest.fail(self._error, pytrace=False)
            self._browser.set_window_size(1400, 1000)  # the whole table in view: no sideways scrolling
        return self._browser

    def open(self, url: str) -> WebDriver:
        """The page at `url`, once its script has drawn it (or said why not)."""
        browser = self.browser()
        browser.get_log("browser")  # drop what earlier pages logged
        browser.get(url)
        wait_ready(browser)
        return browser

    def close(self) -> None:
        try:
            if self._browser is not None:
                self._browser.quit()
        finally:
            self._profile.cleanup()


@pytest.fixture(scope="module")
def page():
    holder = Page()
    yield holder
    holder.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[str, Path]:
    """Two built sites, `board/` (the registry above) and `empty/` (nothing published),
    served over http on 127.0.0.1."""
    root = tmp_path_factory.mktemp("site")
    models, results = make_registry(root / "data")
    empty_models = root / "data" / "empty.json"
    entries = json.loads(models.read_text())
    empty_models.write_text(json.dumps([entries[3]], indent=2) + "\n")
    for name, models_path in (("board", models), ("empty", empty_models)):
        (root / name).mkdir()
        for file in STATIC:
            shutil.copy(ROOT / "site" / file, root / name / file)
        assert site.build(models_path=models_path, results_dir=results, site_dir=root / name, write=True)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def names(browser: WebDriver) -> list[str]:
    return [link.text for link in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody th[data-key=name] a.model-link")]


def wait_ready(browser: WebDriver, timeout: float = 10.0) -> None:
    """Until the page has drawn its data, or said why not (then the test reads what it said)."""
    deadline = time.monotonic() + timeout
    while not browser.execute_script("return document.body.dataset.ready || ''"):
        assert time.monotonic() < deadline, "the page never got ready"
        time.sleep(0.05)


def search(browser: WebDriver, text: str) -> None:
    box = browser.find_element(By.CSS_SELECTOR, "#filter-search")
    browser.execute_script("arguments[0].value = ''", box)
    box.send_keys(text)


# ---- the board's evals are the registry's ---------------------------------------------------

class Spelling(Task):
    """A fourth eval, registered by a test: two bands, and two board columns (its overall score,
    averaged, and its long words' alone)."""

    name = "spelling"
    tag = "sp"
    key = "spelling"
    title = "Spelling bee"
    description = "Spelling bee words"
    position = 40
    prompt_version = "sp-v1"
    bands = ("short", "long")
    board = (Column("spelling", "Spelling bee"), Column("spellingLong", "Long", "long", averaged=False))

    def band(self, row):
        return row["length"]

    def load(self, source, split):
        raise NotImplementedError

    def prompt(self, sample):
        return f"Spell {sample.word}."

    def score(self, sample, completion, scoring):
        return {"status": "correct", "correct": True}


class Echo(Spelling):
    """An eval off the board: it runs and writes result files, but no page shows it."""

    name = "echo"
    tag = "ec"
    key = "echo"
    title = "Echo words"
    description = "Echoing a word"
    position = 5  # before every built-in: where it would show first
    on_board = False
    board = ()


@pytest.fixture
def registered(monkeypatch):
    """Registers an eval (a Task subclass) for this test only: the registry is put back after."""
    extensions.load()
    monkeypatch.setattr(extensions, "_tasks", dict(extensions.tasks()))

    def register(cls: type[Task]) -> Task:
        extensions.register_task(cls)
        return extensions.tasks()[cls.name]

    return register


def spelling_rows(short: int, long: int) -> list[dict]:
    """4 short and 4 long words, `short` and `long` of them spelt right: 100 input, 10 output tokens each."""
    rows = []
    for band, correct in (("short", short), ("long", long)):
        for i in range(4):
            ok = i < correct
            rows.append({"id": f"sp-{len(rows):04d}", "status": "correct" if ok else "wrong", "correct": ok, "length": band,
                         "usage": {"input": 100, "output": 10, "reasoning": 0, "cached": 0}, "latency": 0.5})
    return rows


def test_an_eval_off_the_board_never_appears(registered, registry, tmp_path):
    """Registered, with a result file in the results folder: the site is byte for byte the one
    built without it."""
    models, results, site_dir = registry
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True)
    built = {path.relative_to(site_dir): path.read_bytes() for path in site_dir.rglob("*") if path.is_file()}

    task = registered(Echo)
    assert "echo" in TASKS and task.on_board is False
    _write_run(results, "echo", "alpha-1", "openai", spelling_rows(4, 4), runs=results.parent / "runs")
    assert "echo" not in site.RESULT_KEYS.values() and not any(result_key == "echo" for result_key, _ in site.SCORES.values())
    assert not site.build(models_path=models, results_dir=results, site_dir=site_dir, write=False)  # nothing stale
    shutil.rmtree(site_dir)
    assert site.build(models_path=models, results_dir=results, site_dir=site_dir, write=True)
    assert {path.relative_to(site_dir): path.read_bytes() for path in site_dir.rglob("*") if path.is_file()} == built
    assert not any(word in text for text in built.values() for word in (b"echo", b"Echo"))


@pytest.mark.parametrize("column, why", [
    (Column("leetcodeEasy", "Easy"), "'clash': its board column 'leetcodeEasy' is 'leetcode''s already"),
    (Column("average", "Average"), "'clash': its board column 'average' is a field of every board row"),
    (Column("clashMedium", "Medium", "medium"), "'clash': its board column 'clashMedium' reads band 'medium', not one of its bands"),
], ids=["another eval's", "a row field", "not its band"])
def test_an_eval_whose_column_cannot_be_on_the_board_is_one_line(registered, registry, column, why, capsys):
    registered(type("Clash", (Spelling,), {"__module__": __name__, "name": "clash", "tag": "cl", "key": "clash", "board": (column,)}))
    line = f"eval {why.replace(':', f' ({__name__}):', 1)}; give it another key or band"
    with pytest.raises(RegistryError) as refused:
        dict(site.SCORES)
    assert str(refused.value) == line

    models, results, site_dir = registry  # what `build` says, before it reads a result file
    assert site.main(cli(models, results, site_dir, "--check")) == 2
    assert capsys.readouterr().err == f"build: {line}\n"


# ---- a crowded board, a waived gate, one precision for costs, a phone's width ------------------

CLOSE = [f"close-{i}" for i in range(10)]
WAIVED = "delta-waived"


def _waived_freeform(results: Path, model: str) -> str:
    """A freeform run whose one judge wrote no readable verdict on any of its 10 answers: 0%,
    over the error gate, so on the board only with --allow-errors."""
    task = TASKS["freeform"]
    rows = [{"id": f"fr-{i:04d}", "status": "wrong", "correct": False, "usage": {"input": 1000, "output": 500, "reasoning": 0, "cached": 0},
             "verdicts": [{"judge": "openai:judge-a", "verdict": None}], "agreed": False, "latency": 1.0} for i in range(10)]
    config = {"eval": "freeform", "provider": "openai", "model": model, "split": "test", "dataset": {"source": "bundled", "sha256": "0" * 64},
              "promptVersion": task.prompt_version, "harnessVersion": 1, "judges": [{"provider": "openai", "model": "judge-a"}]}
    summary = summarize(task, rows)
    result = {"config": config, "summary": summary, "publishable": False, "notPublishable": ["over the gate"], "timing": {}, "results": rows}
    name = run_name(config) + ".json"
    (results / "freeform" / name).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return name


def make_crowded_registry(root: Path) -> tuple[Path, Path]:
    """Ten models of nearly the same score and cost (the labels' worst case), and one published
    with --allow-errors whose freeform verdicts were all unparseable."""
    results = root / "results"
    models = []
    for i, name in enumerate(CLOSE):
        files = _publish(results, name, "openai", ff=(10, 7 + i % 2), mc=(20, 16 + i % 3), lc={"easy": 4, "medium": 2, "hard": 1},
                         usage={"freeform": (1000 + 10 * i, 500), "multiple_choice": (400, 100), "leetcode": (800, 1500)})
        models.append({"name": name, "provider": "OpenAI", "url": f"https://example.com/{name}", "releaseDate": "2025-08-07",
                       "size": None, "price": {"input": 2.0, "output": 8.0}, "resultFiles": files})
    files = _publish(results, WAIVED, "openai", ff=(10, 0), mc=(20, 15), lc={"easy": 3, "medium": 1, "hard": 0},
                     usage={"freeform": (1000, 500), "multiple_choice": (10, 10), "leetcode": (10, 10)})
    files["freeform"] = _waived_freeform(results, WAIVED)
    models.append({"name": WAIVED, "provider": "Delta", "url": "https://example.com/delta", "releaseDate": "2025-10-01", "size": None,
                   "price": {"input": 0.1, "output": 0.4}, "allowErrors": True, "resultFiles": files})
    path = root / "models.json"
    path.write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    return path, results


@pytest.fixture(scope="module")
def crowded(tmp_path_factory) -> Path:
    """The crowded board, built: its folder (opened from file://)."""
    root = tmp_path_factory.mktemp("crowded")
    models, results = make_crowded_registry(root / "data")
    for file in STATIC:
        shutil.copy(ROOT / "site" / file, root / file)
    assert site.build(models_path=models, results_dir=results, site_dir=root, write=True)
    return root


@contextlib.contextmanager
def window(browser: WebDriver, size: tuple[int, int]):
    browser.set_window_size(*size)
    try:
        yield browser
    finally:
        browser.set_window_size(1400, 1000)


