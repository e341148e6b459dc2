"""``jarvis tools`` and ``jarvis mcp`` against the fixture MCP server, and --tool-group."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.support.cli import invoke, write_script
from tests.support.mcp_servers import fixture_stdio
from tests.support.trust import trust

GROUPS = {"files": ["read_code", "list_files"], "fixture": ["fixture__e*"]}


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / ".jarvis").mkdir()
    config = {
        "mcp": [fixture_stdio(), {"name": "broken", "command": str(workspace / "nothing")}],
        "tool_groups": GROUPS,
    }
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    return trust(workspace)


def test_tools_list_shows_sources_and_problems(project: Path) -> None:
    result = invoke(["tools", "list", "-w", str(project)])
    assert result.exit_code == 0, result.output
    assert "fixture__echo" in result.output and "mcp:fixture" in result.output
    assert "read_code" in result.output
    assert "MCP server 'broken' failed to start" in result.output


def test_tools_list_group(project: Path) -> None:
    result = invoke(["tools", "list", "--group", "fixture", "-w", str(project)])
    assert result.exit_code == 0, result.output
    assert "fixture__echo" in result.output
    assert "read_code" not in result.output and "fixture__add" not in result.output
    assert "1 tool in group 'fixture'" in result.output
    assert "broken" not in result.output  # no pattern reaches it: not even started
    bad = invoke(["tools", "list", "--group", "nope", "-w", str(project)])
    assert bad.exit_code == 1 and "tool group 'nope' is not defined" in bad.output


def test_mcp_list_shows_tools_resources_and_prompts(project: Path) -> None:
    result = invoke(["mcp", "list", "-w", str(project)])
    assert result.exit_code == 1, result.output  # one configured server failed
    assert "fixture" in result.output and "counter" in result.output
    assert "resources (1): fixture://greeting" in result.output
    assert "prompts (1): review" in result.output
    assert "broken" in result.output and "failed to start" in result.output


def test_mcp_call_prints_the_result(project: Path) -> None:
    result = invoke(
        ["mcp", "call", "fixture", "add", "--args", '{"a": 20, "b": 22}', "-w", str(project)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "42"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fixture", "add", "--args", "{a: 1}"], "--args is not valid JSON"),
        (["fixture", "add", "--args", "[1, 2]"], "--args must be a JSON object, not list"),
        (["nobody", "add"], r"no MCP server named 'nobody' \(known: fixture, broken\)"),
        (["fixture", "nothing"], "MCP server 'fixture' has no tool 'nothing'"),
        (["fixture", "fail", "--args", '{"reason": "bad day"}'], "reported an error: .*bad day"),
        (["broken", "x"], "MCP server 'broken' failed to start"),
    ],
)
def test_mcp_call_failures_exit_1_with_a_message(
    project: Path, args: list[str], message: str
) -> None:
    result = invoke(["mcp", "call", *args, "-w", str(project)])
    assert result.exit_code == 1
    assert re.search(message, result.output), result.output


def test_run_with_a_tool_group_offers_only_its_tools(project: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "fixture__echo", "args": {"message": "hi"}}]},
            {"tool_calls": [{"name": "fixture__add", "args": {"a": 1, "b": 2}}]},
            {"text": "done !!!COMPLETE!!!"},
        ],
    )
    args = ["run", "-n", "--yes", "-w", str(project), "--platform", "scripted"]
    result = invoke([*args, "--script", str(script), "--tool-group", "fixture", "-v", "task"])
    assert result.exit_code == 0, result.output
    assert "There is no tool named 'fixture__add'" in result.output
    bad = invoke([*args, "--script", str(script), "--tool-group", "nope", "task"])
    assert bad.exit_code == 1 and "error: tool group 'nope' is not defined" in bad.output
    assert "the run failed" not in bad.output  # refused before the run, not a crash in it


def test_tools_list_cuts_long_descriptions_at_a_word(workspace: Path) -> None:
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.runtime.services import RunServices
    from tests.support.cli import run_process

    tools = RunServices(JarvisContext(workspace=str(workspace))).tools
    firsts = {name: (t.description or "").strip().splitlines()[0] for name, t in tools.items()}

    listed = run_process(["tools", "list"], cwd=workspace)  # 200 columns: no cell wraps

    assert listed.returncode == 0, listed.stdout + listed.stderr
    rows = [line.split("│") for line in listed.stdout.splitlines() if line.startswith("│ ")]
    shown = {cells[1].strip(): cells[4].strip() for cells in rows}
    assert shown.keys() == firsts.keys(), listed.stdout
    cut = {name: text for name, text in shown.items() if text != firsts[name]}
    assert cut, "some built-in tool has a description longer than the column"
    for name, text in cut.items():
        full, kept = firsts[name], text.removesuffix("…")
        assert text.endswith("…") and full.startswith(kept), (name, text)
        assert not full[len(kept)].isalnum(), (name, text)  # the cut ends a word
