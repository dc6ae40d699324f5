"""`evaluate --regrade` called in process on a board of hand-made result files
(tests/support/site_boards.py): what it refuses and that it writes nothing it should not.
Regrading runs that today's graders score differently, end to end, is
tests/e2e/test_upgrade.py's."""

from __future__ import annotations

from pathlib import Path

from evals.evaluate.regrade import regrade
from tests.support.site_boards import make_board_data


def files(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}


def test_runs_that_do_not_reproduce_are_not_regraded_and_nothing_is_written(tmp_path, capsys):
    models, results = make_board_data(tmp_path)
    before = files(tmp_path)

    code = regrade(models, results, tmp_path / "runs", dry_run=False)

    out = capsys.readouterr().out
    assert code == 1
    assert files(tmp_path) == before
    assert out.count("not regraded") == 9  # three models, three evals each
    assert "nothing to regrade" in out
    board = [line for line in out.splitlines() if line.startswith("board ")]
    assert board[0].removeprefix("board before:") == board[1].removeprefix(
        "board after: "
    )  # the order did not change


def test_a_name_that_is_not_published_is_one_line_naming_the_published_ones(tmp_path, capsys):
    models, results = make_board_data(tmp_path)

    code = regrade(models, results, tmp_path / "runs", "no such model", dry_run=True)

    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [
        f"error: 'no such model' is not published in {models}; published: 'alpha-1', 'beta-2', 'qwen-local-70b'"
    ]
