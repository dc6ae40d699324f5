"""Headless Chromium for the site tests: Selenium driving Debian's chromedriver.

    browser = start_chromium(profile)
    browser.get("http://127.0.0.1:8000/")
    browser.find_element(By.CSS_SELECTOR, "th[data-key=average]").click()
    assert problems(browser) == []
    browser.quit()

The driver is named (Service(CHROMEDRIVER)), so Selenium Manager never runs and nothing is
looked up or downloaded. Install the browser with `apt-get install chromium chromium-driver`."""

from __future__ import annotations

import os
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get install chromium chromium-driver"
CHROME_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


# Set (to 1) where Chromium cannot be installed the way the tests find it (CI's Windows and
# macOS runners): the browser tests skip, saying why, instead of failing.
SKIP_WITHOUT_CHROMIUM = "SITE_TESTS_SKIP_WITHOUT_CHROMIUM"


class BrowserUnavailable(RuntimeError):
    """Chromium or chromedriver is not installed (`missing`), or would not start."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def skipped_without_chromium(error: BrowserUnavailable) -> bool:
    """Whether a browser test skips rather than fails on `error`."""
    return error.missing and os.environ.get(SKIP_WITHOUT_CHROMIUM) == "1"


def start_chromium(profile: Path, *, timeout: float = 20.0) -> WebDriver:
    """One chromedriver and one headless Chromium session, with `profile` as its user data
    directory and the browser console log kept for `problems`."""
    missing = [
        str(p) for p in (CHROMIUM, CHROMEDRIVER) if not (p.is_file() and os.access(p, os.X_OK))
    ]
    if missing:
        raise BrowserUnavailable(
            f"{' and '.join(missing)} not found: install headless Chromium with `{INSTALL}`",
            missing=True,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (*CHROME_ARGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.page_load_strategy = "normal"
    options.timeouts = {"pageLoad": int(timeout * 1000), "script": 10_000, "implicit": 0}
    try:
        return webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    except WebDriverException as error:
        message = (error.msg or str(error)).strip().splitlines()
        raise BrowserUnavailable(
            f"chromedriver could not start Chromium: {message[0][:500] if message else type(error).__name__}"
        ) from None


def problems(browser: WebDriver) -> list[str]:
    """Console entries of warning level or worse (page errors, failed loads, console.error)
    since the last read of the console log."""
    return [
        f"{e['level']}: {e['message']}"
        for e in browser.get_log("browser")
        if e["level"] in ("SEVERE", "WARNING")
    ]
