"""First-hour frictions of the CLI: unknown session ids and runs that cannot start.

Each scenario checks what a new user sees (exit code, message) and what is left behind:
a run refused before its first step writes no thread into ``.jarvis/sessions.sqlite``.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import invoke, write_script
from tests.support.git import make_repo, set_identity

DONE = [{"text": "done !!!COMPLETE!!!"}]


def threads(ws: Path) -> list[str]:
    """The session ids stored in the project's session DB (none when it does not exist)."""
    db = ws / ".jarvis" / "sessions.sqlite"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return sorted(r[0] for r in rows)


def scripted(ws: Path, script: Path, *extra: str) -> list[str]:
    return ["-w", str(ws), "--platform", "scripted", "--script", str(script), *extra]


def new_session(ws: Path, tmp_path: Path) -> str:
    """Run a task to completion and return its generated session id."""
    script = write_script(tmp_path / "done.yaml", DONE)
    result = invoke(["run", *scripted(ws, script, "-n"), "say done"])
    assert result.exit_code == 0, result.output
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", result.output)
    assert match, result.output
    return match.group(1)


def typo(thread_id: str) -> str:
    """The id with its last character changed, as a user mistypes it."""
    return thread_id[:-1] + ("0" if thread_id[-1] != "0" else "1")


@pytest.fixture
def two_sessions(workspace: Path, tmp_path: Path) -> tuple[str, str]:
    return new_session(workspace, tmp_path), new_session(workspace, tmp_path)


def assert_unknown(output: str, wrong: str, real: str) -> None:
    flat = " ".join(output.split())
    assert f"no session '{wrong}'" in flat, output
    assert real in flat.split("closest:", 1)[-1], output  # the id the user meant is offered


def test_run_with_a_mistyped_thread_fails_and_lists_the_closest_ids(
    workspace: Path, tmp_path: Path, two_sessions: tuple[str, str]
) -> None:
    script = write_script(tmp_path / "s.yaml", DONE)
    wrong = typo(two_sessions[0])
    result = invoke(["run", *scripted(workspace, script, "-n", "--thread", wrong), "go on"])
    assert result.exit_code == 1, result.output
    assert_unknown(result.output, wrong, two_sessions[0])
    assert threads(workspace) == sorted(two_sessions)  # no new session was started


def test_chat_with_a_mistyped_thread_fails_before_the_prompt(
    workspace: Path, tmp_path: Path, two_sessions: tuple[str, str]
) -> None:
    script = write_script(tmp_path / "s.yaml", DONE)
    wrong = typo(two_sessions[1])
    result = invoke(["chat", *scripted(workspace, script, "--thread", wrong)], input="hello\n")
    assert result.exit_code == 1, result.output
    assert_unknown(result.output, wrong, two_sessions[1])
    assert "you>" not in result.output
    assert threads(workspace) == sorted(two_sessions)


def test_code_with_a_mistyped_thread_fails_before_touching_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    repo = make_repo(tmp_path / "repo", {"app.py": "print('hi')\n"})
    real = new_session(repo, tmp_path)
    script = write_script(tmp_path / "s.yaml", DONE)
    args = ["code", *scripted(repo, script, "-n", "-r", "add a comment", "--thread", typo(real))]
    result = invoke(args)
    assert result.exit_code == 1, result.output
    assert_unknown(result.output, typo(real), real)
    assert threads(repo) == [real]


@pytest.mark.parametrize("command", ["show", "resume", "fork", "delete"])
def test_sessions_commands_with_a_mistyped_id_list_the_closest_ids(
    workspace: Path, two_sessions: tuple[str, str], command: str
) -> None:
    wrong = typo(two_sessions[0])
    result = invoke(["sessions", command, wrong, "-w", str(workspace)])
    assert result.exit_code == 1, result.output
    assert_unknown(result.output, wrong, two_sessions[0])
    assert threads(workspace) == sorted(two_sessions)  # fork made no copy, delete kept both


def test_new_thread_names_a_session_and_refuses_an_existing_id(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "s.yaml", [*DONE, {"text": "more done !!!COMPLETE!!!"}])
    first = invoke(["run", *scripted(workspace, script, "-n", "--new-thread", "fix-login"), "go"])
    assert first.exit_code == 0, first.output
    assert threads(workspace) == ["fix-login"]
    again = invoke(["run", *scripted(workspace, script, "-n", "--new-thread", "fix-login"), "go"])
    assert again.exit_code == 1, again.output
    assert "session 'fix-login' already exists" in again.output
    more = invoke(["run", *scripted(workspace, script, "-n", "--thread", "fix-login"), "more"])
    assert more.exit_code == 0, more.output
    assert threads(workspace) == ["fix-login"]


@pytest.mark.parametrize("task", ["", "   \n\t "])
def test_an_empty_or_blank_task_is_a_usage_error_and_starts_no_session(
    workspace: Path, tmp_path: Path, task: str
) -> None:
    script = write_script(tmp_path / "s.yaml", DONE)
    result = invoke(["run", *scripted(workspace, script, "-n"), task])
    assert result.exit_code == 2, result.output
    assert "the task is empty" in result.output
    assert "ValueError" not in result.output and "resume" not in result.output
    assert threads(workspace) == []


def test_an_unknown_platform_fails_before_the_session_is_created(workspace: Path) -> None:
    result = invoke(["run", "-w", str(workspace), "-n", "--platform", "openaii", "hello"])
    assert result.exit_code == 1, result.output
    assert "unknown platform 'openaii'" in result.output
    assert "resume" not in result.output
    assert threads(workspace) == []


def test_an_unknown_tool_group_fails_before_the_session_is_created(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "s.yaml", DONE)
    result = invoke(["run", *scripted(workspace, script, "-n", "-g", "no-such-group"), "hello"])
    assert result.exit_code == 1, result.output
    assert "no-such-group" in result.output
    assert "resume" not in result.output
    assert threads(workspace) == []


def test_a_missing_script_file_fails_before_the_session_is_created(
    workspace: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.yaml"
    result = invoke(["run", *scripted(workspace, missing, "-n"), "hello"])
    assert result.exit_code == 1, result.output
    assert "nope.yaml" in result.output and "not found" in result.output
    assert "resume" not in result.output
    assert threads(workspace) == []


def test_a_broken_script_resumed_session_is_refused_without_a_new_step(
    workspace: Path, tmp_path: Path
) -> None:
    """Continuing an existing session with a model that cannot start adds no checkpoint."""
    real = new_session(workspace, tmp_path)
    db = workspace / ".jarvis" / "sessions.sqlite"
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    args = scripted(workspace, tmp_path / "gone.yaml", "-n", "--thread", real)
    result = invoke(["run", *args, "more"])
    assert result.exit_code == 1, result.output
    assert "gone.yaml" in result.output
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == before
