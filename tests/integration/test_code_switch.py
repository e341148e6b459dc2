"""`jarvis run` at the top of a git repository offers the code agent (a real terminal)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.cli import run_process, write_script
from tests.support.terminal import Terminal

QUESTION = "is a git repository. Use the code agent (exact edits, each committed)?"


def _repo(folder: Path) -> Path:
    for command in (["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@e"]):
        subprocess.run(["git", *command], cwd=folder, check=True)
    (folder / "app.py").write_text("print('hi')\n")
    subprocess.run(["git", "add", "."], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=folder, check=True)
    return folder


def _log(folder: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=folder, capture_output=True, text=True)
    return out.stdout.splitlines()


def _script(tmp_path: Path) -> Path:
    return write_script(tmp_path / "s.yaml", [{"text": "Looked at it. !!!COMPLETE!!!"}])


def test_yes_switches_to_the_code_agent_which_offers_to_commit_the_dirty_tree(
    workspace: Path, tmp_path: Path
) -> None:
    _repo(workspace)
    (workspace / "notes.md").write_text("draft\n")
    args = ["run", "tidy app.py", "--platform", "scripted", "--script", str(_script(tmp_path))]
    term = Terminal(args, workspace)
    term.expect(QUESTION + " It has 1 uncommitted change; the code agent offers to commit")
    term.type("y")
    term.expect("the work tree has uncommitted changes (notes.md); commit them first? [Y/n]")
    term.type("y")
    term.expect("Looked at it.")
    assert term.exit_code() == 0
    assert len(_log(workspace)) == 2  # the dirty tree was committed by the code agent


def test_enter_keeps_the_jarvis_agent(workspace: Path, tmp_path: Path) -> None:
    _repo(workspace)
    args = ["run", "tidy app.py", "--platform", "scripted", "--script", str(_script(tmp_path))]
    term = Terminal(args, workspace)
    term.expect(QUESTION + " [y/N]")
    term.type("")
    term.expect("Looked at it.")
    assert term.exit_code() == 0
    assert "commit them first" not in term.screen and len(_log(workspace)) == 1


def test_no_question_off_a_terminal_below_the_top_or_when_turned_off(
    workspace: Path, tmp_path: Path
) -> None:
    _repo(workspace)
    script = str(_script(tmp_path))
    done = run_process(["run", "x", "-n", "--platform", "scripted", "--script", script], workspace)
    assert done.returncode == 0 and QUESTION not in done.stdout
    (workspace / "sub").mkdir()
    term = Terminal(["run", "x", "--platform", "scripted", "--script", script], workspace / "sub")
    term.expect("Looked at it.")
    assert term.exit_code() == 0 and QUESTION not in term.screen
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text("code_agent_switch: off\n")
    term = Terminal(["run", "x", "--platform", "scripted", "--script", script], workspace)
    term.expect("Looked at it.")
    assert term.exit_code() == 0 and QUESTION not in term.screen


def test_auto_switches_without_asking(workspace: Path, tmp_path: Path) -> None:
    _repo(workspace)
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("code_agent_switch: auto\n")
    script = str(_script(tmp_path))
    done = run_process(["run", "x", "-n", "--platform", "scripted", "--script", script], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is a git repository: the code agent runs" in done.stdout
    assert "Looked at it." in done.stdout


def test_chat_switches_before_its_picker_and_the_code_agent_asks_what_to_change(
    workspace: Path, tmp_path: Path
) -> None:
    _repo(workspace)
    term = Terminal(
        ["chat", "--platform", "scripted", "--script", str(_script(tmp_path))], workspace
    )
    term.expect(QUESTION + " [y/N]")
    term.type("y")
    term.expect("what should be changed?")
    term.type("tidy app.py")
    term.expect("Looked at it.")
    assert term.exit_code() == 0
    assert "Start with" not in term.screen
