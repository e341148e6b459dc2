"""summarize_history and route_after_tools, called directly with a scripted cheap model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.nodes.run_tools import route_after_tools
from jarvis_graph.nodes.summarize_history import summarize_history


def history(rounds: int) -> list[Any]:
    messages: list[Any] = [SystemMessage("system", id="sys"), HumanMessage("task", id="task")]
    for n in range(rounds):
        call = {"name": "read_code", "args": {"path": f"f{n}"}, "id": f"c{n}"}
        messages.append(AIMessage("", tool_calls=[call], id=f"a{n}"))
        messages.append(ToolMessage("x" * 2000, tool_call_id=f"c{n}", id=f"t{n}"))
    return messages


def runtime(ws: Path, summary: str, **settings: Any) -> Runtime[JarvisContext]:
    script = ws / "cheap.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"text": summary}]}))
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(settings))
    ctx = JarvisContext(workspace=str(ws), platform="scripted", script=str(script))
    return Runtime(context=ctx)


@pytest.fixture
def events() -> list[tuple[Event, dict[str, Any]]]:
    seen: list[tuple[Event, dict[str, Any]]] = []
    bus = get_event_bus()
    for event in (
        Event.BEFORE_SUMMARY,
        Event.AFTER_SUMMARY,
        Event.BEFORE_HISTORY_CLEAR,
        Event.AFTER_HISTORY_CLEAR,
    ):
        bus.subscribe(event, lambda e, p: seen.append((e, p)))
    return seen


def test_route_after_tools_summarizes_only_over_budget(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)  # outside a run, the context is the default one (cwd)
    runtime(workspace, "s", max_input_tokens=1000)
    assert route_after_tools({"messages": history(3)}) == "summarize_history"
    assert route_after_tools({"messages": history(1)}) == "call_model"
    runtime(workspace, "s", max_input_tokens=0, auto_summary_rounds=2)
    assert route_after_tools({"messages": history(2)}) == "summarize_history"
    assert route_after_tools({"messages": history(1)}) == "call_model"


def test_old_messages_are_replaced_by_the_cheap_models_summary(
    workspace: Path, events: list[tuple[Event, dict[str, Any]]]
) -> None:
    before = history(6)
    rt = runtime(workspace, "Read six files; all hold x.", max_input_tokens=2000)

    update = summarize_history({"messages": before, "task": "read them"}, rt)

    removal = update["messages"][0]
    assert isinstance(removal, RemoveMessage) and removal.id == REMOVE_ALL_MESSAGES
    after = add_messages(before, update["messages"])
    assert after[0].id == "sys"
    assert after[1].name == "jarvis_summary"
    assert "task: read them" in after[1].content
    assert after[1].content.endswith("Read six files; all hold x.")
    assert [m.id for m in after[2:]] == ["a5", "t5"]
    assert [e for e, _ in events] == [
        Event.BEFORE_SUMMARY,
        Event.AFTER_SUMMARY,
        Event.BEFORE_HISTORY_CLEAR,
        Event.AFTER_HISTORY_CLEAR,
    ]
    cleared = events[2][1]
    gone = cleared["messages"]
    assert [m.id for m in gone] == ["task", *(f"{k}{n}" for n in range(5) for k in "at")]
    assert cleared["first_index"] == 1  # right after the system prompt
    assert cleared["removed"] == 11 and cleared["message_count"] == 14
    assert events[1][1]["summary"] == "Read six files; all hold x."
    assert events[3][1] == {"message_count": 4, "removed": 11}


def test_an_empty_summary_becomes_a_placeholder(workspace: Path) -> None:
    rt = runtime(workspace, "   ", max_input_tokens=2000)

    update = summarize_history({"messages": history(6)}, rt)

    assert "No summary could be written for 11 earlier messages" in update["messages"][2].content


def test_nothing_happens_when_no_safe_cut_exists(workspace: Path) -> None:
    rt = runtime(workspace, "s", max_input_tokens=100)
    only = [SystemMessage("s"), *history(1)[2:]]
    assert summarize_history({"messages": only}, rt) == {}


def test_route_after_tools_works_without_a_runtime() -> None:
    """``update_state(..., as_node="run_tools")`` routes without a run context."""
    assert route_after_tools({"messages": history(1)}) == "call_model"
