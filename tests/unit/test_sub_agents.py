"""Which runs get the sub-agent tools, and what the parent reads back from a sub-run."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jarvis_graph.context import JarvisContext
from jarvis_graph.features.sub_agents import report
from jarvis_graph.runtime.services import RunServices
from tests.support.trust import trust


def _tools(workspace: Path, config: str = "", **ctx: object) -> set[str]:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text(config or "confirm: risky\n")
    trust(workspace)
    context = JarvisContext(**{"workspace": str(workspace), "platform": "scripted", **ctx})  # type: ignore[arg-type]
    return set(RunServices(context).tools) & {"sub_agent", "sub_code_agent"}


def test_sub_agent_tools_nest_at_most_plan_max_depth_levels(workspace: Path) -> None:
    assert _tools(workspace) == {"sub_agent", "sub_code_agent"}
    assert _tools(workspace, depth=1) == {"sub_agent", "sub_code_agent"}
    assert _tools(workspace, depth=2) == set()  # plan_max_depth: 2
    assert _tools(workspace, "plan_max_depth: 0\n") == set()
    assert _tools(workspace, toolset="code") == set()  # the code agent edits itself


def test_sub_agents_are_off_for_the_local_model_unless_turned_on(workspace: Path) -> None:
    assert _tools(workspace, platform="local") == set()
    assert _tools(workspace, "sub_agents: on\n", platform="local") == {
        "sub_agent",
        "sub_code_agent",
    }
    assert _tools(workspace, "sub_agents: off\n") == set()


def test_the_report_says_how_it_ended_what_it_called_and_its_answer() -> None:
    messages = [
        HumanMessage("task"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {}, "id": "1"}]),
        ToolMessage("no such file", tool_call_id="1", name="read_code", status="error"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "a"}, "id": "2"}]),
        ToolMessage("1 | x", tool_call_id="2", name="read_code"),
        AIMessage("a holds x"),
    ]
    out = {"messages": messages, "status": "unverified", "final_answer": "a holds x",
           "answer_problems": ["the answer names no file"]}  # fmt: skip
    assert report(out, 1).splitlines() == [
        "Sub-agent (level 1) unverified after 3 model calls; it called read_code x2 (1 failed).",
        "Its answer did not pass the answer check: the answer names no file",
        "Its answer:",
        "a holds x",
    ]
