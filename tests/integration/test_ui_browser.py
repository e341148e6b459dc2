"""``jarvis ui`` in a real browser (Debian's chromium driven by Playwright), offline.

One console per module: ``jarvis ui`` started as a user starts it (it starts its own
``langgraph dev`` on loopback), a workspace whose config picks the scripted platform, and
headless chromium. Each test does what a user does on a page and checks what the page
shows and what happened on disk; screenshots go to the test's temp folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from jarvis_graph.loopback import PortError, free_port, start_listening
from tests.support.browser import chromium, console_page
from tests.support.cli import run_process
from tests.support.trust import trust

pytestmark = pytest.mark.slow

STARTUP = 150.0
WAIT_MS = 60_000

SCRIPT = {
    "turns": [
        {"when": "Continue after the stop", "text": "Continued where we were. !!!COMPLETE!!!"},
        {"when": "Read the attachments", "text": "Read them. !!!COMPLETE!!!"},
        # a sub-agent whose run calls a tool chain, and the planner of examples/plan_script
        {"when": "SUB-TASK: list", "tool_calls": [{"name": "quick", "args": {}}]},
        {"when": "SUB-TASK: list", "text": "The chain listed 3 files. !!!COMPLETE!!!"},
        {
            "when": "Delegate the listing",
            "tool_calls": [
                {
                    "name": "sub_agent",
                    "args": {"task": "SUB-TASK: list the files with the quick chain"},
                }
            ],
        },
        {"when": "Delegate the listing", "text": "Delegated. !!!COMPLETE!!!"},
        {"when": "<RESULT_SUMMARY>", "text": "Both steps are done. !!!COMPLETE!!!"},
        {
            "when": "Decide whether the task(?:(?!This is step).)*$",
            "tool_calls": [
                {
                    "name": "PlanDecision",
                    "args": {
                        "split": True,
                        "reason": "two independent questions",
                        "steps": [
                            {"id": "rows", "task": "Count the data rows of data.csv"},
                            {"id": "files", "task": "Name the C files of the workspace"},
                        ],
                    },
                }
            ],
        },
        {
            "when": "Decide whether the task",
            "tool_calls": [{"name": "PlanDecision", "args": {"split": False, "reason": "small"}}],
        },
        {"when": "Count the data rows", "text": "data.csv has 1 data row. !!!COMPLETE!!!"},
        {"when": "Name the C files", "text": "copy.c is the only C file. !!!COMPLETE!!!"},
        {"when": "Think for a long time", "delay": 120, "text": "Too late. !!!COMPLETE!!!"},
        {"when": "List the files", "tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
        {"when": "List the files", "text": "The workspace holds data.csv. !!!COMPLETE!!!"},
        {
            "when": "Write the note",
            "tool_calls": [{"name": "write_file", "args": {"path": "note.txt", "content": "hi"}}],
        },
        {"when": "Write the note", "text": "The note is written. !!!COMPLETE!!!"},
        {
            "when": "Keep a settings note",
            "tool_calls": [
                {"name": "write_file", "args": {"path": ".jarvis/notes.md", "content": "kept"}}
            ],
        },
        {"when": "Keep a settings note", "text": "Done with the note. !!!COMPLETE!!!"},
    ]
}


class Console:
    """A ``jarvis ui`` process: its printed address and token."""

    def __init__(self, workspace: Path, log: Path) -> None:
        self.log = log

        def on(port: int) -> subprocess.Popen[bytes]:
            with log.open("ab") as out:
                return subprocess.Popen(
                    [sys.executable, "-m", "jarvis_graph.cli", "ui", "--port", str(port)],
                    cwd=workspace,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                    start_new_session=True,
                )

        try:
            self.proc, self.port = start_listening(on, STARTUP, lambda _p: log.read_text())
        except PortError as exc:
            pytest.fail(f"jarvis ui did not start: {exc}")
        deadline = time.monotonic() + STARTUP
        while True:
            text = log.read_text(errors="replace")
            found = re.search(
                rf"Jarvis console: (http://127\.0\.0\.1:{self.port})/\?token=(\S+)", text
            )
            if found and self._answers(found.group(1)):
                self.base, self.token = found.group(1), found.group(2)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"jarvis ui did not start:\n{text}")
            time.sleep(0.3)

    @staticmethod
    def _answers(base: str) -> bool:
        try:
            return httpx.get(base + "/", timeout=2).status_code == 401
        except httpx.HTTPError:
            return False

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    def api(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"X-Jarvis-Token": self.token, "Origin": self.base}
        reply = httpx.request(method, f"{self.base}/api{path}", json=body, headers=headers)
        reply.raise_for_status()
        return reply.json()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # Ctrl-C: it stops its API server too
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


@contextmanager
def scripted_console(home: Path, ws: Path, script: Any, **config: Any) -> Iterator[Console]:
    """``jarvis ui`` over ``ws``, trusted, its model the scripted ``script`` (``config`` added)."""
    path = ws / ".jarvis" / "script.yaml"
    path.write_text(json.dumps(script))
    spec = {"platform": "scripted", "script": str(path)}
    settings = {**config, "model_groups": {"default": {"normal": spec, "cheap": spec}}}
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(settings))
    trust(ws)
    running = Console(ws, home / "ui.log")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui")


@pytest.fixture(scope="module")
def console(home: Path) -> Iterator[tuple[Console, Path]]:
    """One console for the module, over a workspace with a scripted model and a C file."""
    env = pytest.MonkeyPatch()  # module scope: monkeypatch itself is per test
    env.setenv("HOME", str(home))
    env.setenv("JARVIS_HOME", str(home / ".jarvis"))
    ws = home / "ws"
    (ws / ".jarvis").mkdir(parents=True)
    (ws / "data.csv").write_text("a,b\n1,2\n")
    (ws / "copy.c").write_text(
        "#include <string.h>\n#include <stdio.h>\n\nint main(int argc, char **argv)\n{\n"
        "    char small[8];\n    strcpy(small, argv[1]);\n    puts(small);\n    return 0;\n}\n"
    )
    chains = ws / ".jarvis" / "chains"
    chains.mkdir()
    (chains / "quick.yaml").write_text(
        "steps:\n  - {id: one, tool: list_files}\n"
        "  - {id: two, tool: search_files, args: {pattern: a}}\n"
    )
    try:
        with scripted_console(home, ws, SCRIPT) as running:
            yield running, ws
    finally:
        env.undo()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any, console: tuple[Console, Path]) -> Iterator[Any]:
    with console_page(browser, console[0].url, WAIT_MS) as opened:
        yield opened


def _send(page: Any, task: str) -> None:
    page.click("#chat-new")
    page.fill("#chat-task", task)
    page.click("#chat-send")


def _ask(page: Any, task: str, graph: str = "agent") -> str:
    """Send ``task`` to ``graph`` in a new session, wait for the final answer; its session."""
    page.select_option("#chat-agent", graph)
    _send(page, task)
    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    return _session(page)


def _session(page: Any) -> str:
    """The id of the session the chat shows."""
    return str(page.inner_text("#chat-status").split("session ")[1].strip())


def test_without_the_token_every_call_is_refused(console: tuple[Console, Path]) -> None:
    running, ws = console
    base = running.base
    for path in ("/", "/api/assistants/search", "/console/info", "/console/code?file=data.csv",
                 "/static/app.js", "/api/threads/search"):  # fmt: skip
        assert httpx.get(base + path).status_code == 401, path
        assert httpx.get(base + path, cookies={"jarvis_ui": "wrong"}).status_code == 401, path
    assert httpx.post(base + "/api/threads", json={}).status_code == 401
    assert httpx.get(base + "/?token=wrong").status_code == 401
    # the token alone does not let another site change anything
    token = {"X-Jarvis-Token": running.token}
    assert httpx.post(base + "/api/threads", json={}, headers=token).status_code == 403
    evil = {**token, "Origin": "http://evil.example"}
    assert httpx.post(base + "/api/threads", json={}, headers=evil).status_code == 403
    # the printed address sets an HttpOnly, SameSite=Strict cookie and drops the token
    opened = httpx.get(running.url)
    assert opened.status_code == 303 and opened.headers["location"] == "/"
    cookie = opened.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    # the code excerpt never leaves the workspace
    outside = httpx.get(base + "/console/code?file=../ui.log", headers=token)
    assert outside.status_code == 403


def test_chat_runs_a_task_and_shows_tool_call_and_answer(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    page.evaluate(
        """() => {
        window.pieces = [];  // how far the reply got, token by token (its text waits)
        new MutationObserver((records) => records.forEach((r) => {
          if (r.target.classList?.contains("live")) window.pieces.push(r.target.textContent);
        })).observe(document.querySelector("#chat-log"), { childList: true, subtree: true });
        }"""
    )
    _send(page, "List the files of the workspace")

    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    pieces = page.evaluate("window.pieces")
    # progress as it streams; the text itself only once it is the answer (a check may
    # reject a draft: see test_ui_answers_browser)
    assert len(pieces) >= 3, pieces
    assert pieces[0] == "writing… 4 characters", pieces
    assert not any("data.csv" in piece for piece in pieces), pieces
    log = page.inner_text("#chat-log")
    assert "List the files of the workspace" in log
    assert '⚙ list_files {"path":"."} ✓' in log
    assert "The workspace holds data.csv." in log
    assert "!!!COMPLETE!!!" not in log
    assert page.inner_text("#chat-status").startswith("completed · session ")
    page.click("details.tool summary")
    assert "data.csv" in page.inner_text("details.tool pre")
    page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)


@pytest.mark.parametrize(
    ("decision", "written"),
    [("approve", "hi"), ("edit", "edited in the browser"), ("reject", None)],
)
def test_an_approval_asks_and_the_decision_resumes_the_run(
    page: Any, console: tuple[Console, Path], tmp_path: Path, decision: str, written: str | None
) -> None:
    _, ws = console
    (ws / "note.txt").unlink(missing_ok=True)
    _send(page, "Write the note please")

    page.wait_for_selector("#approval:not([hidden])", timeout=WAIT_MS)
    box = page.inner_text("#approval")
    assert "Approval needed" in box and "write_file" in box
    assert not (ws / "note.txt").exists()  # nothing ran before the decision
    page.screenshot(path=str(tmp_path / f"approval-{decision}.png"), full_page=True)
    args = page.locator("#approval textarea")
    assert json.loads(args.input_value()) == {"path": "note.txt", "content": "hi"}
    if decision == "edit":
        args.fill(json.dumps({"path": "note.txt", "content": "edited in the browser"}))
    if decision == "reject":
        page.fill("#approval input[aria-label=reason]", "not now")
    page.select_option("#approval select", decision)
    page.click("#approval-submit")

    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    assert page.is_hidden("#approval")
    if written is None:
        assert not (ws / "note.txt").exists()
        assert "✗" in page.inner_text("details.tool summary")
        result = page.locator("details.tool pre").text_content()
        assert "The user declined this call to write_file (not now)" in result
    else:
        assert (ws / "note.txt").read_text() == written


@pytest.mark.parametrize("allowed", [False, True])
def test_a_write_into_jarvis_files_runs_only_with_its_own_tick(
    page: Any, console: tuple[Console, Path], allowed: bool
) -> None:
    _, ws = console
    note = ws / ".jarvis" / "notes.md"
    note.unlink(missing_ok=True)
    _send(page, "Keep a settings note")

    page.wait_for_selector("#approval:not([hidden])", timeout=WAIT_MS)
    assert "also allow writing .jarvis/notes.md" in page.inner_text("#approval")
    if allowed:
        page.check("#approval input[type=checkbox]")
    page.select_option("#approval select", "approve")  # approving alone is not enough
    page.click("#approval-submit")

    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    if allowed:
        assert note.read_text() == "kept"
    else:
        assert not note.exists()
        result = page.locator("details.tool pre").last.text_content()
        assert "the user did not allow writing '.jarvis/notes.md'" in result


def test_sessions_list_and_fork_from_a_checkpoint(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    running, _ = console
    thread = _ask(page, "List the files again")

    page.click("header nav button[data-page=sessions]")
    row = page.locator(f"#sessions tr[data-thread='{thread}']")
    row.wait_for(timeout=WAIT_MS)
    assert "List the files again" in row.inner_text()
    assert "completed" in row.inner_text()
    row.locator("button", has_text="History").click()
    page.wait_for_selector("#checkpoints tr td", timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / "sessions.png"), full_page=True)
    # fork at the checkpoint whose next step is call_model with one tool result in
    history = running.api("POST", f"/threads/{thread}/history", {"limit": 100})
    target = next(
        h for h in history if h["next"] == ["call_model"] and len(h["values"]["messages"]) >= 3
    )
    checkpoint = target["checkpoint"]["checkpoint_id"]
    page.locator("#checkpoints tr", has_text=checkpoint).locator("button").click()

    forked = page.wait_for_selector("#fork-result", timeout=WAIT_MS).inner_text()
    new_thread = forked.split("forked into session ")[1].strip()
    assert new_thread != thread
    state = running.api("GET", f"/threads/{new_thread}/state")
    assert state["next"] == ["call_model"]  # the fork stands where the checkpoint stood
    assert len(state["values"]["messages"]) == len(target["values"]["messages"])
    assert running.api("GET", f"/threads/{thread}/state")["values"]["status"] == "completed"


def test_memory_search_edit_and_delete(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    _, ws = console
    saved = run_process(
        ["memory", "save", "The staging database listens on port 6543", "--tag", "infra"], cwd=ws
    )
    assert saved.returncode == 0, saved.stderr

    page.click("header nav button[data-page=memory]")
    page.wait_for_selector("#memory-namespace option", state="attached", timeout=WAIT_MS)
    page.fill("#memory-query", "which port does staging use")
    page.click("#memory-form button[type=submit]")
    item = page.wait_for_selector(".memory", timeout=WAIT_MS)
    assert "infra" in item.inner_text()
    assert "port 6543" in page.locator(".memory textarea").first.input_value()
    page.screenshot(path=str(tmp_path / "memory.png"), full_page=True)

    page.locator(".memory textarea").first.fill("The staging database listens on port 7654")
    page.locator(".memory button", has_text="Save").first.click()
    page.wait_for_function(
        "document.querySelector('.memory textarea')?.value.includes('7654')", timeout=WAIT_MS
    )
    listed = run_process(["memory", "list"], cwd=ws)
    assert "port 7654" in listed.stdout and "port 6543" not in listed.stdout
    page.locator(".memory button", has_text="Delete").first.click()
    page.wait_for_selector("#memory-results p", timeout=WAIT_MS)
    assert "port 7654" not in run_process(["memory", "list"], cwd=ws).stdout


def test_a_scan_report_shows_each_finding_with_its_code(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    _, ws = console
    report = tmp_path / "scan.json"
    scanned = run_process(["sec", "scan", ".", "--format", "json", "-o", str(report)], cwd=ws)
    assert report.is_file(), scanned.stdout + scanned.stderr

    page.click("header nav button[data-page=security]")
    page.set_input_files("#report-file", str(report))
    finding = page.wait_for_selector(".finding", timeout=WAIT_MS)
    page.wait_for_selector(".finding .hit", timeout=WAIT_MS)
    text = finding.inner_text()
    assert "copy.c:7" in text and "CWE-787" in text and "high" in text
    assert page.inner_text(".finding .hit").strip() == "7 |     strcpy(small, argv[1]);"
    assert page.inner_text("#report p") == "2 of 2 findings"
    page.select_option("#f-cwe", "CWE-787")
    page.wait_for_function("document.querySelector('#report p').textContent === '1 of 2 findings'")
    page.fill("#f-file", "nothing-matches")
    page.wait_for_function("document.querySelector('#report p').textContent.startsWith('0 of')")
    page.screenshot(path=str(tmp_path / "security.png"), full_page=True)


def test_the_graph_page_draws_the_agent_graph(page: Any, tmp_path: Path) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.click("header nav button[data-page=graph]")
    # Mermaid comes from the package (make ui-assets), never from a CDN
    page.wait_for_selector("#graph-view svg", timeout=WAIT_MS)
    shown = page.locator("#graph-view svg").text_content()
    assert "call_model" in shown and "run_tools" in shown and "confirm_tools" in shown
    page.screenshot(path=str(tmp_path / "graph.png"), full_page=True)
    base = page.url.split("/", 3)[:3]
    assert all(url.startswith("/".join(base)) or url.startswith("data:") for url in requested)


def test_stop_a_run_then_continue_the_session(page: Any, console: tuple[Console, Path]) -> None:
    running, _ = console
    _send(page, "Think for a long time")
    page.wait_for_selector("#chat-stop:not([disabled])", timeout=WAIT_MS)
    thread = _session(page)
    time.sleep(1)  # the model call is under way
    page.click("#chat-stop")

    page.wait_for_selector(".msg.status", timeout=WAIT_MS)
    assert "stopped; send a message to continue" in page.inner_text("#chat-log")
    runs = running.api("GET", f"/threads/{thread}/runs")
    assert [run["status"] for run in runs] == ["interrupted"]  # cancelled, not finished
    assert "Too late" not in page.inner_text("#chat-log")

    page.fill("#chat-task", "Continue after the stop")
    page.click("#chat-send")
    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    assert "Continued where we were." in page.inner_text("#chat-log")
    assert page.inner_text("#chat-status") == f"completed · session {thread}"  # same session


def test_delete_a_session(page: Any, console: tuple[Console, Path]) -> None:
    running, _ = console
    thread = _ask(page, "List the files to delete later")
    page.click("header nav button[data-page=sessions]")
    row = page.locator(f"#sessions tr[data-thread='{thread}']")
    row.wait_for(timeout=WAIT_MS)

    page.once("dialog", lambda dialog: dialog.accept())
    row.locator("button", has_text="Delete").click()

    row.wait_for(state="detached", timeout=WAIT_MS)
    headers = {"X-Jarvis-Token": running.token}
    assert httpx.get(f"{running.base}/api/threads/{thread}", headers=headers).status_code == 404
    assert thread not in run_process(["sessions", "list"], cwd=console[1]).stdout


def test_a_console_session_is_one_of_the_projects_sessions(
    page: Any, console: tuple[Console, Path]
) -> None:
    """The console's runs are kept in the project's session store: the CLI lists, shows and
    continues them."""
    running, ws = console
    thread = _ask(page, "List the files for the terminal")
    listed = run_process(["sessions", "list"], cwd=ws)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    row = next(line for line in listed.stdout.splitlines() if thread in line)
    assert "List the files for the terminal" in row and "completed" in row
    shown = run_process(["sessions", "show", thread], cwd=ws)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "The workspace holds data.csv." in shown.stdout
    db = ws / ".jarvis" / "sessions.sqlite"
    assert thread in {
        row[0] for row in sqlite3.connect(db).execute("SELECT thread_id FROM checkpoints")
    }
    # continued in the terminal, then read back by the console's API server
    more = run_process(["run", "--thread", thread, "-n", "Continue after the stop"], cwd=ws)
    assert more.returncode == 0, more.stdout + more.stderr
    assert "Continued where we were." in more.stdout
    state = running.api("GET", f"/threads/{thread}/state")
    said = [str(m.get("content")) for m in state["values"]["messages"]]
    assert "List the files for the terminal" in said[1] and "Continued where we were." in said[-1]


def test_a_remote_address_needs_the_explicit_flag(workspace: Path) -> None:
    done = run_process(["ui", "--host", "0.0.0.0", "--port", str(free_port())], cwd=workspace)

    assert done.returncode == 2
    assert "error: --host 0.0.0.0 lets other machines reach the console; add --allow-remote" in (
        done.stderr
    )


def test_a_broken_configuration_is_one_clear_line(workspace: Path) -> None:
    """The API server opens the project's session store, which the configuration names: a
    broken file stops ``jarvis ui`` before the server starts, with the file and line."""
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text("max_iterations: [oops\n")
    done = run_process(["ui", "--port", str(free_port())], cwd=workspace, timeout=60)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: " in done.stderr and "config.yaml:2: invalid YAML" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not (workspace / ".jarvis" / "ui" / "api.log").exists()  # no server was started


def test_attach_a_file_and_an_image(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    from PIL import Image, ImageDraw, ImageFont

    running, ws = console
    notes = tmp_path / "notes.txt"
    notes.write_text("meeting at noon\n")
    picture = Image.new("RGB", (900, 160), "white")
    ImageDraw.Draw(picture).text((20, 40), "TOTAL 270.00 EUR", fill="black",
                                 font=ImageFont.load_default(size=64))  # fmt: skip
    picture.save(tmp_path / "receipt.png")
    page.click("#chat-new")
    page.set_input_files("#chat-files", [str(notes), str(tmp_path / "receipt.png")])
    page.fill("#chat-task", "Read the attachments")
    page.click("#chat-send")

    page.wait_for_selector(".msg.answer:not(.live)", timeout=WAIT_MS)
    log = page.inner_text("#chat-log")
    assert "📎 notes.txt, receipt.png" in log
    assert "does not take images: sending the text tesseract read in them" in log  # scripted
    uploads = sorted(p.name for p in (ws / ".jarvis" / "uploads").iterdir())
    assert any(n.endswith("-notes.txt") for n in uploads) and any(
        n.endswith("-receipt.png") for n in uploads
    )
    thread = _session(page)
    task = running.api("GET", f"/threads/{thread}/state")["values"]["task"]
    assert "Attached files (in the workspace): .jarvis/uploads/" in task and "-notes.txt" in task
    assert "Text read from the image" in task and "TOTAL 270.00 EUR" in task


def test_a_sarif_report_and_a_verified_finding_with_its_evidence(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    from jarvis_graph.security import scan_path
    from jarvis_graph.security.report import to_json

    _, ws = console
    sarif = tmp_path / "scan.sarif"
    run_process(["sec", "scan", ".", "--format", "sarif", "-o", str(sarif)], cwd=ws)
    page.click("header nav button[data-page=security]")
    page.set_input_files("#report-file", str(sarif))
    page.wait_for_selector(".finding .hit", timeout=WAIT_MS)
    assert "copy.c:7" in page.inner_text(".finding") and "CWE-787" in page.inner_text(".finding")

    # a report whose finding carries a verdict, in the shape the verifier records it
    result = scan_path(ws, ("c",))
    (issue,) = [i for i in result.issues if i.line == 7]
    verdict = {
        "verdict": "confirmed",
        "reasoning": "argv[1] has any length and small holds 8 bytes, so strcpy overflows it",
        "grounded": True,
        "evidence": [{"location": "copy.c:6-7", "code": "strcpy(small, argv[1]);"}],
    }
    verified = tmp_path / "verified.json"
    verified.write_text(to_json(result, {issue.id: verdict}))
    page.set_input_files("#report-file", str(verified))
    page.select_option("#f-verdict", "confirmed")
    page.wait_for_function("document.querySelector('#report p').textContent === '1 of 2 findings'")
    shown = page.inner_text(".finding .verdict")
    assert "verdict: confirmed argv[1] has any length" in shown
    assert "evidence copy.c:6-7: strcpy(small, argv[1]);" in shown


def test_memory_by_tag_and_export(page: Any, console: tuple[Console, Path], tmp_path: Path) -> None:
    _, ws = console
    for fact, tag in (("Deploys happen on Tuesdays", "process"), ("Lunch is at noon", "office")):
        assert run_process(["memory", "save", fact, "--tag", tag], cwd=ws).returncode == 0
    page.click("header nav button[data-page=memory]")
    page.wait_for_selector("#memory-namespace option", state="attached", timeout=WAIT_MS)
    page.fill("#memory-tag", "process")
    page.click("#memory-form button[type=submit]")
    page.wait_for_selector(".memory", timeout=WAIT_MS)
    texts = [t.input_value() for t in page.locator(".memory textarea").all()]
    assert texts == ["Deploys happen on Tuesdays"]

    with page.expect_download() as download:
        page.click("#memory-export")
    exported = json.loads(Path(download.value.path()).read_text())
    assert [item["value"]["content"] for item in exported] == ["Deploys happen on Tuesdays"]
    assert download.value.suggested_filename == "jarvis-memory.json"


def test_attach_to_a_running_api_server_or_say_it_does_not_answer(
    console: tuple[Console, Path], workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running, _ = console
    api = re.search(r"LangGraph API: (\S+)", running.log.read_text()).group(1)
    # the server a console started takes only that console's token, which no one else has
    refused = run_process(["ui", "--api", api, "--port", str(free_port())], cwd=workspace)
    assert refused.returncode == 1
    assert "starting the LangGraph API server" not in refused.stdout  # it used the one given
    assert f"error: the LangGraph API server at {api} needs a token: set JARVIS_API_TOKEN" in (
        refused.stderr
    )
    monkeypatch.setenv("JARVIS_API_TOKEN", "a-guess")
    guessed = run_process(["ui", "--api", api, "--port", str(free_port())], cwd=workspace)
    assert guessed.returncode == 1
    assert "refused the token in JARVIS_API_TOKEN" in guessed.stderr
    monkeypatch.delenv("JARVIS_API_TOKEN")

    refused = run_process(["ui", "--api", f"http://127.0.0.1:{free_port()}"], cwd=workspace)
    assert refused.returncode == 1
    assert "error: the LangGraph API server at http://127.0.0.1:" in refused.stderr
    assert "did not answer within 10 s" in refused.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_api_server_it_started_ends_with_it(
    workspace: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    started = Console(workspace, tmp_path / "ui.log")
    api = re.search(r"LangGraph API: (\S+)", started.log.read_text()).group(1)
    assert httpx.get(f"{api}/ok").status_code == 200

    os.kill(started.proc.pid, sig)  # the console process only, as a service manager would
    started.proc.wait(timeout=30)

    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{api}/ok", timeout=1)
        except httpx.HTTPError:
            break  # the server is gone
        assert time.monotonic() < deadline, f"{api} still answers after the console got {sig!r}"
        time.sleep(0.3)


def test_the_tree_of_sub_runs_shows_plan_steps_sub_agents_and_chains(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    delegated = _ask(page, "Delegate the listing to a helper")
    planned = _ask(page, "How many rows has data.csv, and which C files are there?", "planner")

    page.click("header nav button[data-page=sessions]")
    page.locator(f"#sessions tr[data-thread='{delegated}'] button", has_text="Tree").click()
    tree = page.wait_for_selector("#tree", timeout=WAIT_MS).inner_text()
    task = "SUB-TASK: list the files with the quick chain"
    assert f"└ sub-agent · completed · {task} → The chain listed 3 files." in tree
    assert (
        "    └ chain quick · completed · one succeeded, two succeeded" in tree
    )  # inside the sub-agent
    page.screenshot(path=str(tmp_path / "tree.png"), full_page=True)

    page.locator(f"#sessions tr[data-thread='{planned}'] button", has_text="Tree").click()
    page.wait_for_function("document.querySelector('#tree').textContent.includes('step rows')")
    tree = page.inner_text("#tree")
    assert (
        "└ step rows · completed · Count the data rows of data.csv → data.csv has 1 data row."
        in tree
    )
    assert (
        "└ step files · completed · Name the C files of the workspace → copy.c is the only C file."
        in tree
    )
