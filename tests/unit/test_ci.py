"""The GitHub workflow (.github/workflows/ci.yml: ubuntu, windows, macos) cannot run here: what
can be checked is that it runs .ci/run's commands, and the README's test command among them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.support import ROOT, browser

# Commands the workflow runs and .ci/run may not (none: every command is run by both).
PENDING: set[str] = set()


def commands(path: Path) -> set[str]:
    """The `uv ...` commands a script or workflow runs, one per line (after a `run:` or alone)."""
    found = (
        re.match(r"\s*(?:-\s*)?(?:run:\s*)?(uv (?:run|sync)\b.*?)\s*$", line)
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    return {m.group(1) for m in found if m}


def test_the_workflow_runs_what_ci_runs_and_the_readmes_test_command():
    ci, workflow = commands(ROOT / ".ci/run"), commands(ROOT / ".github/workflows/ci.yml")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test_command = re.search(r"&& (uv run pytest tests[^#\n]*?)\s*#", readme).group(1)

    assert ci - workflow == set()
    assert workflow - ci <= PENDING
    assert {test_command, "uv run build --check"} <= ci & workflow
    assert any(c.startswith("uv sync --locked ") for c in ci & workflow)


def test_a_missing_chromium_skips_the_browser_tests_only_where_the_variable_says_so(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setattr(browser, "CHROMEDRIVER", Path(sys.executable))  # present on any machine
    with pytest.raises(browser.BrowserUnavailable) as raised:
        browser.start_chromium(tmp_path / "profile")
    assert str(raised.value) == (
        f"{tmp_path / 'no-chromium'} not found: "
        "install headless Chromium with `apt-get install chromium chromium-driver`"
    )

    monkeypatch.delenv(browser.SKIP_WITHOUT_CHROMIUM, raising=False)
    assert not browser.skipped_without_chromium(raised.value)
    monkeypatch.setenv(browser.SKIP_WITHOUT_CHROMIUM, "1")
    assert browser.skipped_without_chromium(raised.value)
    assert not browser.skipped_without_chromium(
        browser.BrowserUnavailable("chromedriver could not start Chromium: crashed")
    )
