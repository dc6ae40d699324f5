"""A pytest plugin with a bug (`-p tests.support.internal_error`): pytest's INTERNALERROR, exit 3, as a
harness bug would end an eval's run."""


def pytest_collection_modifyitems(items):
    raise RuntimeError("a bug in the harness")
