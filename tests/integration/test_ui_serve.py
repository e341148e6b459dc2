"""``jarvis ui --api`` in front of two ``jarvis serve`` workers on PostgreSQL and Redis.

The console speaks the standard LangGraph API, so a task sent from the browser through one
worker is a thread every worker serves, and (sessions on PostgreSQL) a session the CLI
lists with the same ``JARVIS_CHECKPOINT_URL``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from jarvis_graph.loopback import start_listening
from tests.integration.test_ui_browser import WAIT_MS, _ask
from tests.support.browser import chromium
from tests.support.serve import server_env, workers
from tests.support.trust import trust

pytestmark = pytest.mark.slow


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def served(pg_url: str, redis_url: str, workspace: Path, tmp_path: Path) -> Iterator[Any]:
    """Two workers, and a console attached to the first; yields (console url, workers, env)."""
    script = workspace / ".jarvis" / "script.yaml"
    script.parent.mkdir()
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
                    {"text": "One file: notes.md. !!!COMPLETE!!!"},
                ]
            }
        )
    )
    spec = {"platform": "scripted", "script": str(script)}
    config = {"model_groups": {"default": {"normal": spec, "cheap": spec}}}
    (workspace / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(workspace)
    (workspace / "notes.md").write_text("# notes\n")
    env = server_env(pg_url, redis_url)
    with workers("ab", env, tmp_path) as (a, b):
        log = tmp_path / "ui.log"

        def on(port: int) -> subprocess.Popen[bytes]:
            with log.open("ab") as out:
                return subprocess.Popen(
                    [sys.executable, "-m", "jarvis_graph.cli", "ui", "--api", a.url, "--port",
                     str(port)],
                    cwd=workspace, env=env, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip

        console, port = start_listening(on, 60, lambda _p: log.read_text())
        try:
            deadline = time.monotonic() + 60
            pattern = rf"(http://127\.0\.0\.1:{port}/\?token=\S+)"
            while not (found := re.search(pattern, log.read_text())):
                assert console.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            url = found.group(1)
            while True:
                try:
                    httpx.get(url.split("?")[0], timeout=2)
                    break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline
                    time.sleep(0.2)
            yield url, (a, b), env
        finally:
            os.killpg(console.pid, signal.SIGINT)
            console.wait(timeout=30)


def test_a_task_from_the_console_is_a_thread_of_every_worker_and_a_cli_session(
    served: Any, browser: Any, workspace: Path
) -> None:
    url, (a, b), env = served
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=WAIT_MS)
    thread = _ask(page, "Which files are there?")
    assert "One file: notes.md." in page.inner_text("#chat-log")
    context.close()

    with get_sync_client(url=b.url, api_key=None) as other:  # the other worker
        state = other.threads.get_state(thread)
    assert state["values"]["status"] == "completed"
    assert state["values"]["final_answer"] == "One file: notes.md."
    listed = subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", "sessions", "list"],
        cwd=workspace, env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert thread in listed.stdout, listed.stdout + listed.stderr
