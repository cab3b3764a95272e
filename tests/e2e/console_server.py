"""The real dispatch server for the console and courier app tests: accounts with passwords made
through the app's own models, then `appliance serve --only dispatch` in a subprocess on a free port,
and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery"
# The marks of every test that drives the browser against a served app.
BROWSER_TEST = [
    pytest.mark.e2e,
    pytest.mark.server,
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed"),
]


@contextlib.contextmanager
def serving(data_dir: Path, port: int, environ: dict[str, str] | None = None) -> Iterator[str]:
    log_path = data_dir.parent / f"serve-{port}.log"
    with log_path.open("wb") as log, _served(data_dir, port, environ, log) as url:
        yield url


@contextlib.contextmanager
def _served(data_dir: Path, port: int, environ: dict[str, str] | None, log: Any) -> Iterator[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--only",
            "dispatch",
            "--data-dir",
            str(data_dir),
            "--dispatch-port",
            str(port),
        ],
        # The server's log (an access line per request) goes to a file beside the data directory:
        # a pipe nobody reads fills at 64 KiB and then blocks every request that logs.
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(environ or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                requests.get(f"{url}/openapi.json", timeout=2)
                break
            except (requests.ConnectionError, requests.Timeout):  # several processes start behind one port
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("the server did not start: " + _tail(log.name)) from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(20)


def _tail(path: str, lines: int = 40) -> str:
    return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])


def launch_chromium(playwright):
    """Debian's Chromium, headless, through Playwright."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


_shared: dict[str, Any] = {}


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium, started once per test process and shared by its browser tests: a launch
    with its Playwright driver is about 0.9 s of CPU, and the suite ran 28 on each backend. A test
    works in contexts of its own (``browser.new_context()`` or ``browser.new_page()``: a fresh
    profile, no cookies, storage or permissions of another test), all closed when its block ends. A
    browser that died is started again by the next test; ``stop_chromium`` ends it with the session."""
    browser = _shared.get("browser")
    if browser is None or not browser.is_connected():
        from playwright.sync_api import sync_playwright

        if "playwright" not in _shared:
            _shared["playwright"] = sync_playwright().start()
        browser = _shared["browser"] = launch_chromium(_shared["playwright"])
    try:
        yield browser
    finally:
        for context in list(browser.contexts):
            with contextlib.suppress(Exception):  # a context the test closed, or a browser that died
                context.close()


def stop_chromium() -> None:
    browser, playwright = _shared.pop("browser", None), _shared.pop("playwright", None)
    with contextlib.suppress(Exception):
        if browser is not None:
            browser.close()
    if playwright is not None:
        playwright.stop()


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def wait_until(page, expression: str, timeout: float = 20.0) -> object:
    """Poll a JavaScript expression until it is truthy. Playwright's wait_for_function evaluates its
    predicate with eval inside the page, which the pages' Content-Security-Policy rightly refuses."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(100)


def sign_in_console(page, url: str, email: str, password: str = PASSWORD) -> None:
    page.goto(url + "/console/?lang=en")
    page.wait_for_selector("body[data-view='signin']")
    page.fill("#signin-email", email)
    page.fill("#signin-password", password)
    page.click("#signin-submit")
    page.wait_for_selector("body[data-view='workspace']")
    page.wait_for_selector("body[data-stream='live']")


def courier_phone(browser, at: tuple[float, float], locale: str = "en-US", **options):
    """A phone-sized browser context that shares its position (``at``) with the courier app."""
    return browser.new_context(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        locale=locale,
        geolocation={"latitude": at[0], "longitude": at[1], "accuracy": 8},
        permissions=["geolocation"],
        **options,
    )


def sign_in_app(page, email: str, password: str = PASSWORD) -> None:
    """Sign in on the courier app's open sign-in screen and wait for the run."""
    page.fill("#signin-email", email)
    page.fill("#signin-password", password)
    page.click("#signin-submit")
    page.wait_for_selector("body[data-view='app']")


def eventually(check, timeout: float = 20.0) -> None:
    """Poll a Python check (for example, a row the browser's request should have written)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the check never passed")
        time.sleep(0.1)
