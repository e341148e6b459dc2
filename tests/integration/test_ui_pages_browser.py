"""The console's pages as a user first meets them (a real browser over ``jarvis ui``).

The project's sessions made by ``jarvis run`` on the Sessions page, the memory shown when
its page opens, answers written in Markdown (and HTML from the model kept as text), and
the live line of a run in progress. One console for the module over a scripted model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_ui_browser import WAIT_MS, Console, _send, scripted_console
from tests.support.browser import chromium, console_page
from tests.support.cli import run_process

pytestmark = pytest.mark.slow

HOSTILE = (
    "Found **two** files:\n\n"
    "- `data.csv`\n- `notes.md`\n\n"
    "```python\nprint('hi')\n```\n\n"
    "<img src=x onerror=\"window.ran = 'img'\"> "
    "<script>window.ran = 'script'</script> "
    "[click](javascript:window.ran='link') ![seen](http://127.0.0.1:9/pixel.png)"
)
SCRIPT = {
    "turns": [
        {"when": "Summarize in Markdown", "text": f"{HOSTILE} !!!COMPLETE!!!"},
        {"when": "Think slowly", "delay": 120, "text": "Too late. !!!COMPLETE!!!"},
        {"when": "Count the files", "tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
        {"when": "Count the files", "text": "One file. !!!COMPLETE!!!"},
    ]
}

RECORD_PROGRESS = """
window.progress = [];
const line = document.querySelector("#chat-progress");
new MutationObserver(() => window.progress.push(line.textContent)).observe(line, {
  childList: true, subtree: true, characterData: true,
});
"""


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Console, Path]]:
    home = tmp_path_factory.mktemp("ui-pages")
    env = pytest.MonkeyPatch()  # module scope: monkeypatch itself is per test
    env.setenv("HOME", str(home))
    env.setenv("JARVIS_HOME", str(home / ".jarvis"))
    ws = home / "ws"
    (ws / ".jarvis").mkdir(parents=True)
    (ws / "data.csv").write_text("a,b\n1,2\n")
    try:
        with scripted_console(home, ws, SCRIPT) as running:
            yield running, ws
    finally:
        env.undo()


@pytest.fixture
def page(console: tuple[Console, Path]) -> Iterator[Any]:
    with chromium() as browser, console_page(browser, console[0].url, WAIT_MS) as opened:
        yield opened


def test_the_sessions_page_lists_the_sessions_jarvis_run_made(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    """The page lists the project's session store, not only the API server's threads."""
    _, ws = console
    done = run_process(["run", "-n", "Count the files from the terminal"], cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr
    thread = re.search(r"session (\S+) · workspace", done.stdout).group(1)

    page.click("header nav button[data-page=sessions]")
    row = page.locator(f"#sessions tr[data-thread='{thread}']")
    row.wait_for(timeout=WAIT_MS)
    assert "Count the files from the terminal" in row.inner_text()
    assert "completed" in row.inner_text()
    page.screenshot(path=str(tmp_path / "sessions.png"), full_page=True)
    row.locator("button", has_text="Tree").click()
    tree = page.wait_for_selector("#tree", timeout=WAIT_MS).inner_text()
    assert tree.startswith("completed · Count the files from the terminal")

    row.locator("button", has_text="Open").click()
    page.wait_for_selector(".msg.answer", timeout=WAIT_MS)
    log = page.inner_text("#chat-log")
    assert "Count the files from the terminal" in log and "One file." in log
    assert '⚙ list_files {"path":"."} ✓' in log
    status = page.inner_text("#chat-status")
    assert status.startswith(f"completed · session {thread}")
    assert f'jarvis run --thread {thread} "…"' in status  # where it continues


def test_the_memory_page_shows_the_entries_when_it_opens(
    page: Any, console: tuple[Console, Path]
) -> None:
    _, ws = console
    saved = run_process(["memory", "save", "The build runs on Fridays", "--tag", "ci"], cwd=ws)
    assert saved.returncode == 0, saved.stderr

    page.click("header nav button[data-page=memory]")  # no search typed or pressed
    page.wait_for_selector(".memory", timeout=WAIT_MS)
    texts = [t.input_value() for t in page.locator(".memory textarea").all()]
    assert "The build runs on Fridays" in texts
    assert "ci" in page.inner_text(".memory")


def test_an_answer_shows_its_markdown_and_never_runs_html_from_the_model(
    page: Any, console: tuple[Console, Path], tmp_path: Path
) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    _send(page, "Summarize in Markdown what you found")

    answer = page.wait_for_selector(".msg.answer.markdown", timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / "markdown.png"), full_page=True)
    assert page.inner_text(".msg.answer strong") == "two"
    assert page.locator(".msg.answer li").all_inner_texts() == ["data.csv", "notes.md"]
    assert page.inner_text(".msg.answer pre code").strip() == "print('hi')"
    # the model's HTML is text on the page: nothing of it ran, loaded or became an element
    text = answer.inner_text()
    assert "<img src=x onerror=\"window.ran = 'img'\">" in text
    assert "<script>window.ran = 'script'</script>" in text
    assert page.locator(".msg.answer img, .msg.answer script").count() == 0
    assert page.locator(".msg.answer a[href^=javascript]").count() == 0
    assert page.evaluate("window.ran") is None
    assert not any("pixel.png" in url or url.endswith("/x") for url in requested), requested


def test_a_run_shows_a_live_line_with_its_step_and_time(
    page: Any, console: tuple[Console, Path]
) -> None:
    page.evaluate(RECORD_PROGRESS)
    _send(page, "Count the files of the workspace")
    page.wait_for_selector(".msg.answer", timeout=WAIT_MS)
    seen = page.evaluate("window.progress")
    assert any(line.startswith("running list_files · ") for line in seen), seen
    assert any(line.startswith("thinking… step 2 · ") for line in seen), seen
    page.wait_for_selector("#chat-progress", state="hidden", timeout=WAIT_MS)  # run over

    _send(page, "Think slowly about it")  # a model call of two minutes
    page.wait_for_selector("#chat-progress:not([hidden])", timeout=WAIT_MS)
    # the time on the step goes on while nothing else arrives
    page.wait_for_function(
        "/^thinking… step 1 · [1-9]\\d*s/.test(document.querySelector('#chat-progress').innerText)",
        timeout=WAIT_MS,
    )
    page.click("#chat-stop")
    page.wait_for_selector("#chat-progress", state="hidden", timeout=WAIT_MS)
    assert "Too late" not in page.inner_text("#chat-log")
