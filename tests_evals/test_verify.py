"""`pytest --verify-published`: every published run, rescored offline from its run folder,
must reproduce its published result file exactly (timing aside)."""

from evals.verify import differences


def test_published_run(published_run, rescored, published_snapshot):
    assert rescored == published_snapshot, "\n".join(differences(published_run.result(), rescored))
