"""What a user reads in a terminal: one answer, the one that passed its check, with sources.

``jarvis run`` in a real pseudo-terminal with the scripted platform. A draft the check
rejects is at most one dim "draft rejected" line; the answer that passes is printed once,
its sources below it. Without a check, the model's answer is printed once, too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.support.answers import declare
from tests.support.cli import write_script
from tests.support.terminal import Terminal

RUN = "run1"
TASK = "What total does report.py print?"
DECLARE = declare()


def final(text: str) -> dict[str, Any]:
    return {"text": text}


def run_in_pty(ws: Path, script: Path, task: str) -> tuple[int, str]:
    args = ["run", "--platform", "scripted", "--script", str(script), "--confirm", "never"]
    term = Terminal([*args, task], ws)
    code = term.exit_code()
    return code, term.screen


def test_a_rejected_draft_is_one_dim_line_and_the_answer_is_shown_once_with_its_sources(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump({"answer_check": "cited"}))
    (workspace / "report.py").write_text("rows = [90, 80, 100]\nprint(f'total {sum(rows)}')\n")
    run = {"name": "execute_script", "id": RUN, "args": {"script": "python3 report.py"}}
    read = {"name": "read_code", "id": "read1", "args": {"path": "report.py"}}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [DECLARE]},
            {"tool_calls": [read]},
            # a draft before the script ran: 260.00 is in no result
            final("The total printed by report.py is 260.00."),
            {"tool_calls": [run]},
            final("The total printed by report.py is 270."),
        ],
    )
    code, screen = run_in_pty(workspace, script, TASK)
    assert code == 0, screen
    assert "■ completed" in screen
    assert "report.py is 260.00" not in screen, screen  # the draft itself is never shown
    assert screen.count("draft rejected: 260.00 appears in no result") == 1, screen
    assert screen.count("The total printed by report.py is 270.") == 1, screen
    answer_at = screen.index("The total printed by report.py is 270.")
    assert screen.index("↳ from execute_script: 'total 270'") > answer_at, screen


def test_without_a_check_the_answer_is_shown_once(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump({"answer_check": "off"}))
    script = write_script(tmp_path / "s.yaml", [{"text": "All done: 42. !!!COMPLETE!!!"}])
    code, screen = run_in_pty(workspace, script, "say 42")
    assert code == 0, screen
    assert screen.count("All done: 42.") == 1, screen
    assert "COMPLETE" not in screen, screen


def test_with_the_rules_a_rejected_draft_names_its_first_problem(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump({"answer_check": "rules"}))
    (workspace / "report.py").write_text("rows = [90, 80, 100]\nprint(f'total {sum(rows)}')\n")
    run = {"name": "execute_script", "args": {"script": "python3 report.py"}}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"text": "The total printed by report.py is 123.45. !!!COMPLETE!!!"},
            {"tool_calls": [run]},
            {"text": "The total printed by report.py is 270. !!!COMPLETE!!!"},
        ],
    )
    code, screen = run_in_pty(workspace, script, TASK)
    assert code == 0, screen
    assert "report.py is 123.45" not in screen, screen
    rejected = [line for line in screen.splitlines() if line.startswith("draft rejected:")]
    assert len(rejected) == 1 and "123.45" in rejected[0], screen
    assert screen.count("The total printed by report.py is 270.") == 1, screen
