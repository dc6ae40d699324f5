"""Published boards for the site's tests: registries of models and their result files and run
folders, a crowded board, the site built and served, and a browser page on it."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from evals import entry_points, site
from evals.cache import RunCache
from evals.config import run_name
from evals.errors import ProviderError
from evals.names import attempt_key
from evals.providers import Completion, Usage
from evals.results import summarize
from evals.tasks import TASKS, Column, Task
from evals.tasks import _registry as task_registry
from tests.support import ROOT
from tests.support.browser import (
    SKIP_WITHOUT_CHROMIUM,
    BrowserUnavailable,
    skipped_without_chromium,
    start_chromium,
)

STATIC = ("index.html", "model.html", "common.js", "app.js", "model.js", "style.css")


def _rows(
    eval_name: str,
    *,
    n: int,
    correct: int,
    usage: tuple[int, int],
    difficulty: str | None = None,
    offset: int = 0,
) -> list[dict]:
    rows = []
    for i in range(n):
        ok = i < correct
        row = {
            "id": f"{eval_name[:2]}-{offset + i:04d}",
            "status": "correct" if ok else "wrong",
            "correct": ok,
            "usage": {
                "input": usage[0],
                "output": usage[1],
                "reasoning": usage[1] // 2,
                "cached": 0,
            },
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
            row |= {
                "difficulty": difficulty,
                "tests": "5/5" if ok else "3/5",
                "note": None if ok else "2 tests failed",
                "work": 1200,
                "workBudget": 50_000,
            }
        rows.append(row)
    return rows


def _write_run(
    results: Path,
    eval_name: str,
    model: str,
    provider: str,
    rows: list[dict],
    *,
    runs: Path | None = None,
    replies: dict[str, str] | None = None,
    dataset: str = "0" * 64,
) -> str:
    """The result file of `rows`, and with `runs` its run folder: a candidate cache record per
    row (under the row's attempt key), the reply `replies[id]` or a plain one, an API error's
    record for an apiError row."""
    task = TASKS[eval_name]
    config = {
        "eval": eval_name,
        "provider": provider,
        "model": model,
        "split": "test",
        "dataset": {"source": "bundled", "sha256": dataset},
        "promptVersion": task.prompt_version,
        "harnessVersion": 1,
    }
    # the summary as the harness computes it; the rest of the file written here, as it is laid out
    result = {
        "config": config,
        "summary": summarize(task, rows),
        "publishable": True,
        "notPublishable": [],
        "timing": {"wall": 12.5},
        "results": sorted(rows, key=lambda r: r["id"]),
    }
    name = run_name(config) + ".json"
    (results / eval_name).mkdir(parents=True, exist_ok=True)
    (results / eval_name / name).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if runs is not None:
        cache = RunCache(runs / eval_name / run_name(config), session="s")
        for row in rows:
            request = {
                "provider": {"provider": provider, "model": model},
                "prompt": question_of(row["id"]),
                "system": "You are a Roblox expert.",
            }
            if row["status"] == "apiError":
                outcome = ProviderError("rate limited for good", kind="rate_limit", status=429)
            else:
                text = (replies or {}).get(
                    row["id"], f"My answer to {row['id']}, epoch {row.get('epoch', 1)}."
                )
                outcome = Completion(
                    text=text, reasoning=f"Thinking about {row['id']}.", usage=Usage(10, 20)
                )
            cache.store(attempt_key(row["id"], row.get("epoch")), "candidate", request, outcome)
    return name


def question_of(item_id: str) -> str:
    return f"Question {item_id}: how does a RemoteEvent reach the server?"


HOSTILE = (
    '</script><script>alert(1)</script><img src=x onerror="window.__pwned '
    '= 1"> & \u2028 done \x1b]0;title\x07 \u202edesrever\nnext line'
)


def _publish(
    results: Path,
    model: str,
    provider: str,
    *,
    ff: tuple[int, int],
    mc: tuple[int, int],
    lc: dict[str, int],
    usage: dict[str, tuple[int, int]],
    runs: Path | None = None,
    replies: dict[str, str] | None = None,
) -> dict[str, str]:
    """Writes the three result files (and with `runs` their run folders): ff/mc = (n, correct),
    lc = correct of 4 per difficulty, usage = per-row (input, output) tokens per eval."""
    leetcode = []
    for band, correct in lc.items():
        leetcode += _rows(
            "leetcode",
            n=4,
            correct=correct,
            usage=usage["leetcode"],
            difficulty=band,
            offset=len(leetcode),
        )
    more = {"runs": runs, "replies": replies}
    return {
        "freeform": _write_run(
            results,
            "freeform",
            model,
            provider,
            _rows("freeform", n=ff[0], correct=ff[1], usage=usage["freeform"]),
            **more,
        ),
        "multipleChoice": _write_run(
            results,
            "multiple_choice",
            model,
            provider,
            _rows("multiple_choice", n=mc[0], correct=mc[1], usage=usage["multiple_choice"]),
            **more,
        ),
        "leetcode": _write_run(results, "leetcode", model, provider, leetcode, **more),
    }


def make_board_data(root: Path) -> tuple[Path, Path]:
    """models.json + data/results under `root`: two token-priced models, one priced by
    electricity, and one entry without results (not published). The first two have their run
    folders under root/runs (alpha-1's last freeform reply (fr-0009) is hostile HTML); qwen-local-70b's
    are not in this checkout."""
    results, runs = root / "results", root / "runs"
    models = [
        {
            "name": "alpha-1",
            "provider": "OpenAI",
            "url": "https://example.com/alpha-1",
            "releaseDate": "2025-08-07",
            "size": None,
            "price": {"input": 2.0, "output": 8.0},
            "resultFiles": _publish(
                results,
                "alpha-1",
                "openai",
                ff=(10, 7),
                mc=(20, 17),
                lc={"easy": 4, "medium": 2, "hard": 1},
                usage={
                    "freeform": (1000, 500),
                    "multiple_choice": (400, 100),
                    "leetcode": (800, 1500),
                },
                runs=runs,
                replies={"fr-0009": HOSTILE},
            ),
        },
        {
            "name": "beta-2",
            "provider": "Anthropic",
            "url": "https://example.com/beta-2",
            "releaseDate": "2025-09-29",
            "size": None,
            "price": {"input": 3, "output": 15},
            "resultFiles": _publish(
                results,
                "beta-2",
                "anthropic",
                ff=(10, 9),
                mc=(20, 18),
                lc={"easy": 4, "medium": 3, "hard": 2},
                usage={
                    "freeform": (1200, 700),
                    "multiple_choice": (500, 50),
                    "leetcode": (900, 2000),
                },
                runs=runs,
            ),
        },
        {
            "name": "qwen-local-70b",
            "provider": "Qwen",
            "url": "https://example.com/qwen-local-70b",
            "releaseDate": "2025-04-29",
            "size": 70_600_000_000,
            "price": {"electricity": 0.15},
            "kilowattHour": {
                "freeform": 0.8,
                "multipleChoice": 0.5,
                "easy": 0.2,
                "medium": 0.3,
                "hard": 0.45,
            },
            "resultFiles": _publish(
                results,
                "qwen-local-70b",
                "live",
                ff=(10, 5),
                mc=(20, 12),
                lc={"easy": 3, "medium": 1, "hard": 0},
                usage={
                    "freeform": (1000, 900),
                    "multiple_choice": (400, 300),
                    "leetcode": (800, 2500),
                },
            ),
        },
        {
            "name": "gamma-preview",
            "provider": "Gamma",
            "url": "https://example.com/gamma",
            "releaseDate": "2025-10-01",
            "size": 8_000_000_000,
            "price": {"input": 0.5, "output": 1.5},
        },
    ]
    path = root / "models.json"
    path.write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    return path, results


@pytest.fixture
def board_data(tmp_path: Path) -> tuple[Path, Path, Path]:
    models, results = make_board_data(tmp_path)
    return models, results, tmp_path / "site"


def cli(models: Path, results: Path, site_dir: Path, *flags: str) -> list[str]:
    return [*flags, f"--models={models}", f"--results={results}", f"--site={site_dir}"]


def read_data_js(site_dir: Path) -> dict:
    text = (site_dir / "data.js").read_text(encoding="utf-8")
    body = text[text.index("window.LEADERBOARD = ") + len("window.LEADERBOARD = ") :]
    assert body.endswith("};\n")
    return json.loads(body[:-2])


def result_of(models: Path, results: Path, name: str, key: str) -> dict:
    entry = next(e for e in json.loads(models.read_text()) if e["name"] == name)
    return json.loads((results / site.RESULT_KEYS[key] / entry["resultFiles"][key]).read_text())


def comparison(data: dict, key: str, first: str, second: str) -> dict | None:
    """data.js's comparison of two models on a score, by name, as stored (first before second on the board)."""
    index = {m["name"]: i for i, m in enumerate(data["models"])}
    rows = [r for r in data["comparisons"][key] if r[:2] == [index[first], index[second]]]
    assert len(rows) <= 1
    return dict(zip(data["comparisonFields"], rows[0])) if rows else None


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


class Page:
    """One headless Chromium for the module, started on first use: when it is not installed,
    each browser test fails (not skips) with the install line; it skips with that line where
    SITE_TESTS_SKIP_WITHOUT_CHROMIUM=1 (CI's Windows and macOS runners)."""

    def __init__(self):
        self._browser: WebDriver | None = None
        self._error: str | None = None
        self._skip = False
        self._profile = tempfile.TemporaryDirectory(
            prefix="chromium-profile-", ignore_cleanup_errors=True
        )

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
            self._browser.set_window_size(
                1400, 1000
            )  # the whole table in view: no sideways scrolling
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


def wait_ready(browser: WebDriver, timeout: float = 10.0) -> None:
    """Until the page has drawn its data, or said why not (then the test reads what it said)."""
    deadline = time.monotonic() + timeout
    while not browser.execute_script("return document.body.dataset.ready || ''"):
        assert time.monotonic() < deadline, "the page never got ready"
        time.sleep(0.05)


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
    board = (
        Column("spelling", "Spelling bee"),
        Column("spellingLong", "Long", "long", averaged=False),
    )

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
    entry_points.load()
    monkeypatch.setattr(task_registry, "_tasks", dict(task_registry.tasks()))

    def register(cls: type[Task]) -> Task:
        task_registry.register_task(cls)
        return task_registry.tasks()[cls.name]

    return register


def spelling_rows(short: int, long: int) -> list[dict]:
    """4 short and 4 long words, `short` and `long` of them spelt right: 100 input, 10 output tokens each."""
    rows = []
    for band, correct in (("short", short), ("long", long)):
        for i in range(4):
            ok = i < correct
            rows.append(
                {
                    "id": f"sp-{len(rows):04d}",
                    "status": "correct" if ok else "wrong",
                    "correct": ok,
                    "length": band,
                    "usage": {"input": 100, "output": 10, "reasoning": 0, "cached": 0},
                    "latency": 0.5,
                }
            )
    return rows


CLOSE = [f"close-{i}" for i in range(10)]


WAIVED = "delta-waived"


def _waived_freeform(results: Path, model: str) -> str:
    """A freeform run whose one judge wrote no readable verdict on any of its 10 answers: 0%,
    over the error gate, so on the board only with --allow-errors."""
    task = TASKS["freeform"]
    rows = [
        {
            "id": f"fr-{i:04d}",
            "status": "wrong",
            "correct": False,
            "usage": {"input": 1000, "output": 500, "reasoning": 0, "cached": 0},
            "verdicts": [{"judge": "openai:judge-a", "verdict": None}],
            "agreed": False,
            "latency": 1.0,
        }
        for i in range(10)
    ]
    config = {
        "eval": "freeform",
        "provider": "openai",
        "model": model,
        "split": "test",
        "dataset": {"source": "bundled", "sha256": "0" * 64},
        "promptVersion": task.prompt_version,
        "harnessVersion": 1,
        "judges": [{"provider": "openai", "model": "judge-a"}],
    }
    summary = summarize(task, rows)
    result = {
        "config": config,
        "summary": summary,
        "publishable": False,
        "notPublishable": ["over the gate"],
        "timing": {},
        "results": rows,
    }
    name = run_name(config) + ".json"
    (results / "freeform" / name).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return name


def make_crowded_registry(root: Path) -> tuple[Path, Path]:
    """Ten models of nearly the same score and cost (the labels' worst case), and one published
    with --allow-errors whose freeform verdicts were all unparseable."""
    results = root / "results"
    models = []
    for i, name in enumerate(CLOSE):
        files = _publish(
            results,
            name,
            "openai",
            ff=(10, 7 + i % 2),
            mc=(20, 16 + i % 3),
            lc={"easy": 4, "medium": 2, "hard": 1},
            usage={
                "freeform": (1000 + 10 * i, 500),
                "multiple_choice": (400, 100),
                "leetcode": (800, 1500),
            },
        )
        models.append(
            {
                "name": name,
                "provider": "OpenAI",
                "url": f"https://example.com/{name}",
                "releaseDate": "2025-08-07",
                "size": None,
                "price": {"input": 2.0, "output": 8.0},
                "resultFiles": files,
            }
        )
    files = _publish(
        results,
        WAIVED,
        "openai",
        ff=(10, 0),
        mc=(20, 15),
        lc={"easy": 3, "medium": 1, "hard": 0},
        usage={"freeform": (1000, 500), "multiple_choice": (10, 10), "leetcode": (10, 10)},
    )
    files["freeform"] = _waived_freeform(results, WAIVED)
    models.append(
        {
            "name": WAIVED,
            "provider": "Delta",
            "url": "https://example.com/delta",
            "releaseDate": "2025-10-01",
            "size": None,
            "price": {"input": 0.1, "output": 0.4},
            "allowErrors": True,
            "resultFiles": files,
        }
    )
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
