"""Writes never follow a link out of the folder the user named (`evals.atomic.check_inside`):
the folder itself may be a link, a link inside it that stays inside is followed, one leading out
is refused naming it, and a link at the file itself is replaced, not written through."""

from __future__ import annotations

import sys

import pytest

from evals.atomic import write_text_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges there")


def test_a_tree_that_is_itself_a_link_is_written_in(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "runs").symlink_to(tmp_path / "real", target_is_directory=True)
    write_text_atomic(tmp_path / "runs" / "a" / "b.json", "{}", tree=tmp_path / "runs")
    assert (tmp_path / "real" / "a" / "b.json").read_text() == "{}"


def test_a_link_that_stays_inside_the_tree_is_followed(tmp_path):
    (tmp_path / "runs" / "real").mkdir(parents=True)
    (tmp_path / "runs" / "alias").symlink_to("real", target_is_directory=True)
    write_text_atomic(tmp_path / "runs" / "alias" / "b.json", "{}", tree=tmp_path / "runs")
    assert (tmp_path / "runs" / "real" / "b.json").read_text() == "{}"


def test_a_link_leading_out_is_refused_naming_it_and_nothing_is_written(tmp_path):
    (tmp_path / "outside").mkdir()
    link = tmp_path / "runs" / "eval" / "calls"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(OSError) as raised:
        write_text_atomic(link / "item" / "b.json", "{}", tree=tmp_path / "runs")
    assert raised.value.filename == str(link)
    assert raised.value.strerror == (
        f"{link} is a symlink that leads out of {tmp_path / 'runs'}, and the harness writes "
        "only inside it; replace the link with a folder"
    )
    assert list((tmp_path / "outside").iterdir()) == []


def test_a_link_at_the_file_itself_is_replaced_not_followed(tmp_path):
    (tmp_path / "outside.json").write_text("theirs")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "b.json").symlink_to(tmp_path / "outside.json")
    write_text_atomic(tmp_path / "runs" / "b.json", "ours", tree=tmp_path / "runs")
    assert (tmp_path / "outside.json").read_text() == "theirs"
    assert not (tmp_path / "runs" / "b.json").is_symlink()
    assert (tmp_path / "runs" / "b.json").read_text() == "ours"
