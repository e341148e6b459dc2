"""Tool calls a model wrote as text instead of making them.

Weak models served over HTTP often answer with ``{"name": "execute_script", "arguments":
{...}}``, a fenced JSON block or a ``<tool_call>`` tag in the reply's text. Nothing parsed
it, so nothing ran; taking it as the final answer would report a task "completed" that was
never done. ``route_after_model`` sends such a reply to ``correct_call_text``, which tells
the model what happened and how to call tools in the mode in use, a bounded number of
times; after that ``complete_task`` ends the run saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.messages import text_of
from jarvis_graph.platforms.registry import resolve_platform
from jarvis_graph.runtime.services import services_of
from jarvis_graph.state import CORRECTION_NAME, AgentState, is_task_message

MAX_CORRECTIONS = 2
"""Replies written as calls in a row (no tool ran between them) that are sent back to the
model before the run gives up."""

_TAGS = re.compile(r"<\s*/?\s*(?:tool_call|function_call|tool_use|function=)", re.IGNORECASE)
_FENCED = re.compile(r"```[\w-]*[ \t]*\n(.*?)```", re.DOTALL)
_ARG_KEYS = ("arguments", "args", "parameters", "input")
_FIELD_NAME = re.compile(r"^\s*[\"']?(?:tool|name|function)[\"']?\s*:\s*[\"']?([\w.-]+)", re.M)
_FIELD_ARGS = re.compile(rf"^\s*[\"']?(?:{'|'.join(_ARG_KEYS)})[\"']?\s*:", re.MULTILINE)


def call_in_text(text: str, tool_names: Collection[str]) -> str | None:
    """How ``text`` holds a tool call written out instead of made, or ``None``.

    A call is a tool-call tag (``<tool_call>``, ``<function_call>``, ...), or a JSON object
    (the whole reply, or a fenced block) naming one of ``tool_names`` with its arguments:
    ``{"name": ..., "arguments": ...}``, ``{"tool": ...}``, ``{"function": {"name": ...}}``
    or ``{"tool_calls": [...]}``, or the same as lines (``tool: read_code`` then
    ``arguments: ...``). Prose that merely mentions a tool is not a call.
    """
    found = _call_in_text(text, tool_names)
    return found[0] if found else None


def tool_in_text(text: str, tool_names: Collection[str]) -> str | None:
    """The tool a call written as text names (``None``: no such call, or a bare tag)."""
    found = _call_in_text(text, tool_names)
    return found[1] if found else None


def _call_in_text(text: str, tool_names: Collection[str]) -> tuple[str, str | None] | None:
    """``(how the text holds a call, the tool it names)``, or ``None``."""
    tag = _TAGS.search(text)
    if tag:
        tag_name = re.sub(r"[<>/=\s]", "", tag.group(0))
        return f"a <{tag_name}> tag", None
    for candidate in [text, *_FENCED.findall(text)]:
        called = _named_call(_json_value(candidate), tool_names)
        if called:
            return f"a JSON object calling {called!r}", called
    named = _FIELD_NAME.search(text)
    if named and named.group(1) in tool_names and _FIELD_ARGS.search(text, named.end()):
        return f"a call of {named.group(1)!r} written as lines", named.group(1)
    return None


def _json_value(text: str) -> Any:
    text = text.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _named_call(value: Any, tool_names: Collection[str]) -> str | None:
    """The tool a JSON call names, when ``value`` is shaped like one."""
    if isinstance(value, list):
        return next((n for v in value if (n := _named_call(v, tool_names))), None)
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return _named_call(value["tool_calls"], tool_names)
    function = value.get("function")
    if isinstance(function, dict):
        return _named_call(function, tool_names)
    name = value.get("name", value.get("tool"))
    if isinstance(name, str) and name in tool_names:
        return name if "tool" in value or any(k in value for k in _ARG_KEYS) else None
    return None


def corrections_in_a_row(messages: list[AnyMessage]) -> int:
    """Corrective messages sent since the user's last task message or the last tool result.

    A tool that ran is progress: a model that makes a call after a correction and then
    writes the next one as text again is told again, as the first time.
    """
    count = 0
    for message in reversed(messages):
        if is_task_message(message) or getattr(message, "type", None) == "tool":
            break
        count += getattr(message, "name", None) == CORRECTION_NAME
    return count


def correct_call_text(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Tell the model its reply was a tool call written as text, and how to make one."""
    services = services_of(runtime)
    messages = state["messages"]
    found = call_in_text(text_of(messages[-1]), services.tools) or "a tool call"
    spec = services.settings.model_for("normal")
    if spec.tool_protocol == "text":
        how = (
            "write it as a <TOOL_CALL> block with YAML `name:` and `arguments:`, as the Tools "
            "section of the system prompt shows"
        )
    elif resolve_platform(spec) == "local":
        how = 'reply with the call alone, as one JSON object starting with {"thought"'
    else:
        how = "make it through the tool-calling interface (a function call), not as text"
    left = MAX_CORRECTIONS - corrections_in_a_row(messages) - 1
    note = (
        f"Your last reply holds {found} written as plain text: nothing was run. To call a "
        f"tool, {how}. If you meant it as your final answer, answer in plain prose instead. "
        f"(This notice is given {left} more time{'s' if left != 1 else ''}; then the run "
        "stops without an answer.)"
    )
    return {"messages": [HumanMessage(content=note, name=CORRECTION_NAME)]}
