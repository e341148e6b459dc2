"""The picker at the start of `jarvis chat`, in a real terminal: numbered and through fzf."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from tests.support.cli import write_script
from tests.support.terminal import Terminal

TASKS = """\
tasks:
  - name: count
    description: Count the lines of a file
    task: How many lines does {file} have?
"""
NO_FZF = {"PATH": str(Path(sys.executable).parent)}
"""A PATH with Python and no fzf: the numbered picker."""


def _chat(workspace: Path, script: Path, env: dict[str, str] | None = None) -> Terminal:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "tasks.yaml").write_text(TASKS)
    args = ["chat", "--platform", "scripted", "--script", str(script)]
    return Terminal(args, workspace, env)


def test_a_predefined_task_is_filled_given_details_and_sent(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "only the non-empty ones", "text": "2 non-empty lines. !!!COMPLETE!!!"},
            {"text": "the details did not arrive !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    term = _chat(workspace, script, NO_FZF)
    term.expect("Start with (Enter: the Jarvis agent and a task you type):")
    listing = term.expect(r"\n\s+(\d+)\s+count\s+task\s+Count the lines of a file", regex=True)
    assert re.search(r"\n +1 +jarvis +agent +The Jarvis agent", term.screen)
    assert re.search(r"\n +\d+ +reviewer +role +Reviews code", term.screen)
    term.expect("number: ")
    term.type(listing.split()[0])
    term.expect("file: ")
    term.type("notes.txt")
    term.expect("How many lines does notes.txt have?")
    term.expect("add details (Enter for none): ")
    term.type("count only the non-empty ones")
    term.expect("2 non-empty lines.")
    term.expect("you> ")
    term.type("/exit")
    assert term.exit_code() == 0


def test_a_role_is_chosen_by_name_and_its_instructions_are_in_the_prompt(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "You review code", "text": "A reviewer answers. !!!COMPLETE!!!"},
            {"text": "No role. !!!COMPLETE!!!"},
        ],
    )
    term = _chat(workspace, script, NO_FZF)
    term.expect("number: ")
    term.type("reviewr")
    term.expect("choose 1 to 8, a name, or Enter")
    term.type("reviewer")
    term.expect("role reviewer")
    term.expect("you> ")
    term.type("look at app.py")
    term.expect("A reviewer answers.")
    term.type("/exit")
    assert term.exit_code() == 0


def test_enter_keeps_the_jarvis_agent(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", [{"text": "Plain Jarvis. !!!COMPLETE!!!"}])
    term = _chat(workspace, script, NO_FZF)
    term.expect("number: ")
    term.type("")
    term.expect("you> ")
    term.type("hello")
    term.expect("Plain Jarvis.")
    term.type("/exit")
    assert term.exit_code() == 0


def test_fzf_picks_when_it_is_installed(workspace: Path, tmp_path: Path) -> None:
    assert shutil.which("fzf"), "fzf is installed by .ci/run (apt-get install fzf)"
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "You run tests", "text": "The tester answers. !!!COMPLETE!!!"},
            {"text": "No role. !!!COMPLETE!!!"},
        ],
    )
    term = _chat(workspace, script, {"PATH": os.environ["PATH"]})
    term.expect("start with>")
    term.child.send("tester")
    term.expect("Runs the test suite")
    term.child.send("\r")
    term.expect("role tester")
    term.expect("you> ")
    term.type("run them")
    term.expect("The tester answers.")
    term.type("/exit")
    assert term.exit_code() == 0


def test_the_picker_can_be_turned_off(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", [{"text": "Straight in. !!!COMPLETE!!!"}])
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("chat_picker: false\n")
    term = _chat(workspace, script, NO_FZF)
    term.expect("you> ")
    assert "Start with" not in term.screen
    term.type("hi")
    term.expect("Straight in.")
    term.type("/exit")
    assert term.exit_code() == 0
