"""The `build` command (`uv run build`, `python -m evals.site`): `--check` says whether the
files under site/ are as the data makes them (exit 1 naming the stale ones), `--write`
rewrites those that are not; one line says what was written, removed or found stale, and bad
data is one line naming the file, exit 2. `--view PATH` writes a local page of one run
(`evals.site.view`), says where in one line and opens it in the browser (not with --no-open)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.atomic import write_text_atomic
from evals.entry_points import ExtensionError
from evals.errors import DataFileError
from evals.models_file import MODELS, RESULTS
from evals.scrub import escape_unencodable, printable
from evals.site.rendering import DATA_JS, SITE, _build


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build",
        description="Build the leaderboard site's data from data/models.json, data/results/ and "
        "data/runs/ (or with --view, a local page of any one run): site/data.js "
        "(scores with 95% intervals, paired comparisons, suite cost) and a page of data per published model "
        "(site/models/<file name>.js, shown by site/model.html: each item's question, reply and verdict).",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--write",
        action="store_true",
        help="rewrite the files under site/ that changed, and remove the pages of models no longer published",
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a file under site/ is stale (or a model page is left over)",
    )
    mode.add_argument(
        "--view",
        type=Path,
        metavar="PATH",
        help="a local page of one run, published or not: PATH is a result file or a run folder (an "
        "unfinished run shows what it has asked and been answered so far); prints the page's path and "
        "opens it in the browser",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="with --view: where to write the page (default: <temp dir>/roblox-evals-view/<eval>-<run>.html)",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="with --view: write the page, do not open it"
    )
    parser.add_argument(
        "--models",
        type=Path,
        metavar="PATH",
        help="models.json (default: data/models.json; when it does not exist, the board is empty)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        metavar="DIR",
        help="results folder (default: data/results)",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        metavar="DIR",
        help="run folders, where the model pages read each question and reply (default: runs beside the results "
        "folder, data/runs); an item whose run folder is not there shows its result row only",
    )
    parser.add_argument(
        "--site", type=Path, default=SITE, metavar="DIR", help="site folder (default: site)"
    )
    args = parser.parse_args(argv)
    escape_unencodable(sys.stdout)  # a folder's name in a cp1252 pipe
    if args.view is None and (args.out is not None or args.no_open):
        parser.error("--out and --no-open go with --view PATH")
    if args.view is not None:
        return _view(args.view, out=args.out, runs=args.runs, open_it=not args.no_open)

    if args.models is not None and not args.models.exists():  # a FIFO: refused as it is read
        print(f"build: {args.models}: no such models file", file=sys.stderr)
        return 2
    args.models = args.models or MODELS
    try:
        changes, count = _build(
            models_path=args.models,
            results_dir=args.results,
            runs_dir=args.runs,
            site_dir=args.site,
            write=args.write,
        )
    except (
        DataFileError,
        ExtensionError,
    ) as error:  # ExtensionError: two installed packages claim one name, or one is broken
        print(printable(f"build: {error}"), file=sys.stderr)
        return 2
    except OSError as error:
        print(
            f"build: {error.strerror}"  # it names the file itself (a link out of the site)
            if error.filename and str(error.strerror).startswith(str(error.filename))
            else f"build: {error.filename}: {error.strerror}"
            if error.filename
            else f"build: {error}",
            file=sys.stderr,
        )
        return 2
    models = f"{count} published model{'s' if count != 1 else ''}"
    written = [path for path, text in changes.items() if text is not None]
    removed = [path for path, text in changes.items() if text is None]
    if args.check:
        if changes:
            parts = (
                [f"{_listed(written)} {'is' if len(written) == 1 else 'are'} stale"]
                if written
                else []
            )
            parts += (
                [
                    f"{_listed(removed)} {'is the page' if len(removed) == 1 else 'are pages'} of no published model"
                ]
                if removed
                else []
            )
            print(f"{' and '.join(parts)}: run `uv run build --write`", file=sys.stderr)
            return 1
        print(f"{_shown(args.site)} is up to date ({models})")
        return 0
    if not changes:
        print(f"{_shown(args.site)} is up to date ({models}); nothing written")
        return 0
    done = [f"wrote {_listed(written)}"] if written else []
    done += [f"removed {_listed(removed)}"] if removed else []
    print(f"{'; '.join(done)} ({models})")
    return 0


def _view(path: Path, *, out: Path | None, runs: Path | None, open_it: bool) -> int:
    """`build --view PATH`: the run's page written, its path printed, the page opened."""
    from evals.site import view  # only this mode needs it

    try:
        run = view.read_run(path, runs_dir=runs)
        text = view.page(run)
        out = out or view.default_out(run)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, text)
    except (DataFileError, ExtensionError) as error:
        print(printable(f"build: {error}"), file=sys.stderr)
        return 2
    except OSError as error:
        where = error.filename or path
        print(printable(f"build: {where}: {error.strerror or error}"), file=sys.stderr)
        return 2
    state = "unfinished, " if run.result is None else ""
    print(printable(f"wrote {out} ({state}{len(run.items):,} answers)"))
    import webbrowser  # here: `build --check` and `--write` never open a browser

    if open_it and not webbrowser.open(out.resolve().as_uri()):
        print(
            f"build: no browser to open it in: open {printable(str(out))} yourself", file=sys.stderr
        )
    return 0


def _listed(paths: list[Path]) -> str:
    """Paths for a one-line message, data.js first: all of up to three, else two and a count."""
    shown = [
        _shown(path) for path in sorted(paths, key=lambda path: (path.name != DATA_JS, str(path)))
    ]
    if len(shown) > 3:
        return f"{shown[0]}, {shown[1]} and {len(shown) - 2} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
