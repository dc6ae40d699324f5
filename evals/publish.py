"""Publishing finished runs into data/models.json, under its lock, with the site rebuilt.

A model's resultFiles are set only when every eval on the board (`models_file.RESULT_KEYS`) has a
result of one run identity; an electricity-priced model also needs every kilowattHour value
(`models_file.KWH_KEYS`). Runs over the error gate are not published without --allow-errors (the
entry then records allowErrors); smoke tests and the reference provider never are, nor a result
file that is not the run its name says (renamed, or its config edited). Until everything holds
models.json is left as it is, metadata included (`evaluate` keeps that in the plan until
something is published), so a refused attempt leaves no trace on the board. Each refusal is
one line. `build` applies the same rules (`board_refusals`, `identity_mismatch`) to
every published entry. While models.json names the result of an eval no installed package puts
on the board (`models_file.others`) nothing new is published (the same files again are, that
result kept): an entry without it would be invalid once the package is back."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals import bounded
from evals import models_file
from evals.config import run_name
from evals.datasets import find_kept, is_local_file, keep, kept_folder
from evals.errors import DataFileError, DatasetError
from evals.identity import model_keys
from evals.results import not_publishable_reasons, read_result
from evals.words import in_words


def publish(
    name: str,
    results: dict[str, Path],
    *,
    metadata: dict[str, Any] | None = None,
    kwh: dict[str, float] | None = None,
    allow_errors: bool = False,
    models_path: Path = models_file.MODELS,
    results_dir: Path = models_file.RESULTS,
    rebuild: models_file.Render | None = None,
    add_hint: str | None = None,
    datasets: Mapping[str, str] = {},
) -> list[str]:
    """Record `results` (resultFiles key -> result file) for the model `name`; the lines say
    what happened. `rebuild` (`site.rebuild_site`) renders the site from the new models list
    before anything is written. Raises DataFileError, and writes nothing, when the entry would
    be invalid (a new model's missing metadata, a bad date: naming the field) or the site
    cannot be rendered (naming the bad file). `add_hint` (`add_command`) is the command a
    model not yet in models.json is added with; without one the hint names the flags only.
    A run on a local dataset file has the file copied into the data folder (`keep_datasets`),
    from where its run's `datasets` source (resultFiles key -> --dataset source) names it."""
    loaded = {key: read_result(path) for key, path in results.items()}
    models = models_file.load_models(models_path, results=results_dir)
    current = models_file.find_entry(models, name)
    on_board = {
        key: file
        for key, file in ((current or {}).get("resultFiles") or {}).items()
        if key in models_file.RESULT_KEYS
    }
    republished = (
        current is not None
        and bool(on_board)
        and on_board == {key: path.name for key, path in results.items()}
    )
    others = {
        key: entry["name"] for entry in models for key in models_file.others(entry)
    }  # key -> a model that names it
    # The same files again keep the decision they were published with: --allow-errors is
    # taken once, when publishing, not on every rerun that reproduces them.
    allow_errors = allow_errors or (
        current is not None and republished and bool(current.get("allowErrors"))
    )
    refusals = _refusals(results, loaded, allow_errors)
    gate_waived = allow_errors and not refusals and bool(_refusals(results, loaded, False))
    lines: list[str] = []

    def mutate(entry: dict[str, Any] | None) -> dict[str, Any] | None:
        if entry is None and metadata is None:
            raise DataFileError(_not_in_models(name, models_path, add_hint))
        new = {**(entry or {"name": name, "size": None}), **(metadata or {})}
        if kwh:
            new["kilowattHour"] = {**(new.get("kilowattHour") or {}), **kwh}
        held = [f"not published: {reason}" for reason in refusals] or _not_yet(
            name, new, results, others, republished=republished
        )
        if held:
            lines.extend(held)
            return None
        kept, missing = keep_datasets(loaded, datasets, results_dir.parent)
        if missing:
            lines.extend(f"not published: {reason}" for reason in missing)
            return None
        new["resultFiles"] = {
            **(new.get("resultFiles") or {}),
            **{key: path.name for key, path in results.items()},
        }  # `others` kept
        if gate_waived:
            new["allowErrors"] = True  # build judges the error gate the way this publish did
        else:
            new.pop("allowErrors", None)
        verb = "still published" if republished else "published"
        lines.append(
            f"{verb} {name!r}: "
            + ", ".join(f"{key} {path.name}" for key, path in sorted(results.items()))
        )
        lines.extend(kept)
        return new

    if refusals and metadata is None:
        return [f"not published: {reason}" for reason in refusals]
    models_file.update_entry(name, mutate, models_path, results=results_dir, render=rebuild)
    return lines


def keep_datasets(
    loaded: dict[str, dict[str, Any]], sources: Mapping[str, str], data: Path
) -> tuple[list[str], list[str]]:
    """Copy each local dataset file the results were run on (`evals.datasets.keep`) into the
    data folder `data`, so that verify finds it there, in the repository, once the copy is
    committed with the result files. The lines: each file copied now (a copy already there is
    reused, unsaid), and why a result cannot be published (its file found nowhere)."""
    folder = kept_folder(data)
    copied, missing = [], []
    for key, result in sorted(loaded.items()):
        identity = result["config"].get("dataset") or {}  # a hand-made file may have none
        if not is_local_file(identity) or find_kept(identity, folder):
            continue
        source = sources.get(key)
        if source is None or not Path(source).is_file():
            missing.append(
                f"{key}: the run used the dataset file {identity['name']!r}, which cannot be "
                "found again; pass it with --dataset"
            )
            continue
        try:
            path = keep(identity, Path(source), folder)
        except DatasetError as error:  # the file was changed since its run
            missing.append(f"{key}: {error}")
            continue
        if path is not None:
            copied.append(
                f"dataset {identity['name']} kept as {path}: commit it with the result files"
            )
    return copied, missing


def _not_in_models(name: str, models_path: Path, add_hint: str | None) -> str:
    """The line for a model not yet in models.json published without metadata: the command that adds it."""
    hint = add_hint or shlex.join(
        ["uv", "run", "evaluate", name, "--model=MODEL", "--provider=PROVIDER", *METADATA_TO_FILL]
    )
    return (
        f"{name!r} is not in {models_path.name}: add it first with `{hint}` (the upper-case values "
        "are yours to fill in)"
    )


def _not_yet(
    name: str,
    new: dict[str, Any],
    results: dict[str, Path],
    others: dict[str, str],
    *,
    republished: bool,
) -> list[str]:
    """Why the entry `new` of the model `name` is not published with `results` although each can be on the board
    (one line; none when it is): an eval on the board without its result yet; models.json
    naming the result of an eval no installed package puts on the board (`others`: key -> a
    model that names it), unless these are the same files again and that result is kept; an
    electricity-priced model without every kilowattHour value."""
    missing = [key for key in models_file.RESULT_KEYS if key not in results]
    if missing:
        return [
            f"not published yet: {', '.join(missing)} not finished; resultFiles is set once all "
            f"{in_words(len(models_file.RESULT_KEYS))} exist"
        ]
    if others and not (republished and set(others) <= set(models_file.others(new))):
        named = ", ".join(f"resultFiles.{key} of {model!r}" for key, model in others.items())
        return [
            f"not published: models.json names results of an eval no installed package puts on the board ({named}), "
            f"and every entry needs every eval's; install the package that registers it and run it for {name!r} too"
        ]
    if "electricity" in (new.get("price") or {}) and not set(models_file.KWH_KEYS) <= set(
        new.get("kilowattHour") or {}
    ):
        return [
            "not published: an electricity-priced model needs all "
            f"{in_words(len(models_file.KWH_KEYS))} kilowattHour values "
            f"({', '.join(models_file.KWH_KEYS)}); measure them with --energy (an eval that ran "
            "without it: --force --energy)"
        ]
    return []


# The metadata a new entry needs, each with a value the hint's reader fills in.
METADATA_TO_FILL = (
    "--provider-name=PROVIDER_NAME",
    "--url=MODEL_PAGE",
    "--release-date=YYYY-MM-DD",
    "--price-input=USD_PER_MILLION_INPUT",
    "--price-output=USD_PER_MILLION_OUTPUT",
)


def add_command(name: str, flags: list[str], data_dir: Path) -> str:
    """The `evaluate` command that adds model `name` to the models.json in `data_dir` and publishes
    the run `flags` ask for (its identity and how-to-run flags, as a pytest run was given them:
    evaluate takes them under the same names), its answers taken from the cache; the metadata
    values are placeholders."""
    where = [] if data_dir.resolve() == models_file.DATA.resolve() else [f"--data-dir={data_dir}"]
    return shlex.join(["uv", "run", "evaluate", name, *flags, *where, *METADATA_TO_FILL])


def board_refusals(
    key: str, path: Path, result: dict[str, Any], *, allow_errors: bool
) -> list[str]:
    """Why the result file at `path` cannot be an entry's resultFiles[key]: the publish reasons,
    recomputed from its config and summary (never its stored `publishable`), or it is not the
    run it claims to be: another eval's result, or a name that is not its run's (the file was
    renamed, or its config edited)."""
    config = result["config"]
    reasons = not_publishable_reasons(config, result["summary"], allow_errors=allow_errors)
    eval_name = models_file.RESULT_KEYS[key]
    if config.get("eval") != eval_name:
        reasons.append(f"it is a {config.get('eval')} result, not {eval_name}")
    expected = run_name(config) + ".json"
    if path.name != expected:
        reasons.append(f"its run's file is named {expected}: it was renamed, or its config edited")
    return reasons


def identity_mismatch(configs: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
    """The first result whose run identity differs from the first one's, and how:
    (its key, "model 'b' where KEY has 'a'"); None when they are one run."""
    (first, reference), *others = configs.items()
    for key, config in others:
        for field in model_keys():
            if config.get(field) != reference.get(field):
                return (
                    key,
                    f"{field} {config.get(field)!r} where {first} has {reference.get(field)!r}",
                )
    return None


def _refusals(
    paths: dict[str, Path], loaded: dict[str, dict[str, Any]], allow_errors: bool
) -> list[str]:
    """Why the results cannot be published: a reason every result shares once ("--limit 5
    makes it a smoke test"), any other with the eval it is about."""
    by_key = {
        key: board_refusals(key, paths[key], r, allow_errors=allow_errors)
        for key, r in sorted(loaded.items())
    }
    shared = (
        set.intersection(*(set(reasons) for reasons in by_key.values()))
        if len(by_key) > 1
        else set()
    )
    reasons = sorted(shared)
    reasons += [
        f"{key}: {reason}" for key, own in by_key.items() for reason in own if reason not in shared
    ]
    mismatch = (
        identity_mismatch({key: r["config"] for key, r in loaded.items()}) if loaded else None
    )
    if mismatch:
        reasons.append(f"the results come from different runs ({mismatch[0]}: {mismatch[1]})")
    return reasons


Stamp = tuple[int, int, int, int]

# `evaluate` runs each eval as a pytest of its own, then publishes what they wrote. Each pytest
# notes the result files it wrote, with their stamps, in the folder this variable names (one
# file per process: `note_written`), so that the command that started it does not rescore them.
WRITTEN_NOTES = "ROBLOX_EVALS_WRITTEN_NOTES"


def note_written(path: Path, written: Stamp | None) -> None:
    """Tell the command that started this process (`WRITTEN_NOTES`, `written_notes`) that it
    wrote the result file `path`, stamped `written`; nothing without such a command."""
    folder = os.environ.get(WRITTEN_NOTES)
    if not folder or written is None:
        return
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as notes:
        notes.write(json.dumps({"path": str(path.resolve()), "stamp": list(written)}) + "\n")


def written_notes(folder: Path) -> dict[Path, Stamp]:
    """The result files the processes given `folder` (`WRITTEN_NOTES`) wrote, with their stamps
    then; a line that cannot be read is left out (that file is rescored)."""
    written: dict[Path, Stamp] = {}
    for notes in sorted(folder.glob("*.jsonl")):
        try:
            data = bounded.read_bytes(notes)
        except (OSError, ValueError):  # past the limits, or no file: its result files rescored
            continue
        for line in data.decode("utf-8", errors="replace").splitlines():
            try:
                note = bounded.loads(line)
                path, (dev, ino, size, mtime) = Path(note["path"]), note["stamp"]
                written[path] = (int(dev), int(ino), int(size), int(mtime))
            except (ValueError, TypeError, KeyError):
                continue
    return written


def stamp(path: Path) -> Stamp | None:
    """What tells the file at `path` from any other written there since (each write renames a
    new file over it: another inode); None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def finished_results(
    files: dict[str, Path],
    *,
    run_root: Path,
    written: Mapping[Path, Stamp | None] = {},
    datasets: Mapping[str, str] = {},
) -> tuple[dict[str, Path], list[str]]:
    """The result files (resultFiles key -> path) that count as finished: those their run
    folder reproduces now, offline, in the file's own format (a file of an older format
    included), or whose intact records today's graders only score differently (a regrade:
    the file stands as it was graded, and `evaluate --regrade` rescores it). A file left from
    an earlier attempt that the cache has moved on from (an API error retried since, an
    interrupted --force) is not: publishing it would publish a number that verify cannot
    reproduce. The lines say why one is left out, or that a regrade is available.
    `written`: the files this session wrote (with their `stamp` then), from the records it
    read: one still as written is finished without rescoring it again. `datasets`: the
    --dataset source each run was given (by key), which a local dataset file is read from."""
    from evals.verify import compare

    finished, notes = {}, []
    for key, path in files.items():
        if not path.is_file():
            continue
        if (
            written_then := written.get(path) or written.get(path.resolve())
        ) is not None and written_then == stamp(path):
            finished[key] = path
            continue
        status, detail = compare(path, run_root=run_root, dataset=datasets.get(key))
        if status == "ok":
            finished[key] = path
        elif status in ("REGRADE", "UNVERSIONED"):  # records intact: published, with its note
            finished[key] = path
            notes.append(
                f"{key}: {path.name}: regrade available ({detail}); `evaluate --regrade` rescores it"
            )
        elif status == "DIFF":
            notes.append(
                f"{key}: {path.name} is older than its run folder's answers ({detail}); rerun the eval to finish it"
            )
        else:
            notes.append(f"{key}: {path.name} is not reproduced by its run folder ({detail})")
    return finished, notes
