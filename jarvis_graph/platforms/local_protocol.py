"""The reply protocol of the embedded local model: prompt, grammar, parsing.

A reply is either a prose answer or tool calls. Tool calls are JSON objects
``{"thought": ..., "tool": NAME, "arguments": {...}}``, one per line (several for parallel
calls), constrained by a grammar built from the tool schemas, so every call parses
exactly. Whether the reply calls a tool is decided at its first token: a call starts with
``{`` (or a code fence); anything else is the answer, decoded without a grammar. So a
model may answer when no tool fits, and an answer costs plain decoding.
A tool result goes back as a user turn that repeats the task under it with what to do
next (a failed result is an answer too when it answers the task).

Pure functions over plain data: no llama.cpp or langchain imports here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

IM_START, IM_END = "<|im_start|>", "<|im_end|>"

THOUGHT_CHARS = 240


FORMAT_RULES = """# How to reply
When a tool fits the request, call it, even if you think you know the answer. A call is
one line holding a JSON object: a short "thought", the "tool" name and its "arguments",
as in {"thought": "...", "tool": "...", "arguments": {...}}. Several independent calls go
on several lines. Look at the files with a tool before you answer about them.
When the tool results hold the answer, or no tool fits the request, reply with the answer
in plain words, without JSON."""


RESULT_SUFFIX = (
    "The task was: {task}\n"
    "If the task needs another step, call the next tool. Otherwise answer the task in "
    "plain words, briefly, not with the whole result."
)
FAILED_SUFFIX = (
    "The task was: {task}\n"
    "This call did not work. Fix the call or use another tool; do not guess. Only when the "
    "error above answers the task, answer with it."
)
LISTING_SUFFIX = (
    "The task was: {task}\n"
    "A listing shows file names only. If the answer is inside a file, read it with read_code "
    "next; otherwise answer the task in plain words, briefly."
)


def render_tool_list(tools: list[dict[str, Any]]) -> str:
    """One line per tool: ``name(arg: type, ...): description``."""
    lines = ["# Tools"]
    for tool in tools:
        fn = tool["function"]
        params = fn.get("parameters", {})
        required = set(params.get("required", []))
        args = []
        for name, prop in params.get("properties", {}).items():
            kind = _type_name(prop)
            note = "" if name in required else ", optional"
            desc = f" - {prop['description']}" if prop.get("description") else ""
            args.append(f"    {name} ({kind}{note}){desc}")
        lines.append(f"- {fn['name']}: {fn.get('description', '').strip()}")
        lines.extend(args)
    return "\n".join(lines)


def _type_name(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return str(prop["type"])
    kinds = [p.get("type") for p in prop.get("anyOf", []) if p.get("type") != "null"]
    return "/".join(str(k) for k in kinds) or "any"


def reply_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """JSON schema of one reply object: a call of one of ``tools``, its thought first."""
    calls = []
    for tool in tools:
        fn = tool["function"]
        params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("type", "object")
        params["additionalProperties"] = False
        calls.append(
            {
                "type": "object",
                "properties": {
                    "thought": {"type": "string", "maxLength": THOUGHT_CHARS},
                    "tool": {"const": fn["name"]},
                    "arguments": params,
                },
                "required": ["thought", "tool", "arguments"],
                "additionalProperties": False,
            }
        )
    return calls[0] if len(calls) == 1 else {"oneOf": calls}


REJECTED_ANSWER = "(an answer the check did not accept)"
"""What the prompt shows in place of an answer the answer check sent back."""


@dataclass
class Turn:
    """One ChatML turn."""

    role: str
    content: str


def split_context(system: str, heading: str) -> tuple[str, str]:
    """The system prompt without its context (under ``heading``), and the context."""
    stable, found, context = system.rpartition(f"\n{heading}\n")
    if not found:
        return system, ""
    return stable.rstrip(), context.strip()


def render_prompt(turns: list[Turn]) -> str:
    """ChatML text for ``turns``, ready for the assistant's next reply."""
    body = "".join(f"{IM_START}{t.role}\n{t.content}{IM_END}\n" for t in turns)
    return body + f"{IM_START}assistant\n"


