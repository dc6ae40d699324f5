"""Verifying the published runs never writes a published file: the snapshot extension refuses to
write or delete one, the second guard should a snapshot writer get past the first. The commands
(`evaluate --verify`, `pytest --verify-published`) are tests/e2e/test_verify_published.py."""

from __future__ import annotations

import pytest

# -- evaluate --verify -------------------------------------------------------------------------


# -- pytest --verify-published -------------------------------------------------------------------


def test_the_snapshot_extension_never_writes_or_deletes_a_published_file(tmp_path):
    """The second guard, should a snapshot writer ever get past the first."""
    from syrupy.data import Snapshot, SnapshotCollection

    from plugins.verify import PublishedResultFile

    path = tmp_path / "published.json"
    path.write_text('{"config": {}, "summary": {}, "results": []}\n')
    before = path.read_bytes()
    collection = SnapshotCollection(location=str(path))
    collection.add(Snapshot(name="test_published_run[Student_1-leetcode]", data="{}\n"))

    with pytest.raises(pytest.fail.Exception, match="published result files never change"):
        PublishedResultFile.write_snapshot_collection(snapshot_collection=collection)
    with pytest.raises(pytest.fail.Exception, match="published result files never change"):
        PublishedResultFile().delete_snapshots(snapshot_location=str(path), snapshot_names={"x"})
    assert path.read_bytes() == before


# -- a broken models.json, in every command ------------------------------------------------------
