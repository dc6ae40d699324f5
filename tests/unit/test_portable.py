"""What the harness needs of its platform, the parts that run in process: a write past Windows'
path limit says how to lift it, a Windows dataset path with an equals sign is a path, and a plan
saved under a Windows device name is still resumed. Locks, interpreters without POSIX calls and
runs filing Windows names are tests/e2e/test_portable.py."""

from __future__ import annotations

import pytest

from evals import identity
from evals.evaluate import saved_plans
from evals.names import windows_path_note

# Where a filesystem cannot flock a folder (NFS: EBADF on a folder open for reading only).


# -- names on Windows ------------------------------------------------------------------------------

# What Windows refuses in a file or folder name: a device name (with any extension), a character
# of <>:"/\|?* or a control character, a trailing dot or space, more than 255 characters.


@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_a_write_failing_past_windows_path_limit_says_how_to_lift_it(tmp_path, platform):
    deep = tmp_path / ("d" * 200) / "calls" / ("x" * 60) / "candidate.json"
    note = windows_path_note(deep, platform)
    assert note == (
        ""
        if platform == "linux"
        else f"; its temporary file's path is {len(str(deep)) + 14} characters, past Windows' "
        "259: enable long paths (LongPathsEnabled, then sign in again) or pass a shorter --run-dir=PATH"
    )
    assert windows_path_note(tmp_path / "calls" / "mc-001" / "candidate.json", platform) == ""


@pytest.mark.parametrize(
    "value, chosen",
    [
        ("C:\\runs=old\\q.jsonl", {"multiple_choice": "C:\\runs=old\\q.jsonl"}),
        ("mc=D:\\q.jsonl", {"multiple_choice": "D:\\q.jsonl"}),
    ],
)
def test_a_windows_dataset_path_with_an_equals_sign_is_a_path_not_an_eval(
    value, chosen, monkeypatch
):
    """`C:\\runs=old` was taken for an eval named C:\\runs, and refused."""
    monkeypatch.setattr(
        identity, "evals_served", lambda source: ["multiple_choice"]
    )  # the columns of a file not here
    assert identity.parse_datasets([value]) == chosen


def test_a_plan_saved_under_a_windows_device_name_is_still_resumed(tmp_path):
    path = saved_plans.save(
        tmp_path, "Nul.x", {"multiple_choice": {"config": {}, "dataset": "bundled"}}, {}, {}, []
    )
    assert path.name.startswith("_Nul.x~")
    path.rename(path.with_name(path.name.removeprefix("_")))  # where the earlier harness saved it
    assert saved_plans.load(tmp_path, "Nul.x")["evals"] == {
        "multiple_choice": {"config": {}, "dataset": "bundled"}
    }
