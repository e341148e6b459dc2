"""Planner and hand-off prompts and the send_message schema are snapshot-tested.

Accept an intended change with ``UPDATE_SNAPSHOTS=1`` and review the snapshot diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from jarvis_graph.multi.config import load_agents
from jarvis_graph.multi.handoff import agent_prompt, make_send_message
from jarvis_graph.prompts import load_prompt
from tests.support.snapshots import check_snapshot

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"


def _check(name: str, text: str) -> None:
    check_snapshot(SNAPSHOTS / name, text)


@pytest.mark.parametrize("name", ["plan_decide", "plan_adjust", "handoff_summary"])
def test_prompt_snapshots(name: str) -> None:
    _check(f"{name}.md", load_prompt(name))


@pytest.fixture
def team(tmp_path: Path) -> Path:
    data = {
        "main_agent": "lead",
        "common_system_prompt": "Be brief.",
        "agents": [
            {"name": "lead", "description": "Leads.", "system_prompt": "You lead."},
            {"name": "coder", "description": "Writes code."},
        ],
    }
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_send_message_schema_snapshot(team: Path) -> None:
    tool = make_send_message(load_agents(team), "lead")
    schema = json.dumps(convert_to_openai_tool(tool), indent=2, sort_keys=True) + "\n"
    _check("send_message.json", schema)
    assert tool.metadata == {"handoff": True, "destinations": ["coder"]}


def test_send_message_returns_a_parent_command_or_a_readable_error(team: Path) -> None:
    tool = make_send_message(load_agents(team), "lead")
    command = tool.invoke({"to": "coder", "content": "fix it"})
    assert isinstance(command, Command) and command.graph == Command.PARENT
    assert command.goto == "coder"
    assert command.update == {
        "inbox": {"sender": "lead", "to": "coder", "content": "fix it", "summary": ""}
    }
    error = tool.invoke({"to": "lead", "content": "talk to myself"})
    assert error.startswith("Error: there is no agent named 'lead' to send to.")
    assert "Available agents: coder (Writes code.)" in error


def test_agent_prompt_names_the_role_and_the_team(team: Path) -> None:
    lead = agent_prompt(str(team), "lead")
    assert lead.startswith("Be brief.\n\nYou are the agent 'lead'. You lead.")
    assert "- coder: Writes code." in lead and lead.endswith("give the final answer.")
    assert agent_prompt(str(team), "coder").endswith("goes back to the agent that wrote to you.")
