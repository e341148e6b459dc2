"""Checked answers in the web console (a real browser): one answer, shown once it passed.

``jarvis ui`` over a workspace whose config turns the answer check on (the rules, and cited
answers) for a scripted model that drafts a wrong total before it runs the script. What
the page ever shows is recorded as it changes (a MutationObserver), so a draft shown for a
moment and removed is caught.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_ui_browser import WAIT_MS, Console, scripted_console
from tests.support.answers import declare
from tests.support.browser import chromium, console_page

pytestmark = pytest.mark.slow

TASK = "What total does report.py print?"
DRAFT = "The total printed by report.py is 260.00."
DECLARE = declare()
TURNS = [
    {"tool_calls": [DECLARE]},
    {"tool_calls": [{"name": "read_code", "args": {"path": "report.py"}}]},
    {"text": DRAFT},  # before the script ran: 260.00 is in no result
    {"tool_calls": [{"name": "execute_script", "args": {"script": "python3 report.py"}}]},
    {"text": "The total printed by report.py is 270."},
]

RULES_TURNS = [
    {"text": f"{DRAFT} !!!COMPLETE!!!"},  # before the script ran
    {"tool_calls": [{"name": "execute_script", "args": {"script": "python3 report.py"}}]},
    {"text": "The total printed by report.py is 270. !!!COMPLETE!!!"},
]
MODES = {"cited": TURNS, "rules": RULES_TURNS}

RECORD = """
window.seen = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    for (const node of change.addedNodes) window.seen.push(node.textContent || "");
    if (change.type === "characterData" || change.type === "childList") {
      window.seen.push(change.target.textContent || "");
    }
  }
}).observe(document.querySelector("#chat-log"), {
  childList: true, subtree: true, characterData: true,
});
"""


@pytest.fixture(scope="module", params=sorted(MODES))
def console(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Console, str]]:
    mode = request.param
    home = tmp_path_factory.mktemp(f"ui-answers-{mode}")
    env = pytest.MonkeyPatch()  # module scope: monkeypatch itself is per test
    env.setenv("HOME", str(home))
    env.setenv("JARVIS_HOME", str(home / ".jarvis"))
    ws = home / "ws"
    (ws / ".jarvis").mkdir(parents=True)
    (ws / "report.py").write_text("rows = [90, 80, 100]\nprint(f'total {sum(rows)}')\n")
    script = {"turns": MODES[mode]}
    try:
        with scripted_console(home, ws, script, answer_check=mode, confirm="never") as running:
            yield running, mode
    finally:
        env.undo()


@pytest.fixture
def page(console: tuple[Console, str]) -> Iterator[Any]:
    with chromium() as browser, console_page(browser, console[0].url, WAIT_MS) as opened:
        yield opened


def test_a_rejected_draft_is_one_dim_line_and_the_answer_shows_once_with_its_source(
    page: Any, console: tuple[Console, str], tmp_path: Path
) -> None:
    page.evaluate(RECORD)
    page.click("#chat-new")
    page.fill("#chat-task", TASK)
    page.click("#chat-send")
    page.wait_for_selector(".msg.answer", timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / "answers.png"))
    seen = page.evaluate("window.seen")
    assert not any(DRAFT in text for text in seen), seen  # never shown, not for a moment
    rejected = page.locator(".msg.draft-rejected").all_inner_texts()
    assert len(rejected) == 1 and "260" in rejected[0], rejected
    assert rejected[0].startswith("draft rejected: "), rejected
    answers = page.locator(".msg.answer").all_inner_texts()
    assert [a.replace(" !!!COMPLETE!!!", "") for a in answers] == [
        "The total printed by report.py is 270."
    ]
    sources = page.locator(".msg.source").all_inner_texts()
    if console[1] == "cited":
        assert sources == ["↳ from execute_script: 'total 270'"], sources
    else:  # the rules cite nothing
        assert sources == [], sources
    assert page.inner_text("#chat-status").startswith("completed")
