"""ObjectMemo: a value per live object, dropped when a watched field or the object goes."""

from __future__ import annotations

import gc

from langchain_core.messages import AIMessage, ToolMessage

from jarvis_graph.history import message_chars
from jarvis_graph.memo import ObjectMemo


def test_a_value_is_found_while_the_object_and_its_fields_are_the_same() -> None:
    memo: ObjectMemo[int] = ObjectMemo()
    message = ToolMessage("abc", tool_call_id="c")
    memo.put(message, 3, message.content)
    assert memo.get(message, message.content) == 3
    assert memo.get(ToolMessage("abc", tool_call_id="c"), message.content) is None  # other object
    message.content = "abcd"
    assert memo.get(message, message.content) is None  # the field was replaced


def test_the_entry_goes_with_the_object() -> None:
    memo: ObjectMemo[int] = ObjectMemo()
    message = ToolMessage("x" * 10_000, tool_call_id="c")
    memo.put(message, 1, message.content)
    assert len(memo) == 1
    del message
    gc.collect()
    assert len(memo) == 0  # nothing is held for a message the run dropped


def test_message_chars_follows_replaced_content_and_tool_calls() -> None:
    message = AIMessage("hello", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "1"}])
    first = message_chars(message)
    assert first == len("hello") + len("f") + len('{"a": 1}')
    message.content = "hello again"
    assert message_chars(message) == first + len(" again")
    message.tool_calls = []
    assert message_chars(message) == len("hello again")
