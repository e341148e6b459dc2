"""Message helpers shared by the nodes."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from jarvis_graph.messages import answered_ids, last_ai, pending_tool_calls, text_of


def call(name: str, call_id: str) -> dict:
    return {"name": name, "args": {}, "id": call_id, "type": "tool_call"}


def test_last_ai() -> None:
    first, second = AIMessage("a"), AIMessage("b")
    assert last_ai([HumanMessage("x")]) is None
    assert last_ai([first, HumanMessage("x"), second, ToolMessage("t", tool_call_id="1")]) is second


def test_pending_tool_calls_only_of_the_last_ai_message() -> None:
    old = AIMessage("", tool_calls=[call("list_files", "old")])
    new = AIMessage(
        "",
        tool_calls=[call("read_code", "a"), call("list_files", "b")],
        invalid_tool_calls=[
            {"name": "execute_script", "args": "{bad", "id": "c", "error": "oops", "type": "x"}
        ],
    )
    messages = [old, new, ToolMessage("done", tool_call_id="a")]
    pending = pending_tool_calls(messages)
    assert [(c["id"], c.get("invalid", False)) for c in pending] == [("b", False), ("c", True)]
    assert answered_ids(messages) == {"a"}


def test_no_pending_calls_without_ai_or_when_all_answered() -> None:
    assert pending_tool_calls([HumanMessage("x")]) == []
    ai = AIMessage("", tool_calls=[call("read_code", "a")])
    assert pending_tool_calls([ai, ToolMessage("r", tool_call_id="a")]) == []


def test_text_of_strings_and_blocks() -> None:
    assert text_of(None) == ""
    assert text_of(SystemMessage("plain")) == "plain"
    blocks = AIMessage(
        content=[
            {"type": "text", "text": "Hello "},
            {"type": "image_url", "image_url": {"url": "x"}},
            "world",
        ]
    )
    assert text_of(blocks) == "Hello world"