def tool_call_json(name: str, args: dict[str, Any], thought: str = "") -> str:
    """How an earlier tool call of the model is shown back to it."""
    reply = {"thought": thought, "tool": name, "arguments": args}
    return json.dumps(reply, ensure_ascii=False)


def result_turn(name: str, content: str, task: str = "", failed: bool = False) -> str:
    """The user turn that carries a tool result back to the model.

    Small models lose the task after a long result; it is repeated under each result,
    with advice fitting the result: a failed call is not an answer, a listing holds names
    only (after either, a 0.5B model otherwise answers from imagination).
    """
    if failed or looks_failed(content):
        template = FAILED_SUFFIX
    elif name == "list_files" and _LISTING.match(content):
        template = LISTING_SUFFIX
    else:
        template = RESULT_SUFFIX
    suffix = template.format(task=task or "(see above)")
    content = without_line_numbers(name, content)
    return f"Result of {name}:\n{content}\n\n{suffix}"


_LINE_NUMBER = re.compile(r"^ *\d+ \| ", re.MULTILINE)


def without_line_numbers(name: str, content: str) -> str:
    """File lines of a read_code or list_files result without their ``12 | `` column.

    Small models read the line numbers as values.
    """
    if name in ("read_code", "list_files"):
        return _LINE_NUMBER.sub("", content)
    return content


_LISTING = re.compile(r"^\d+ files? under ")
_FAILED = re.compile(r"^(Error: |exit code: [1-9]|timed out after |no matches for )")


def looks_failed(content: str) -> bool:
    """A tool error, a script that exited non-zero or timed out, or a search with no hits."""
    return _FAILED.match(content) is not None


@dataclass
class Reply:
    """A parsed model reply."""

    answer: str | None = None
    thought: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def parse_reply(raw: str) -> Reply:
    """Parse the model's JSON reply; anything else becomes a readable error."""
    text = raw.strip()
    if text.startswith("```"):
        text = re.sub(r"^```\w*\s*|\s*```$", "", text)
    try:
        # strict=False: a raw newline or tab inside a string (which llama.cpp's grammar for
        # length-limited strings lets through) is taken as written; the structure must
        # still parse exactly.
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        if text and not text.startswith("{"):
            return Reply(answer=text)  # plain prose is taken as the answer
        return Reply(error=f"the reply is not valid JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(data, dict):
        return Reply(error="the reply must be a JSON object with 'tool' and 'arguments'")
    thought = str(data.get("thought") or "")
    name = data.get("tool")
    if not isinstance(name, str) or not name:
        return Reply(thought=thought, error="the reply has no 'tool' name")
    args = data.get("arguments", {})
    if not isinstance(args, dict):
        return Reply(tool=name, thought=thought, error="'arguments' must be a JSON object")
    return Reply(tool=name, arguments=args, thought=thought)


_HEAD = r'^\s*\{\s*(?:"thought"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*)?"tool"\s*:\s*'
_TOOL_NAME = re.compile(_HEAD + r'"([^"]*)"')


def tool_name_of(raw: str) -> str | None:
    """The tool a reply names at its start, even when the rest of it is cut off."""
    named = _TOOL_NAME.match(raw)
    return named.group(1) if named else None


def begins_call(piece: str) -> bool:
    """Whether a token, right after a reply object, goes on to another one (a further call)."""
    return piece.lstrip(" ").startswith(("\n", "{"))


def opens_call(piece: str) -> bool:
    """Whether a reply's first token starts a tool call: a JSON object or a code fence.

    A fence stands for the call a small model writes inside one; the call itself is then
    decoded under the grammar, without the fence.
    """
    return piece.lstrip().startswith(("{", "```"))
