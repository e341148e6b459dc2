from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from jarvis_graph.config import ConfigError, Settings
from jarvis_graph.context import JarvisContext
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools.base import ToolFailure
from jarvis_graph.tools.builtin import BUILTIN_TOOLS
from jarvis_graph.tools.registry import build_registry, filter_group
from jarvis_graph.tools.tool_repo import central_repo_dir
from jarvis_graph.tools.user_tools import load_tool_dirs

LANGCHAIN_TOOL = '''
from langchain_core.tools import tool

@tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()
'''

JARVIS_TOOLS = """
class WordCount:
    name = "word_count"
    description = "Count the words of a text."
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    risky = False

    def execute(self, args):
        return {"success": True, "stdout": str(len(args["text"].split())), "stderr": ""}


class WhereAmI:
    name = "where_am_i"
    description = "The workspace of the run."
    parameters = {"type": "object", "properties": {}}

    def execute(self, args, agent):
        return {"success": True, "stdout": str(agent.workspace), "stderr": ""}


class Refuse:
    name = "refuse"
    description = "Always fails."
    parameters = {"type": "object", "properties": {}}

    def execute(self, args):
        return {"success": False, "stdout": "", "stderr": "not today"}


class Unavailable:
    name = "unavailable"
    description = "Needs something missing."
    parameters = {"type": "object", "properties": {}}

    @staticmethod
    def check():
        return False

    def execute(self, args):
        return {"success": True, "stdout": "", "stderr": ""}
"""


@pytest.fixture
def tool_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "a_langchain.py").write_text(LANGCHAIN_TOOL)
    (folder / "b_jarvis.py").write_text(JARVIS_TOOLS)
    return folder


def test_langchain_tools_and_jarvis_classes_load(tool_dir: Path, workspace: Path) -> None:
    loaded = load_tool_dirs([tool_dir])
    tools = {t.name: t for t in loaded.tools}
    assert sorted(tools) == ["refuse", "shout", "where_am_i", "word_count"]
    assert loaded.problems == []
    assert tools["shout"].invoke({"text": "hi"}) == "HI"
    assert tools["word_count"].invoke({"text": "one two three"}) == "3"
    assert tools["word_count"].metadata["risky"] is False
    assert tools["shout"].metadata["risky"] is True  # not declared: assume side effects
    with pytest.raises(ToolFailure, match="refuse failed: not today"):
        tools["refuse"].invoke({})


def test_the_agent_variant_gets_the_run_environment(tool_dir: Path, workspace: Path) -> None:
    (tool,) = [t for t in load_tool_dirs([tool_dir]).tools if t.name == "where_am_i"]
    assert tool.invoke({}) == str(Path.cwd().resolve())  # outside a run: the current folder


def test_broken_files_are_reported_with_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "syntax.py").write_text("x = 1\ndef broken(:\n    pass\n")
    (folder / "raises.py").write_text("import os\n\nvalue = 1 / 0\n")
    (folder / "exits.py").write_text("raise SystemExit(3)\n")
    (folder / "good.py").write_text(LANGCHAIN_TOOL)
    loaded = load_tool_dirs([folder])
    assert [t.name for t in loaded.tools] == ["shout"]
    problems = sorted(loaded.problems)
    assert problems[0].startswith(f"{folder / 'exits.py'}:1: SystemExit")
    assert problems[1].startswith(f"{folder / 'raises.py'}:3: ZeroDivisionError")
    assert problems[2].startswith(f"{folder / 'syntax.py'}:2: SyntaxError")
    assert all(p.endswith("the file was skipped") for p in problems)


def test_registry_order_builtin_user_env(
    tool_dir: Path, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "c.py").write_text(LANGCHAIN_TOOL.replace("def shout", "def read_code"))
    monkeypatch.setenv("JARVIS_TOOL_LOAD_DIRS", f"{tool_dir}:{clash}")
    services = RunServices(JarvisContext(workspace=str(workspace)))
    assert {"read_code", "shout", "word_count"} <= set(services.tools)
    assert "source" not in (services.tools["read_code"].metadata or {})  # the built-in stayed
    assert any("'read_code'" in p and "already taken" in p for p in services.problems)


def test_user_home_tools_folder_is_read(isolated_home: Path, workspace: Path) -> None:
    folder = isolated_home / ".jarvis" / "tools"
    folder.mkdir(parents=True)
    (folder / "mine.py").write_text(LANGCHAIN_TOOL)
    assert "shout" in RunServices(JarvisContext(workspace=str(workspace))).tools


def test_tool_groups_select_by_name_and_glob(tool_dir: Path, workspace: Path) -> None:
    settings = Settings(
        tool_load_dirs=[str(tool_dir)],
        tool_groups={"words": ["word_*", "read_code"]},
        tool_group="words",
    )
    tools = {t.name: t for t in BUILTIN_TOOLS} | build_registry(settings, workspace).tools
    assert sorted(filter_group(tools, settings)) == ["read_code", "word_count"]
    missing = settings.model_copy(update={"tool_group": "nope"})
    with pytest.raises(ConfigError, match="tool group 'nope' is not defined .*words"):
        filter_group(tools, missing)


def test_a_group_that_cannot_reach_a_server_does_not_start_it(workspace: Path) -> None:
    settings = Settings.model_validate(
        {
            "mcp": [{"name": "ghost", "command": str(workspace / "never-started")}],
            "tool_groups": {"files": ["read_code"], "ghosts": ["ghost__*"]},
            "tool_group": "files",
        }
    )
    assert build_registry(settings, workspace).problems == []
    ghosts = settings.model_copy(update={"tool_group": "ghosts"})
    registry = build_registry(ghosts, workspace)
    assert any("MCP server 'ghost' failed to start" in p for p in registry.problems)
    registry.close()


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_central_repository_is_cloned_then_pulled(tmp_path: Path, workspace: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    git("config", "user.email", "t@example.org", cwd=origin)
    git("config", "user.name", "t", cwd=origin)
    (origin / "shout.py").write_text(LANGCHAIN_TOOL)
    git("add", ".", cwd=origin)
    git("commit", "-q", "-m", "shout", cwd=origin)
    settings = Settings(central_tool_repo=origin.as_uri())

    assert "shout" in build_registry(settings, workspace).tools
    assert (central_repo_dir() / "shout.py").is_file()

    (origin / "words.py").write_text(JARVIS_TOOLS)
    git("add", ".", cwd=origin)
    git("commit", "-q", "-m", "words", cwd=origin)
    assert "word_count" in build_registry(settings, workspace).tools


def test_an_unreachable_central_repository_is_a_note(tmp_path: Path, workspace: Path) -> None:
    settings = Settings(central_tool_repo=(tmp_path / "missing").as_uri())
    registry = build_registry(settings, workspace)
    assert any("git clone of" in p and "failed" in p for p in registry.problems)
    assert registry.user_tools == {}  # built all the same: the run goes on without them
