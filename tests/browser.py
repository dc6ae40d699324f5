"""A minimal W3C WebDriver client over httpx, for Debian's chromedriver driving headless Chromium.

    with Browser.start() as browser:
        browser.get("http://127.0.0.1:8000/")
        browser.find("th[data-key=average]").click()
        names = [e.text for e in browser.find_all("tbody th")]
        errors = browser.console_log()

Only what the site tests need: navigate, find by CSS, click, text and attributes, execute a
script, read the browser console log, quit. Install the browser with
`apt-get install chromium chromium-driver`."""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get install chromium chromium-driver"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C web element identifier key
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


class BrowserUnavailable(RuntimeError):
    """Chromium or chromedriver is not installed, or would not start."""


class WebDriverError(RuntimeError):
    """The driver answered a command with a W3C error."""

    def __init__(self, error: str, message: str):
        super().__init__(f"{error}: {message}")
        self.error = error


@dataclass(frozen=True)
class Element:
    browser: Browser
    id: str

    def _path(self, suffix: str = "") -> str:
        return f"/element/{self.id}{suffix}"

    def click(self) -> None:
        self.browser.command("POST", self._path("/click"), {})

    @property
    def text(self) -> str:
        return self.browser.command("GET", self._path("/text"))

    def attribute(self, name: str) -> str | None:
        return self.browser.command("GET", self._path(f"/attribute/{name}"))

    def find(self, css: str) -> Element:
        return self.browser._element(self.browser.command("POST", self._path("/element"), {"using": "css selector", "value": css}))

    def find_all(self, css: str) -> list[Element]:
        found = self.browser.command("POST", self._path("/elements"), {"using": "css selector", "value": css})
        return [self.browser._element(e) for e in found]


class Browser:
    """One chromedriver process and one headless Chromium session."""

    def __init__(self, driver: subprocess.Popen, base: str, session: str, profile: Path, http: httpx.Client):
        self._driver = driver
        self._base = base
        self._session = session
        self._profile = profile
        self._http = http

    @classmethod
    def start(cls, *, timeout: float = 20.0) -> Browser:
        missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not (p.is_file() and os.access(p, os.X_OK))]
        if missing:
            raise BrowserUnavailable(f"{' and '.join(missing)} not found: install headless Chromium with `{INSTALL}`")
        port = _free_port()
        profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
        driver = subprocess.Popen(
            [str(CHROMEDRIVER), f"--port={port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        http = httpx.Client(timeout=httpx.Timeout(60.0, connect=5.0), trust_env=False)
        try:
            _wait_ready(http, base, driver, timeout)
            capabilities = {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": str(CHROMIUM), "args": [*CHROME_ARGS, f"--user-data-dir={profile}"]},
                "goog:loggingPrefs": {"browser": "ALL"},
                "pageLoadStrategy": "normal",
                "timeouts": {"pageLoad": int(timeout * 1000), "script": 10_000, "implicit": 0},
            }
            reply = http.post(f"{base}/session", json={"capabilities": {"alwaysMatch": capabilities}})
            value = reply.json().get("value", {})
            if reply.status_code != 200 or "sessionId" not in value:
                raise BrowserUnavailable(f"chromedriver could not start Chromium: {value.get('message', reply.text)[:500]}")
        except BaseException:
            http.close()
            _stop(driver)
            shutil.rmtree(profile, ignore_errors=True)
            raise
        return cls(driver, base, value["sessionId"], profile, http)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.quit()

    # ---- the protocol ----

    def command(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self._base}/session/{self._session}{path}"
        reply = self._http.request(method, url, json=body if method == "POST" else None)
        try:
            payload = reply.json()
        except ValueError:
            raise WebDriverError("invalid response", f"{method} {path}: HTTP {reply.status_code} {reply.text[:200]}") from None
        value = payload.get("value") if isinstance(payload, dict) else None
        if reply.status_code != 200:
            error = value.get("error", "unknown error") if isinstance(value, dict) else "unknown error"
            message = value.get("message", "") if isinstance(value, dict) else reply.text
            raise WebDriverError(error, f"{method} {path}: {message.splitlines()[0] if message else ''}")
        return value

    def _element(self, value: dict[str, str]) -> Element:
        return Element(self, value[ELEMENT])

    # ---- what tests use ----

    def get(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    @property
    def title(self) -> str:
        return self.command("GET", "/title")

    def find(self, css: str) -> Element:
        return self._element(self.command("POST", "/element", {"using": "css selector", "value": css}))

    def find_all(self, css: str) -> list[Element]:
        return [self._element(e) for e in self.command("POST", "/elements", {"using": "css selector", "value": css})]

    def execute(self, script: str, *args: Any) -> Any:
        """Run `script` as a function body in the page (`arguments[0]` ... are `args`)."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def screenshot(self, path: Path) -> None:
        """A PNG of the viewport, for looking at a failing page."""
        Path(path).write_bytes(base64.b64decode(self.command("GET", "/screenshot")))

    def set_window_size(self, width: int, height: int) -> None:
        self.command("POST", "/window/rect", {"width": width, "height": height})

    def console_log(self) -> list[dict[str, Any]]:
        """The browser console entries since the last call (chromedriver's log endpoint):
        each {"level": "SEVERE" | "WARNING" | "INFO" | ..., "message", "source", "timestamp"}."""
        return self.command("POST", "/se/log", {"type": "browser"})

    def quit(self) -> None:
        try:
            if self._session:
                try:
                    self._http.delete(f"{self._base}/session/{self._session}", timeout=10)
                except httpx.HTTPError:
                    pass
                self._session = ""
        finally:
            self._http.close()
            _stop(self._driver)
            shutil.rmtree(self._profile, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(http: httpx.Client, base: str, driver: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.poll() is not None:
            raise BrowserUnavailable(f"chromedriver exited with status {driver.returncode} on start")
        try:
            if http.get(f"{base}/status", timeout=1).json()["value"]["ready"]:
                return
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            pass
        time.sleep(0.05)
    raise BrowserUnavailable(f"chromedriver did not answer on {base} within {timeout:.0f} s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
