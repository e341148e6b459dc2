"""Headless chromium for the web console's tests: Debian's browser driven by Playwright.

Playwright's own browser download is not reachable from every machine, so the tests use
the ``chromium`` that ``.ci/run`` installs with apt.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless chromium (Playwright ``Browser``), closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as play:
        launched = play.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-background-networking"],
        )
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def console_page(browser: Any, url: str, wait_ms: int) -> Iterator[Any]:
    """A page of the console at ``url``, once its script is ready.

    Fails the test afterwards if a script error happened on the page.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(url)
    opened.wait_for_selector("body[data-ready=true]", timeout=wait_ms)
    try:
        yield opened
    finally:
        context.close()
    assert errors == []  # no script error on the page
