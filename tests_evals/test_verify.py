"""`pytest --verify-published`: every published run, rescored offline from its run folder,
must reproduce its published result file exactly (timing aside)."""


def test_published_run(rescored, published_snapshot):
    assert rescored == published_snapshot
