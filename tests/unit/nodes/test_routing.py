"""Routers and small decisions of the run loop, called directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.call_model import (
    _reject_truncated_calls,
    needs_human,
    route_after_model,
)
from jarvis_graph.nodes.complete_task import strip_marker
from jarvis_graph.nodes.confirm_tools import normalise_decisions, route_after_confirm_tools
from jarvis_graph.runtime.services import RunServices


def call(name: str, call_id: str = "1", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def rt(**ctx: Any) -> Runtime[JarvisContext]:
    return Runtime(context=JarvisContext(**ctx))


def state(*messages: Any, iteration: int = 1, max_iterations: int = 10) -> dict[str, Any]:
    return {
        "messages": [HumanMessage("task"), *messages],
        "iteration": iteration,
        "max_iterations": max_iterations,
    }


@pytest.fixture
def ws(workspace: Path) -> str:
    return str(workspace)


def test_safe_tool_calls_run_directly(ws: str) -> None:
    s = state(AIMessage("", tool_calls=[call("read_code", path="a")]))
    assert route_after_model(s, rt(workspace=ws)) == "run_tools"


def test_risky_tool_calls_are_confirmed_in_risky_mode(ws: str) -> None:
    s = state(AIMessage("", tool_calls=[call("read_code"), call("execute_script", "2")]))
    assert route_after_model(s, rt(workspace=ws)) == "confirm_tools"
    assert route_after_model(s, rt(workspace=ws, confirm="never")) == "run_tools"


def test_confirm_always_confirms_every_tool(ws: str) -> None:
    s = state(AIMessage("", tool_calls=[call("list_files")]))
    assert route_after_model(s, rt(workspace=ws, confirm="always")) == "confirm_tools"


def test_ask_user_tool_goes_to_confirm_even_with_confirm_never(ws: str) -> None:
    s = state(AIMessage("", tool_calls=[call("ask_user", question="?")]))
    assert route_after_model(s, rt(workspace=ws, confirm="never")) == "confirm_tools"


def test_needs_human_in_non_interactive_runs(ws: str) -> None:
    ctx = RunServices(JarvisContext(workspace=ws, non_interactive=True))
    assert needs_human(call("ask_user", question="?"), ctx) is False  # nobody to answer
    assert needs_human(call("read_code"), ctx) is False
    # Risky calls still need confirmation; confirm_tools declines them without asking.
    assert needs_human(call("execute_script"), ctx) is True


def test_unknown_and_invalid_calls_never_need_a_human(ws: str) -> None:
    ctx = RunServices(JarvisContext(workspace=ws, confirm="always"))
    assert needs_human(call("no_such_tool"), ctx) is False
    assert needs_human({**call("execute_script"), "invalid": True}, ctx) is False


def test_iteration_cap_with_pending_calls_completes(ws: str) -> None:
    s = state(AIMessage("", tool_calls=[call("read_code")]), iteration=3, max_iterations=3)
    assert route_after_model(s, rt(workspace=ws)) == "complete_task"


def test_answer_without_marker_asks_the_user_in_interactive_runs(ws: str) -> None:
    s = state(AIMessage("Here is a draft."))
    assert route_after_model(s, rt(workspace=ws)) == "ask_user"
    # no key configured: the local model, whose answers are focused, then checked (auto)
    assert route_after_model(s, rt(workspace=ws, non_interactive=True)) == "focus_answer"


def test_answer_with_marker_completes(ws: str) -> None:
    s = state(AIMessage("Done. !!!COMPLETE!!!"))
    assert route_after_model(s, rt(workspace=ws)) == "focus_answer"


@pytest.mark.parametrize(("mode", "node"), [("off", "complete_task"), ("rules", "check_answer")])
def test_the_answer_check_setting_decides_for_every_platform(
    ws: str, mode: str, node: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # an OpenAI-compatible model: auto is off
    s = state(AIMessage("Done. !!!COMPLETE!!!"))
    assert route_after_model(s, rt(workspace=ws)) == "complete_task"
    config = Path(ws) / ".jarvis" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"answer_check: {mode}\n")
    assert route_after_model(s, rt(workspace=ws)) == node


def test_a_capped_answer_is_still_checked_but_not_written_again(ws: str) -> None:
    """The last allowed call's answer goes to the check (which sends no notice then, so a
    wrong answer ends unverified), never to a focused answer (another model call)."""
    s = state(AIMessage("Done. !!!COMPLETE!!!"), iteration=10, max_iterations=10)
    config = Path(ws) / ".jarvis" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    for mode, node in (("rules", "check_answer"), ("'off'", "complete_task")):
        config.write_text(f"answer_check: {mode}\nfocused_answers: 'on'\n", encoding="utf-8")
        assert route_after_model(s, rt(workspace=ws)) == node


def test_route_after_confirm_tools() -> None:
    ai = AIMessage("", tool_calls=[call("execute_script", "1"), call("read_code", "2")])
    one_answered = state(ai, ToolMessage("declined", tool_call_id="1"))
    assert route_after_confirm_tools(one_answered) == "run_tools"
    both = state(ai, ToolMessage("x", tool_call_id="1"), ToolMessage("y", tool_call_id="2"))
    assert route_after_confirm_tools(both) == "call_model"


def testnormalise_decisions_decisions() -> None:
    requests = [
        {"id": "a", "kind": "confirm"},
        {"id": "b", "kind": "confirm"},
        {"id": "q", "kind": "question"},
    ]
    assert normalise_decisions("approve", requests) == {
        "a": {"action": "approve"},
        "b": {"action": "approve"},
    }
    assert normalise_decisions("reject", requests) == {
        "a": {"action": "reject"},
        "b": {"action": "reject"},
    }
    assert normalise_decisions(
        {"a": "reject", "b": {"action": "edit", "args": {"x": 1}}, "q": "blue"}, requests
    ) == {
        "a": {"action": "reject"},
        "b": {"action": "edit", "args": {"x": 1}},
        "q": {"answer": "blue"},
    }
    assert normalise_decisions(None, requests) == {}
    assert normalise_decisions("maybe", requests) == {}


def test_strip_marker() -> None:
    assert strip_marker("All done.\n!!!COMPLETE!!!") == "All done."
    assert strip_marker("!!!COMPLETE!!! ok") == "ok"
    assert strip_marker("no marker ") == "no marker"


def test_tool_calls_cut_off_by_the_token_limit_become_invalid() -> None:
    cut = AIMessage(
        "",
        tool_calls=[call("execute_script", "1", script="rm -rf bu")],
        response_metadata={"finish_reason": "length"},
    )
    fixed = _reject_truncated_calls(cut)
    assert fixed.tool_calls == []
    (invalid,) = fixed.invalid_tool_calls
    assert invalid["id"] == "1"
    assert invalid["name"] == "execute_script"
    assert "output-token limit" in invalid["error"]
    complete = AIMessage(
        "", tool_calls=[call("read_code")], response_metadata={"finish_reason": "tool_calls"}
    )
    assert _reject_truncated_calls(complete) is complete
