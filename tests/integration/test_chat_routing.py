"""`jarvis chat` with thread_routing: each message goes to the open session it belongs to."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_process, write_script
from tests.support.terminal import Terminal

REPORT = "Fix the bug in report.py - the total is wrong when data.csv has an empty amount"
RELEASE = "Write the release notes for version 2.0 from the git log"


def _sessions(workspace: Path, script: Path) -> None:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text("thread_routing: true\nchat_picker: false\n")
    for name, task in (("report-fix", REPORT), ("release-notes", RELEASE)):
        args = ["run", task, "-n", "--new-thread", name, "--platform", "scripted"]
        done = run_process([*args, "--script", str(script)], workspace)
        assert done.returncode == 0, done.stdout + done.stderr


def test_chat_threads_lists_the_open_sessions(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", [{"text": "Noted. !!!COMPLETE!!!"}])
    _sessions(workspace, script)
    done = run_process(["chat", "--threads"], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert [(r[0], r[2]) for r in rows] == [("release-notes", RELEASE), ("report-fix", REPORT)]


def test_a_message_goes_to_its_session_with_one_key_to_override(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "s.yaml", [{"text": "Noted. !!!COMPLETE!!!"}] * 3)
    _sessions(workspace, script)
    term = Terminal(["chat", "--platform", "scripted", "--script", str(script)], workspace)
    term.expect("you> ")
    term.type("it still crashes when the amount column is blank")
    term.expect("→ session report-fix · Fix the bug in report.py")
    term.expect("Enter: send there · k: keep this session · n: new session")
    term.child.send("\r")
    term.expect("Noted.")
    term.expect("you> ")
    term.type("mention the new --verbose flag in the notes")
    term.expect("→ session release-notes · Write the release notes")
    term.child.send("k")  # keep report-fix
    term.expect("Noted.")
    term.expect("you> ")
    term.type("/exit")
    assert term.exit_code() == 0
    shown = run_process(["sessions", "show", "report-fix"], workspace).stdout
    assert "it still crashes when the amount column is blank" in shown
    assert "mention the new --verbose flag" in shown  # the override kept it here
    other = run_process(["sessions", "show", "release-notes"], workspace).stdout
    assert "amount column" not in other and "--verbose" not in other
