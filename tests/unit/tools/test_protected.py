"""is_protected_path: which files the agent's file tools may not write without a separate yes."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.config import Settings, jarvis_home
from jarvis_graph.tools.code_tools import edit_file, write_file
from jarvis_graph.tools.protected import is_protected_path, protected_targets


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".jarvis" / "reports").mkdir(parents=True)
    (root / ".git" / "hooks").mkdir(parents=True)
    return root.resolve()


@pytest.mark.parametrize(
    "path",
    [
        ".jarvis/config.yaml",
        ".jarvis/mcp.json",
        ".jarvis/tools/new_tool.py",
        "./src/../.jarvis/config.yaml",
        ".jarvis/reports/../config.yaml",
        ".git/hooks/pre-commit",
        ".git/config",
    ],
)
def test_jarvis_and_git_files_of_the_workspace_are_protected(ws: Path, path: str) -> None:
    assert is_protected_path(path, ws, Settings())


@pytest.mark.parametrize("path", ["src/app.py", ".jarvis/reports/todo.md", "jarvis/config.yaml"])
def test_project_files_and_report_outputs_are_not(ws: Path, path: str) -> None:
    assert not is_protected_path(path, ws, Settings())


def test_the_jarvis_home_and_configured_tool_folders_are_protected(
    ws: Path, tmp_path: Path
) -> None:
    tools = tmp_path / "my_tools"
    settings = Settings(tool_load_dirs=[str(tools)], methodology_dirs=["docs/methods"])
    assert is_protected_path(jarvis_home() / "config.yaml", ws, settings)
    assert is_protected_path(tools / "t.py", ws, settings)
    assert is_protected_path("docs/methods/release.json", ws, settings)
    assert not is_protected_path("docs/readme.md", ws, settings)


def test_links_are_followed_and_a_linked_reports_folder_lends_no_exemption(ws: Path) -> None:
    (ws / "innocent").symlink_to(ws / ".jarvis")
    assert is_protected_path("innocent/config.yaml", ws, Settings())
    (ws / ".jarvis" / "reports").rmdir()
    (ws / ".jarvis" / "reports").symlink_to(ws / ".jarvis")
    assert is_protected_path(".jarvis/reports/config.yaml", ws, Settings())


def test_the_targets_come_from_each_tools_write_targets(ws: Path) -> None:
    edits = {
        "files": [
            {"path": "src/a.py", "diffs": []},
            {"path": ".jarvis/mcp.json", "diffs": []},
        ]
    }
    assert protected_targets(edit_file, edits, ws, Settings()) == [".jarvis/mcp.json"]
    args = {"path": ".jarvis/config.yaml", "content": ""}
    assert protected_targets(write_file, args, ws, Settings()) == [".jarvis/config.yaml"]
    assert protected_targets(write_file, {"content": "no path"}, ws, Settings()) == []
