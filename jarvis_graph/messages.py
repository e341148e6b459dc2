"""Helpers over message lists shared by several nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)

from jarvis_graph.citations import CONTEXT, TASK, Source, plain
from jarvis_graph.state import CONTEXT_NAME, task_start


def last_ai(messages: list[AnyMessage]) -> AIMessage | None:
    """The last AI message, if any."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    return None


def answered_ids(messages: list[AnyMessage]) -> set[str]:
    """Ids of tool calls that already have a tool message."""
    return {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}


def pending_tool_calls(messages: list[AnyMessage]) -> list[dict]:
    """Tool calls (valid and invalid) of the last AI message that have no answer yet."""
    # Answers always come after their AI message: scanning only that tail keeps every step
    # O(calls) instead of O(history), which made long runs quadratic (two calls per step).
    at = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), -1
    )
    if at < 0:
        return []
    ai = cast(AIMessage, messages[at])
    done = answered_ids(messages[at + 1 :])
    calls = [dict(c) for c in ai.tool_calls] + [
        {**c, "invalid": True} for c in ai.invalid_tool_calls
    ]
    return [c for c in calls if c.get("id") and c["id"] not in done]


def text_of(message: AnyMessage | None) -> str:
    """Plain text of a message (content blocks joined)."""
    return "" if message is None else str(message.text)


def not_run_answers(calls: list[dict], reason: str) -> list[ToolMessage]:
    """Error tool messages for calls that will never run, so the history stays paired."""
    return [
        ToolMessage(
            content=f"Not run: {reason}.",
            tool_call_id=c["id"],
            name=c.get("name") or "unknown",
            status="error",
        )
        for c in calls
    ]


REFUSED_PREFIXES = ("Not run", "The user declined", "Your call to ")
"""How the texts of tool messages for calls that did not run begin: a repeat, a call never
run, one the user declined, one whose arguments could not be parsed."""


def refused_call(text: str) -> bool:
    """Whether a tool message's text says its call was not run (see :data:`REFUSED_PREFIXES`).

    Such a text is no evidence of anything; an unparsable call's even quotes the model's
    own reply.
    """
    return text.startswith(REFUSED_PREFIXES)


QUOTED_CHARS = 300
"""How much of an unparsable call is quoted back, to the model and in its prompt (a runaway
reply is 500 tokens, and each quote stays in the history)."""


def shorten(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def task_runs(messages: Sequence[BaseMessage]) -> list[tuple[ToolCall, ToolMessage]]:
    """Each answered call of the latest task, with its answer, in order.

    An answer belongs to the call with its id in the AI message just before it: providers
    number calls per reply (``call_0``), so an id alone may name a call of another turn or
    an earlier task.
    """
    runs: list[tuple[ToolCall, ToolMessage]] = []
    made: dict[str | None, ToolCall] = {}
    for message in messages[task_start(messages) + 1 :]:
        if isinstance(message, AIMessage):
            made = {c["id"]: c for c in message.tool_calls}
        elif isinstance(message, ToolMessage) and message.tool_call_id in made:
            runs.append((made[message.tool_call_id], message))
    return runs


def task_sources(messages: Sequence[BaseMessage]) -> list[Source]:
    """The sources of the latest task: its text, its attached context, its calls' results.

    Refused calls (a repeat not run, a declined call) are no source: their text says what
    did not happen and may quote the model's own reply.
    """
    start = task_start(messages)
    if start < 0:
        return []
    asked = {id(result): call.get("args") or {} for call, result in task_runs(messages)}
    found = [Source(TASK, TASK, plain(str(messages[start].text)))]
    context = [  # attached right after its task (an earlier task's is not this one's)
        m
        for m in messages[start + 1 : start + 3]
        if isinstance(m, HumanMessage) and getattr(m, "name", None) == CONTEXT_NAME
    ]
    if context:
        found.append(Source(CONTEXT, CONTEXT, plain(str(context[-1].text))))
    for message in messages[start + 1 :]:
        if not isinstance(message, ToolMessage) or refused_call(str(message.text)):
            continue
        artifact = getattr(message, "artifact", None)
        args = asked.get(id(message))
        failed = message.status == "error" or _found_nothing(artifact)
        text = plain(_content(str(message.text), artifact))
        found.append(
            Source(
                id=message.tool_call_id,
                tool=message.name or "tool",
                text=_without_echoes(text, args) if failed else text,
                failed=failed or _run_failed(artifact),
                artifact=artifact,
                args=args,
            )
        )
    return found


def _found_nothing(artifact: Any) -> bool:
    """A search with no hit, or a listing with no file: said like a failed call.

    Its text says what was looked for and not found (the model's own pattern).
    """
    if not isinstance(artifact, dict) or artifact.get("ok") is not True:
        return False
    kind = artifact.get("kind")
    return (kind == "search" and artifact.get("matching_lines") == 0) or (
        kind == "listing" and artifact.get("files") == 0
    )


def _without_echoes(text: str, args: dict[str, Any] | None) -> str:
    """A failed call's text without the arguments it quotes back.

    ``no matches for 'PORT = 9999'`` holds no 9999 of the files: the model wrote it.
    """
    for value in (args or {}).values():
        if isinstance(value, str) and len(value.strip()) >= 2:
            text = text.replace(repr(value), " ").replace(value, " ")
    return text


def _content(text: str, artifact: Any) -> str:
    """What a result holds, without the line a read adds about itself.

    A read's first line names the file and the lines shown (``a.py (lines 1-6 of 6)``):
    quoted, it would ground any answer that names the file it read, right or not.
    """
    if isinstance(artifact, dict) and artifact.get("kind") == "read" and artifact.get("ok"):
        return text.split("\n", 1)[1] if "\n" in text else ""
    return text


def _run_failed(artifact: Any) -> bool:
    """Whether a run's artifact says it failed: a non-zero exit, or a timeout."""
    if not isinstance(artifact, dict) or artifact.get("kind") != "run":
        return False
    return bool(artifact.get("timed_out")) or artifact.get("exit_code") not in (0, None)
