"""Budget and cut of the conversation for summarization (plain functions over messages).

The cut never separates an AI message that calls tools from the tool messages answering
it: providers reject such a history with HTTP 400.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from jarvis_graph.memo import ObjectMemo
from jarvis_graph.state import SUMMARIZED_TURNS, SUMMARY_NAME

"""``name`` of the human message that holds the summary of removed messages."""

CHARS_PER_TOKEN = 4
KEEP_FRACTION = 4
"""The kept tail aims at a quarter of the budget, so summaries are not needed every turn."""


_SIZES: ObjectMemo[int] = ObjectMemo()
"""The budget is checked over the whole history before every model call: each message is
measured once (again if its content or tool calls are replaced)."""


def message_chars(message: AnyMessage) -> int:
    """Characters a message costs in a request: its text, tool-call names and arguments."""
    content = message.content
    calls = message.tool_calls if isinstance(message, AIMessage) else None
    known = _SIZES.get(message, content, calls)
    if known is not None:
        return known
    size = len(content) if isinstance(content, str) else len(json.dumps(content))
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            size += len(call["name"]) + len(json.dumps(call["args"]))
    _SIZES.put(message, size, content, calls)
    return size


def approx_tokens(messages: Sequence[AnyMessage]) -> int:
    """A provider-independent token estimate: characters divided by four."""
    return sum(message_chars(m) for m in messages) // CHARS_PER_TOKEN


def model_turns(messages: Sequence[AnyMessage]) -> int:
    """Model turns in ``messages``, counting those earlier summaries replaced."""
    return sum(
        int(m.response_metadata.get(SUMMARIZED_TURNS, 0)) if is_summary(m) else 1
        for m in messages
        if isinstance(m, AIMessage) or is_summary(m)
    )


def is_summary(message: AnyMessage) -> bool:
    """Whether ``message`` is a summary written by ``summarize_history``."""
    return isinstance(message, HumanMessage) and message.name == SUMMARY_NAME


def rounds_since_summary(messages: Sequence[AnyMessage]) -> int:
    """Model turns (AI messages) after the latest summary, or since the start."""
    count = 0
    for message in reversed(messages):
        if is_summary(message):
            break
        count += isinstance(message, AIMessage)
    return count


def over_budget(messages: Sequence[AnyMessage], max_tokens: int, max_rounds: int) -> bool:
    """Whether the history must be summarized before the next model call.

    Args:
        messages: The conversation.
        max_tokens: Token budget of a request (0: no token trigger).
        max_rounds: Model turns allowed between summaries (0: no round trigger).
    """
    if max_tokens and approx_tokens(messages) > max_tokens:
        return True
    return bool(max_rounds) and rounds_since_summary(messages) >= max_rounds


@dataclass(frozen=True)
class Cut:
    """Where the history is cut: ``head`` (system prompt) is kept, ``removed`` summarized."""

    head: list[AnyMessage]
    removed: list[AnyMessage]
    kept: list[AnyMessage]


def is_pair_safe(removed: Sequence[AnyMessage], kept: Sequence[AnyMessage]) -> bool:
    """No tool call and its answer end up on different sides of the cut."""
    removed_calls = {c["id"] for m in removed if isinstance(m, AIMessage) for c in _calls(m)}
    kept_calls = {c["id"] for m in kept if isinstance(m, AIMessage) for c in _calls(m)}
    removed_answers = {m.tool_call_id for m in removed if isinstance(m, ToolMessage)}
    kept_answers = {m.tool_call_id for m in kept if isinstance(m, ToolMessage)}
    return not (removed_calls & kept_answers or kept_calls & removed_answers)


def _calls(message: AIMessage) -> list[dict]:
    return [dict(c) for c in message.tool_calls] + [dict(c) for c in message.invalid_tool_calls]


def choose_cut(messages: Sequence[AnyMessage], keep_tokens: int) -> Cut | None:
    """Split the history: system prompt, messages to summarize, latest messages to keep.

    The kept tail holds the latest messages that fit in ``keep_tokens`` (at least the last
    message); the cut moves earlier until no tool call is separated from its answer, and
    later if it must. ``None`` when nothing can be removed safely.
    """
    head_len = 0
    while head_len < len(messages) and isinstance(messages[head_len], SystemMessage):
        head_len += 1
    head, body = list(messages[:head_len]), list(messages[head_len:])
    if len(body) < 2:
        return None
    start, used = len(body) - 1, message_chars(body[-1])
    while start > 0 and used + message_chars(body[start - 1]) <= keep_tokens * CHARS_PER_TOKEN:
        start -= 1
        used += message_chars(body[start])
    # Earlier first (keeps more), then later (removes more); 0 and len(body) remove nothing
    # or everything, neither is a summary.
    for at in [*range(start, 0, -1), *range(start + 1, len(body))]:
        if _removable(body[:at]) and is_pair_safe(body[:at], body[at:]):
            return Cut(head=head, removed=body[:at], kept=body[at:])
    return None


def _removable(removed: Sequence[AnyMessage]) -> bool:
    """A lone earlier summary is not worth summarizing again."""
    return not (len(removed) == 1 and is_summary(removed[0]))


def replacement(cut: Cut, summary: AnyMessage) -> list[BaseMessage]:
    """The ``messages`` update that swaps the removed messages for ``summary``.

    Clearing everything and re-adding head, summary and tail puts the summary in place
    (``add_messages`` would append a new message at the end).
    """
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *cut.head, summary, *cut.kept]


def render_transcript(messages: Sequence[AnyMessage], max_chars: int) -> str:
    """The removed messages as plain text for the summary prompt, at most ``max_chars``.

    Each message is clipped to a fair share of the room so one huge tool output does not
    crowd out the rest of the conversation.
    """
    share = max(200, max_chars // max(1, len(messages)))
    lines = []
    for message in messages:
        text = str(message.text) if not isinstance(message.content, str) else message.content
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = "; ".join(f"{c['name']}({json.dumps(c['args'])})" for c in message.tool_calls)
            text = f"{text}\n[tool calls: {calls}]".strip()
        if len(text) > share:
            text = f"{text[: share * 2 // 3]} [...] {text[-(share // 3) :]}"
        role = "summary" if is_summary(message) else message.type
        lines.append(f"[{role}] {text}")
    joined = "\n".join(lines)
    return joined if len(joined) <= max_chars else joined[-max_chars:]
