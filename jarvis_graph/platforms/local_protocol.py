"""The prompt format of the embedded local model: Qwen2.5's own ChatML with native tool calls.

The tools go into the system prompt as ``<tools>`` JSON lines, a tool call is a
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block (several in one reply
for parallel calls), an answer is plain text, and tool results come back as
``<tool_response>`` blocks in a user turn: the format the model was trained on, written
exactly as its chat template writes it (see :func:`render_messages`). Only the JSON
inside a ``<tool_call>`` block is decoded under a grammar (:func:`call_schema`): prose
is decoded freely, and a reply may answer without any tool when none fits.

Pure functions over plain data: no llama.cpp or langchain imports here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jarvis_graph.platforms.arguments import parse_arguments

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

TOOLS_HEADER = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


@dataclass
class Turn:
    """One ChatML turn."""

    role: str
    content: str


@dataclass
class Call:
    """A tool call as the prompt shows it."""

    name: str
    arguments: dict[str, Any]


def system_text(system: str, tools: list[dict[str, Any]]) -> str:
    """The system turn's text: the system prompt, then the tools when there are any."""
    if not tools:
        return system or DEFAULT_SYSTEM
    lines = "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (system or DEFAULT_SYSTEM) + TOOLS_HEADER + lines + TOOLS_FOOTER


def assistant_text(content: str, calls: list[Call]) -> str:
    """An earlier reply of the model as it wrote it: its text, then each call's block."""
    parts = [content] if content else []
    for call in calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        parts.append(
            f'{CALL_OPEN}\n{{"name": "{call.name}", "arguments": {arguments}}}\n{CALL_CLOSE}'
        )
    return "\n".join(parts)


REMINDER = (
    "\n\nThe task: {task}\nIf these results answer it, reply with the answer in plain text "
    "now. Otherwise call the next tool."
)


def tool_responses(results: list[str], task: str = "") -> str:
    """The user turn carrying the results of one reply's calls back, in call order.

    With ``task``, the task is repeated under the results, with what to do next: after a
    long result a small model otherwise loses the task, or calls the same tool again.
    """
    text = "".join(f"\n<tool_response>\n{text}\n</tool_response>" for text in results)[1:]
    return text + (REMINDER.format(task=task) if task else "")


def render_prompt(turns: list[Turn]) -> str:
    """ChatML text for ``turns``, ready for the assistant's next reply."""
    body = "".join(f"{IM_START}{t.role}\n{t.content}{IM_END}\n" for t in turns)
    return body + f"{IM_START}assistant\n"


def call_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """JSON schema of the object inside one ``<tool_call>`` block: a call of one of ``tools``."""
    calls = []
    for tool in tools:
        fn = tool["function"]
        params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("type", "object")
        params.setdefault("properties", {})
        params["additionalProperties"] = False
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": fn["name"]}, "arguments": params},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return calls[0] if len(calls) == 1 else {"oneOf": calls}


def parse_call(raw: str) -> tuple[Call | None, str | None]:
    """The call a ``<tool_call>`` block's JSON holds, or why it is not one (exactly parsed)."""
    data, error = parse_arguments(raw)
    if error is not None or data is None:
        return None, error or "the call is not a JSON object"
    name, arguments = data.get("name"), data.get("arguments", {})
    if not isinstance(name, str) or not name:
        return None, "the call has no 'name'"
    if not isinstance(arguments, dict):
        return None, "'arguments' must be a JSON object"
    return Call(name, arguments), None


_LINE_NUMBER = re.compile(r"^ *\d+ \| ", re.MULTILINE)


def without_line_numbers(name: str, content: str) -> str:
    """File lines of a read_code or list_files result without their ``12 | `` column.

    Small models read the line numbers as values.
    """
    if name in ("read_code", "list_files"):
        return _LINE_NUMBER.sub("", content)
    return content


def partial_tag(text: str) -> int:
    """How many characters at the end of ``text`` could start a ``<tool_call>`` tag.

    Streamed prose holds them back until the next piece shows whether a call begins.
    """
    for size in range(min(len(CALL_OPEN) - 1, len(text)), 0, -1):
        if CALL_OPEN.startswith(text[-size:]):
            return size
    return 0


def begins_call(piece: str) -> bool:
    """Whether a token's text begins a tool call: the tag, a JSON object, a fenced block."""
    text = piece.lstrip()
    return text.startswith(("{", "```", "[{", "<tool")) or text == "<"
