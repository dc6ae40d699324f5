"""The leaderboard site: data/models.json, the result files it names and their run folders ->
site/data.js and a page of data per model (site/models/<file name>.js); and the JSON Schemas
of models.json and of a result file (site/schema/, from evals/schema.py), kept as true as the
data by `--check`.

The generated files are committed; `site/index.html` + `app.js` read data.js as
`window.LEADERBOARD`, `site/model.html?model=<file name>` + `model.js` read data.js and the
model's `window.MODEL` (plain scripts, so the pages work from file:// as well as over http).

The board's evals and their columns are the registry's (`evals.tasks.on_board()`: each
eval's `columns()`, `bands` and `kilowatt_hour_keys()`): nothing here or in the pages' scripts
names an eval. data.js says which they are, `evals` (each eval's resultFiles key, name,
title, description, bands, kilowattHour keys, whether it is judged) and `scores` (each column:
its key, eval, label, band, whether it is averaged), and the pages build their headings,
filters and texts from them.

data.js: one row per published model (scores, each with its 95% interval under `ci95`, the
average and its interval, suite cost, the file name of its page) and `comparisons`: for every
pair of models and each score whose result files used the same dataset, `stats.paired` over
per-question scores, one compact row `[a, b, difference, low, high, distinguishable, shared,
onlyA, onlyB, mcnemarP]` (a and b index `models`, a < b; points; the last three null for
scores that are not plain right/wrong, as with several epochs), named by `comparisonFields`.

A model's page: its entry, each result file's config and summary with the cost of that eval,
and every row as an item with the question (the prompt of the candidate's cache record in the
run folder, data/runs/<eval>/<result file's stem>/) and the reply when that folder is there.

The output is deterministic (sorted rows and keys, rounded floats, no timestamps): building
twice from the same data gives the same bytes, so `--check` can tell a stale file in CI; a
model page no published model has is stale too (`--write` removes it). Text is JSON with `<`,
`>`, `&` and U+2028/9 escaped, so no reply can end a script.

    uv run build --write    # rewrite what changed under site/
    uv run build --check    # exit 1 if anything under site/ is stale

`--write` holds the models.json lock that publishing takes, so a build racing a publish never
leaves a stale site; publishing renders the site itself (`site_changes`) from the models list
it is about to write.

Bad data is one line naming the file, exit 2: models.json invalid (see models_file.check_entry), a
result file missing, truncated or of the wrong shape (see results.read_result: the line names
the field), or one that cannot be on the board by the publish rules (not publishable by its own
config and summary, with the entry's allowErrors; another eval's result; renamed or edited so
its name is not its run's; the entry's files from different runs).

The package: `board` (the board's model: the published entries read and checked, their
order, scores, comparisons and costs, each model page's content), `rendering` (the files
under site/ made of it, which of them are stale, writing them), `view` (`build --view PATH`:
a self-contained local page of any one run, a result file or a run folder, published or not)
and `cli` (the `build` command, `main`). Every name is importable from `evals.site` as before the split."""

from __future__ import annotations

from evals.site.board import (
    COMPARISON_FIELDS,
    COST_DIGITS,
    ITEM_FIELDS,
    RESULT_KEYS,
    ROW_FIELDS,
    SCORE_DIGITS,
    SCORES,
    Published,
    average,
    human_size,
    model_page,
    question_answers,
    ranked,
    site_data,
)
from evals.site.cli import main
from evals.site.rendering import (
    DATA_JS,
    HEADER,
    JS_ESCAPES,
    MODEL_HEADER,
    MODEL_PAGES,
    ROOT,
    SCHEMA_DIR,
    SITE,
    board_changes,
    build,
    rebuild_site,
    render,
    render_model,
    site_changes,
    to_js,
    write_changes,
)

__all__ = [
    "COMPARISON_FIELDS",
    "COST_DIGITS",
    "DATA_JS",
    "HEADER",
    "ITEM_FIELDS",
    "JS_ESCAPES",
    "MODEL_HEADER",
    "MODEL_PAGES",
    "RESULT_KEYS",
    "ROOT",
    "ROW_FIELDS",
    "SCHEMA_DIR",
    "SCORES",
    "SCORE_DIGITS",
    "SITE",
    "Published",
    "average",
    "board_changes",
    "build",
    "human_size",
    "main",
    "model_page",
    "question_answers",
    "ranked",
    "rebuild_site",
    "render",
    "render_model",
    "site_changes",
    "site_data",
    "to_js",
    "write_changes",
]
