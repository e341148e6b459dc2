"""``jarvis code`` interactively: the questions about git and commits, answered on stdin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import invoke, write_script
from tests.support.git import git, log, make_repo, set_identity

MARKER = "!!!COMPLETE!!!"


def edit(path: str, search: str, replace: str) -> dict[str, Any]:
    diffs = [{"search": search, "replace": replace}]
    return {
        "tool_calls": [{"name": "edit_file", "args": {"files": [{"path": path, "diffs": diffs}]}}]
    }


def code_args(repo: Path, script: Path, requirement: str, *more: str) -> list[str]:
    """``jarvis code`` in ``repo`` driven by ``script``."""
    return [
        "code",
        *more,
        "-r",
        requirement,
        "-w",
        str(repo),
        "--platform",
        "scripted",
        "--script",
        str(script),
    ]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    set_identity(monkeypatch)
    return make_repo(
        tmp_path / "r", {".gitignore": ".jarvis/\n", "a.txt": "one\n", "b.txt": "two\n"}
    )


def test_each_commit_is_confirmed_and_a_declined_one_stays_in_the_tree(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "notes.txt").write_text("user's own work\n")  # dirty before the run
    script = write_script(
        tmp_path / "s.yaml",
        [edit("a.txt", "one", "1"), edit("b.txt", "two", "2"), {"text": f"done {MARKER}"}],
    )
    args = code_args(repo, script, "number the files", "-y")
    # keep notes.txt out; commit a.txt; decline b.txt
    result = invoke(args, input="n\ny\nn\n")
    assert result.exit_code == 0, result.output
    assert "commit them first? [Y/n]" in result.output
    assert "commit as 'jarvis: edit_file: a.txt (+1 -1)'? [Y/n]" in result.output
    assert "not committed: the change stays in the work tree" in result.output
    assert log(repo) == ["jarvis: edit_file: a.txt (+1 -1)", "init"]
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [" M b.txt", "?? notes.txt"]


def test_declining_git_init_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_identity(monkeypatch)  # git could commit: the question is asked
    ws = tmp_path / "plain"
    ws.mkdir()
    script = write_script(tmp_path / "s.yaml", [{"text": "done"}])  # a model that can start
    result = invoke(
        ["code", "-r", "x", "-w", str(ws), "--platform", "scripted", "--script", str(script)],
        input="n\n",
    )
    assert result.exit_code == 1
    assert "jarvis code commits every edit and needs a git repository" in result.output
    assert not (ws / ".git").exists()


def test_edits_are_confirmed_as_risky_tools_then_committed(repo: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml", [edit("a.txt", "one", "1"), {"text": f"done {MARKER}"}]
    )
    args = code_args(repo, script, "number a")
    result = invoke(args, input="a\ny\n")  # approve the edit_file call, then the commit
    assert result.exit_code == 0, result.output
    assert "confirm edit_file" in result.output
    assert log(repo) == ["jarvis: edit_file: a.txt (+1 -1)", "init"]


def test_a_rejected_edit_changes_nothing(repo: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml", [edit("a.txt", "one", "1"), {"text": f"ok {MARKER}"}]
    )
    args = code_args(repo, script, "number a")
    result = invoke(args, input="r\nnot now\n")
    assert result.exit_code == 0, result.output
    assert (repo / "a.txt").read_text() == "one\n" and log(repo) == ["init"]
