"""The text tool-call protocol, for OpenAI-compatible models without native function calling.

The tools are described in the system prompt and the model calls one by writing a block::

    <TOOL_CALL>
    name: read_code
    arguments:
      path: calc.py
    </TOOL_CALL>

This module is the engine: plain functions over strings and dicts, no langchain. The tools
prompt (built from langchain tool schemas) and the chat model that speaks the protocol are in
:mod:`jarvis_graph.platforms.text_protocol_model`, which imports this module (never the
other way round).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

import yaml

from jarvis_graph.editing.patch_text import PATCH_OPEN, parse_patch_blocks
from jarvis_graph.platforms.arguments import parse_arguments
from jarvis_graph.untrusted import BoundedLoader

OPEN_TAG = re.compile(r"<tool_call>", re.IGNORECASE)
CLOSE_TAG = re.compile(r"</tool_call>", re.IGNORECASE)
RESULT_TAG = re.compile(r"<tool_result\b", re.IGNORECASE)
_TAG = "<tool_call>"
_PATCH_TAG = "<patch "
_PATCH_START = re.compile(r"<patch\s", re.IGNORECASE)
_FENCE = re.compile(r"[ \t]*```[\w+.-]*[ \t]*")
_ARG_KEYS = ("arguments", "args", "parameters")
YAML_HINT = (
    "quote values that contain ': ' or start with * & ! % @ or `, and write multi-line text "
    "as a block (`key: |` then the lines, indented)"
)


class ParsedCall(TypedDict):
    """A well-formed call: the tool name and its arguments."""

    name: str
    args: dict[str, Any]


class CallError(TypedDict):
    """A block that cannot run: the tool name if known, the block text, what is wrong."""

    name: str
    raw: str
    error: str


@dataclass
class ParseResult:
    """A parsed reply: the prose outside the blocks, the calls, and the broken blocks."""

    text: str = ""
    calls: list[ParsedCall] = field(default_factory=list)
    errors: list[CallError] = field(default_factory=list)


class _Loader(BoundedLoader):
    """YAML with JSON-like scalars only: ``yes``, ``on``, dates and ``0755`` stay text.

    A key given twice in one mapping is an error (PyYAML would keep the last value), and
    a block whose aliases expand too far is refused (it is a model's output).
    """

    yaml_implicit_resolvers: dict[Any, Any] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears more than once", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    ("float", r"^[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$", "-+0123456789"),
):
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))


class _Dumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` blocks, the form the prompt teaches."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


@dataclass(frozen=True)
class _Block:
    start: int  # of the open tag
    end: int  # after the close tag, or where a block without one stops
    body: str


def parse_tool_calls(text: str, single_tool_per_turn: bool = False) -> ParseResult:
    """Split a model reply into prose, tool calls and errors for the broken blocks.

    Accepted forms: a block without its end tag runs to the next ``<TOOL_CALL>`` or the
    end of the reply (a reply cut off by the token limit is refused in ``call_model``);
    code fences around or inside a block are dropped; tags may be lowercase; ``arguments``
    may be JSON. YAML and JSON are parsed exactly, never repaired by guessing. Results the
    model invents after its calls are cut off.

    With ``single_tool_per_turn`` the first block is handled as usual and every later one
    becomes an error telling the model to send it again on its own: the first call runs,
    so no work is lost, and the model learns the rule from the errors.
    """
    starts = [m.end() for m in (OPEN_TAG.search(text), PATCH_OPEN.search(text)) if m]
    invented = RESULT_TAG.search(text, min(starts)) if starts else None
    text = text[: invented.start()] if invented else text
    text, result = _take_patches(text)
    blocks = _find_blocks(text)
    result.text = _prose(text, blocks)
    total = len(result.calls) + len(blocks)
    if single_tool_per_turn and result.calls:  # a PATCH block counts as the one call
        _only_first_patch(result, total)
    first_ran = bool(result.calls) or (
        "error" not in _parse_block(blocks[0].body) if blocks else False
    )
    for index, block in enumerate(blocks):
        raw = text[block.start : block.end].strip()
        parsed = _parse_block(block.body)
        if (index or result.calls) and single_tool_per_turn:
            done = "the first one ran" if first_ran else "only the first one was looked at"
            error = (
                f"only one tool call per turn is allowed and this reply had {total}: "
                f"{done}, this one was not run. Send this call again on its own, in a later "
                "reply (one <TOOL_CALL> block per reply)"
            )
            result.errors.append(CallError(name=parsed["name"], raw=raw, error=error))
        elif "error" in parsed:
            result.errors.append(CallError(name=parsed["name"], raw=raw, error=parsed["error"]))
        else:
            result.calls.append(ParsedCall(name=parsed["name"], args=parsed["args"]))
    return result


def _only_first_patch(result: ParseResult, total: int) -> None:
    """Single tool per turn: the first PATCH runs, later ones become errors."""
    for call in result.calls[1:]:
        error = (
            f"only one tool call per turn is allowed and this reply had {total}: the first "
            "one ran, this one was not run. Send it again on its own, in a later reply"
        )
        raw = render_call(call["name"], call["args"])
        result.errors.append(CallError(name=call["name"], raw=raw, error=error))
    del result.calls[1:]


def _take_patches(text: str) -> tuple[str, ParseResult]:
    """Jarvis' ``<PATCH file=...>`` blocks become ``edit_file`` calls; the rest is returned."""
    result = ParseResult()
    pieces, pos, fenced = [], 0, False
    for block in parse_patch_blocks(text):
        piece = (
            _drop_fence_closer(text[pos : block.start])[0] if fenced else text[pos : block.start]
        )
        piece, fenced = drop_fence_opener(piece)
        pieces.append(piece.rstrip())
        pos = block.end
        if block.error:
            raw = text[block.start : block.end].strip()
            result.errors.append(CallError(name="edit_file", raw=raw, error=block.error))
        else:
            result.calls.append(ParsedCall(name="edit_file", args=block.args))
    tail = _drop_fence_closer(text[pos:])[0] if fenced else text[pos:]
    return "\n\n".join(p for p in [*pieces, tail.lstrip()] if p.strip()), result


def _find_blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    pos = 0
    while (opening := OPEN_TAG.search(text, pos)) is not None:
        after = opening.end()
        following = OPEN_TAG.search(text, after)
        close = CLOSE_TAG.search(text, after)
        if close and (following is None or close.start() < following.start()):
            blocks.append(_Block(opening.start(), close.end(), text[after : close.start()]))
        else:  # no end tag: the block stops where the next one starts, or at the end
            stop = following.start() if following else len(text)
            blocks.append(_Block(opening.start(), stop, text[after:stop]))
        pos = blocks[-1].end
    return blocks


def drop_fence_opener(prose: str) -> tuple[str, bool]:
    """``prose`` before a block, without a code fence that opens around the block.

    The last line is such a fence when the fences before it are balanced (otherwise it
    closes a code block of the prose). Returns the prose and whether a fence was dropped.
    """
    trimmed = prose.rstrip()
    head, _, last = trimmed.rpartition("\n")
    fences = sum(1 for line in trimmed.split("\n") if _FENCE.fullmatch(line))
    if _FENCE.fullmatch(last) and fences % 2 == 1:
        return head, True
    return prose, False


def _drop_fence_closer(prose: str) -> tuple[str, bool]:
    """Drop the fence that closes a fenced block; also say whether it may still come."""
    head, _, rest = prose.lstrip().partition("\n")
    if _FENCE.fullmatch(head):
        return rest, False
    return prose, not prose.strip()


def _prose(text: str, blocks: list[_Block]) -> str:
    pieces, pos, fenced = [], 0, False
    for block in blocks:
        piece = text[pos : block.start]
        if fenced:
            piece, fenced = _drop_fence_closer(piece)
        piece, opened = drop_fence_opener(piece)
        fenced = fenced or opened
        pieces.append(piece)
        pos = block.end
    tail = text[pos:]
    pieces.append(_drop_fence_closer(tail)[0] if fenced else tail)
    return "\n\n".join(p.strip() for p in pieces if p.strip())


def _parse_block(body: str) -> dict[str, Any]:
    """``{name, args}`` for a good block, ``{name, error}`` for a broken one."""
    body = _strip_fences(body)
    if not body:
        return _fail("", "the <TOOL_CALL> block is empty: it needs `name:` and `arguments:`")
    data, problem = _load_mapping(body + "\n")  # a final `|` block keeps its newline
    if problem:
        return _fail(_guess_name(body), problem)
    if not isinstance(data, dict):
        return _fail("", f"the block must hold a YAML mapping with `name`, got {_kind(data)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return _fail(
            "",
            "the <TOOL_CALL> block has no `name`: write `name: <tool name>`, then "
            "`arguments:` with the tool's parameters indented below it",
        )
    key = next((k for k in _ARG_KEYS if k in data), None)
    extra = [str(k) for k in data if k not in ("name", key)]
    if key is None:  # parameters written at the top level: unambiguous, so accepted
        return _check_args(name.strip(), {k: v for k, v in data.items() if k != "name"})
    if extra:
        keys = ", ".join(repr(k) for k in extra)
        msg = f"unexpected key(s) {keys} next to `{key}`: put every parameter under `arguments:`"
        return _fail(name.strip(), msg)
    return _check_args(name.strip(), data[key])


def _check_args(name: str, args: Any) -> dict[str, Any]:
    if args is None:
        args = {}
    if isinstance(args, str) and args.lstrip().startswith("{"):  # a JSON string: exactly
        parsed, error = parse_arguments(args)
        if error:
            return _fail(name, f"`arguments` holds JSON that does not parse: {error}")
        args = parsed
    if not isinstance(args, dict):
        return _fail(
            name,
            f"`arguments` must be a mapping of parameter names to values, got {_kind(args)}: "
            "write each parameter on its own line under `arguments:`, indented",
        )
    try:
        return {"name": name, "args": json.loads(json.dumps(args))}  # JSON values, str keys
    except (TypeError, ValueError):
        msg = "`arguments` holds values that are not text, numbers, booleans, lists or mappings"
        return _fail(name, msg)


def _fail(name: str, error: str) -> dict[str, Any]:
    return {"name": name, "error": error}


def _strip_fences(body: str) -> str:
    lines = body.strip().split("\n")
    if lines and _FENCE.fullmatch(lines[0]):
        lines = lines[1:]
    if lines and _FENCE.fullmatch(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines).strip()


def _load_mapping(body: str) -> tuple[Any, str | None]:
    """The block's data, or why it does not parse.

    YAML first, then JSON (a block written as one JSON object), both parsed exactly.
    Nothing is guessed: a block that parses as neither (``pattern: *.py`` is a YAML
    alias) goes back to the model with the parse error and how to quote, and nothing runs.
    """
    try:
        return yaml.load(body, Loader=_Loader), None  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        problem = _describe_yaml_error(exc)
    if body.startswith("{"):
        data, error = parse_arguments(body)
        if data is not None:
            return data, None
        problem = f"{problem}; read as JSON instead: {error}"
    return None, problem


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    detail = (getattr(exc, "problem", None) or str(exc).split("\n")[0]) + _at(exc, "problem_mark")
    context = getattr(exc, "context", None)
    if context:
        detail += f" ({context}, which starts{_at(exc, 'context_mark')})"
    return f"the YAML in the <TOOL_CALL> block does not parse: {detail}; {YAML_HINT}"


def _at(exc: yaml.YAMLError, attr: str) -> str:
    mark = getattr(exc, attr, None)
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _guess_name(body: str) -> str:
    match = re.search(r"^[ \t]*\"?name\"?[ \t]*:[ \t]*[\"']?([\w.-]+)", body, re.MULTILINE)
    return match[1] if match else ""


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {str(value)[:40]!r}"


def render_call(name: str, args: dict[str, Any]) -> str:
    """A call as the model writes it: how an earlier call is shown back to it."""
    body = yaml.dump(
        {"name": name, "arguments": args or {}},
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1 << 16,
    )
    return f"<TOOL_CALL>\n{body.rstrip()}\n</TOOL_CALL>"


def render_result(name: str, content: str) -> str:
    """A tool result as the model reads it, in a user message."""
    return f'<TOOL_RESULT name="{name}">\n{content}\n</TOOL_RESULT>'


class ProseStream:
    """The prose of a reply while it streams, without anything that may belong to a block.

    Text is released once no later text can make it part of a block: a possible partial
    ``<TOOL_CALL`` tag, a code-fence line that may open around a block, and trailing
    whitespace are held back, and nothing is released after the first block starts. What
    is released is always a prefix of ``parse_tool_calls(raw).text``.
    """

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        """Add streamed text; return the prose that can now be shown (may be empty)."""
        scan_from = max(0, len(self.raw) - len(_TAG))
        self.raw += piece
        if self.stopped:
            return ""
        opening = OPEN_TAG.search(self.raw, scan_from) or _PATCH_START.search(self.raw, scan_from)
        if opening:
            self.stopped = True
            settled = drop_fence_opener(self.raw[: opening.start()])[0].strip()
        else:
            settled = _settled(self.raw)
        new = settled[len(self.shown) :] if settled.startswith(self.shown) else ""
        self.shown += new
        return new


def _settled(raw: str) -> str:
    text = raw
    tail = text[-len(_TAG) :].lower()
    for size in range(len(tail), 0, -1):
        if _TAG.startswith(tail[-size:]) or _PATCH_TAG.startswith(tail[-size:]):
            text = text[:-size]
            break
    text = text.rstrip()
    head, _, last = text.rpartition("\n")
    if last.lstrip().startswith("`"):  # may be a fence that opens around a block
        text = head.rstrip()
    return text.lstrip()
