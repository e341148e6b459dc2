"""End to end: a scripted run calls an MCP tool and a user-folder tool, and survives a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from jarvis_graph.graphs.agent import build_agent_graph
from tests.support.mcp_servers import REPO, fixture_stdio
from tests.support.trust import trust

MARKER = "!!!COMPLETE!!!"
USER_TOOL = '''
from langchain_core.tools import tool

@tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()
'''


@pytest.fixture
def project(workspace: Path, tmp_path: Path) -> Path:
    """A workspace whose project config has the fixture MCP server and a user tool folder."""
    tools = tmp_path / "my-tools"
    tools.mkdir()
    (tools / "shout.py").write_text(USER_TOOL)
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(
        yaml.safe_dump({"tool_load_dirs": [str(tools)]})
    )
    entry = fixture_stdio()
    server = {"command": entry["command"], "args": entry["args"], "cwd": str(REPO)}
    (workspace / ".jarvis" / "mcp.json").write_text(json.dumps({"mcpServers": {"fixture": server}}))
    return trust(workspace)


def run(project: Path, tmp_path: Path, *turns: dict[str, Any]) -> dict[str, Any]:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": list(turns)}))
    context = {
        "platform": "scripted",
        "script": str(script),
        "workspace": str(project),
        "non_interactive": True,
        "confirm": "never",
    }
    graph = build_agent_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    return graph.invoke({"task": "use the tools"}, config, context=context)


def answers(out: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (m.name or "", str(m.content), m.status)
        for m in out["messages"]
        if isinstance(m, ToolMessage)
    ]


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


def test_mcp_tool_and_user_tool_in_one_run(project: Path, tmp_path: Path) -> None:
    out = run(
        project,
        tmp_path,
        call("fixture__counter"),
        call("shout", text="done"),
        call("fixture__counter"),
        {"text": f"counted twice {MARKER}"},
    )
    assert out["status"] == "completed"
    assert answers(out) == [
        ("fixture__counter", "1", "success"),
        ("shout", "DONE", "success"),
        ("fixture__counter", "2", "success"),  # one session for the whole run
    ]


def test_a_server_crash_is_a_tool_error_and_the_next_call_reconnects(
    project: Path, tmp_path: Path
) -> None:
    out = run(
        project,
        tmp_path,
        call("fixture__counter"),
        call("fixture__crash"),
        call("fixture__counter"),
        {"text": f"recovered {MARKER}"},
    )
    got = answers(out)
    assert got[0] == ("fixture__counter", "1", "success")
    name, text, status = got[1]
    assert (name, status) == ("fixture__crash", "error")
    assert "MCP server 'fixture' stopped while running tool 'crash'" in text
    assert "restarted on the next call" in text
    assert got[2] == ("fixture__counter", "1", "success")  # a fresh server: state is gone
    assert out["status"] == "completed"
