"""Segments of a conversation for the episodic archive, redacted and truncated.

A pure module (no store, no graph): a message list becomes :class:`Segment` s — the
user's message, the model's reasoning (text written before tool calls, or a reasoning
block), each tool call, each tool result, and the model's response. Snippets keep head
and tail of long texts and mask secret-looking values; the checkpoint keeps the whole
messages.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from jarvis_graph.config import mask_secrets
from jarvis_graph.secrets import mask_values
from jarvis_graph.state import is_task_message

Kind = Literal["user", "reasoning", "tool_call", "tool_result", "response"]
KINDS: tuple[str, ...] = get_args(Kind)
SNIPPET_CHARS = 800
"""Longest snippet of a user message, reasoning, tool call or response."""
TOOL_RESULT_CHARS = 400
"""Longest snippet of a tool result (they are often whole files or logs)."""
_MARKER = "!!!COMPLETE!!!"  # the auto-complete marker is not part of what was said

_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        "[private key]",
    ),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"), "***"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), "***"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "***"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), "***"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), "***"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "***"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 ***"),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+@"), r"\1***@"),
    (
        re.compile(
            r"(?i)\b([\w-]*(?:api[_-]?key|token|secret|passw(?:or)?d|pwd)[\w-]*"
            r"[\"']?\s*[:=]\s*[\"']?)([^\s\"',;]{4,})"
        ),
        r"\1***",
    ),
]


def redact(text: str, values: Sequence[str] = ()) -> str:
    """``text`` with secret-looking values (API keys, tokens, passwords, keys) masked.

    ``values`` are the configured secrets (see :func:`jarvis_graph.secrets.secret_values`),
    masked wherever they appear, however short.
    """
    text = mask_values(text, values)
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clip(text: str, limit: int) -> str:
    """Head and tail of ``text`` within about ``limit`` characters, the cut said."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]} … [{len(text) - head - tail} chars cut] … {text[-tail:]}"


@dataclass(frozen=True)
class Segment:
    """One indexed piece of a message.

    Attributes:
        kind: What the piece is (see :data:`KINDS`).
        index: Position of the message in the conversation.
        part: Position within the message (several tool calls, reasoning then response).
        message_id: Id of the message (stable across checkpoints).
        text: The snippet: redacted and truncated.
        name: Tool name for tool calls and results, else empty.
    """

    kind: Kind
    index: int
    part: int
    message_id: str
    text: str
    name: str = ""

    def digest(self) -> str:
        """A fingerprint of what the segment says (re-indexing skips unchanged ones)."""
        raw = f"{self.kind}\n{self.name}\n{self.text}".encode()
        return hashlib.sha256(raw).hexdigest()[:16]


def segment_messages(
    messages: list[AnyMessage], first_index: int = 0, secrets: Sequence[str] = ()
) -> list[Segment]:
    """The segments of a conversation.

    System prompts and attached workspace context are left out: they are not what was
    said or done. Indices count from ``first_index``; ``secrets`` are values masked in
    every snippet (see :func:`redact`).
    """
    out: list[Segment] = []
    for index, message in enumerate(messages, first_index):
        mid = str(message.id or f"index-{index}")
        if isinstance(message, HumanMessage):
            if is_task_message(message) and message.text.strip():
                out.append(_segment("user", index, 0, mid, message.text, secrets=secrets))
        elif isinstance(message, AIMessage):
            out.extend(_ai_segments(message, index, mid, secrets))
        elif isinstance(message, ToolMessage):
            text = message.text if message.status != "error" else f"[error] {message.text}"
            name = str(message.name or "")
            out.append(
                _segment("tool_result", index, 0, mid, text, name, TOOL_RESULT_CHARS, secrets)
            )
    return out


def _segment(
    kind: Kind,
    index: int,
    part: int,
    mid: str,
    text: str,
    name: str = "",
    limit: int = 0,
    secrets: Sequence[str] = (),
) -> Segment:
    # redact before clip: a cut must not leave half a secret behind
    snippet = clip(redact(text, secrets), limit or SNIPPET_CHARS)
    return Segment(kind, index, part, mid, snippet, name)


def _ai_segments(
    message: AIMessage, index: int, mid: str, secrets: Sequence[str] = ()
) -> list[Segment]:
    out: list[Segment] = []
    reasoning = _reasoning_of(message)
    text = message.text.replace(_MARKER, "").strip()
    calls: list[tuple[str, Any]] = [(c["name"], c["args"]) for c in message.tool_calls]
    calls += [(c.get("name") or "?", c.get("args")) for c in message.invalid_tool_calls]
    if calls and text:
        reasoning = f"{reasoning}\n{text}".strip()
    if reasoning:
        out.append(_segment("reasoning", index, len(out), mid, reasoning, secrets=secrets))
    for name, args in calls:
        shown = json.dumps(mask_secrets(args), ensure_ascii=False, default=str)
        text_call = f"{name}({shown})"
        out.append(_segment("tool_call", index, len(out), mid, text_call, name, secrets=secrets))
    if text and not calls:
        out.append(_segment("response", index, len(out), mid, text, secrets=secrets))
    return out


def _reasoning_of(message: AIMessage) -> str:
    """Reasoning the provider returned apart from the text (reasoning or thinking blocks)."""
    parts: list[str] = []
    extra = message.additional_kwargs.get("reasoning_content")
    if isinstance(extra, str):
        parts.append(extra)
    if isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, dict) and block.get("type") in ("reasoning", "thinking"):
                value: Any = block.get("reasoning") or block.get("thinking") or ""
                parts.append(value if isinstance(value, str) else str(value))
    return "\n".join(p.strip() for p in parts if p and p.strip())
