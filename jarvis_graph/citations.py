"""What an answer may cite: the task, its attached context and the results of its calls.

A cited answer carries its evidence as ``[{"source": ID, "quote": TEXT}]``: ``ID`` is the
id of a tool call of the current task, ``task`` or ``context``; ``TEXT`` occurs in that
source. The sources are computed from the thread alone, so the platform that decodes an
answer (the local model constrains ``source`` and ``quote`` with its grammar, see
:func:`cites_schema`) and the check that reads it (``features.answer_check``) agree on
them without knowing each other.

Plain data only (the sources of a thread: :func:`jarvis_graph.messages.task_sources`): no
langchain, feature, platform or graph imports here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TASK = "task"
CONTEXT = "context"

CITES_MARK = "x-jarvis-cites"
"""Set on a tool parameter's schema (an array of cites): a platform with a grammar narrows
each item to a real source of the task and a line of it (:func:`cites_schema`)."""
ALWAYS_OFFERED = "always_offered"
"""Tool metadata: no tool filter leaves it out (how a task is declared and answered)."""
DECLARES_TASK = "declares_task"
"""Tool metadata: the first call of each task, stating what the task needs done and what
kind of answer it asks for (the answer review holds the answer to it)."""
ANSWERS_TASK = "answers_task"
"""Tool metadata: a call of this tool is the reply's final answer, not something to run."""

CITES_KEY = "cites"
"""Where an answer's cites travel on its message (``additional_kwargs``)."""

MAX_CITES = 6
"""Cites one answer may give (a total and the rows it adds up)."""
QUOTE_CHARS = 160
"""The longest quote offered to a grammar: a longer line is offered by its start."""
MAX_LINES = 400
"""Lines of one source offered to a grammar (the last ones of a longer source)."""

_LINE_COLUMN = re.compile(r"^ *\d+ \| ", re.MULTILINE)
"""A read's line-number column: a position in a file, not a value of it."""


@dataclass(frozen=True)
class Source:
    """One thing the answer of the current task may cite."""

    id: str
    """A tool call id, :data:`TASK` or :data:`CONTEXT`."""
    tool: str
    """The tool's name; ``task``/``context`` for those."""
    text: str
    """The text as the model saw it, without a read's line-number column."""
    failed: bool = False
    artifact: Any = None
    args: dict[str, Any] | None = None
    """The call's arguments, as the model gave them (``None`` for task and context)."""


@dataclass(frozen=True)
class Cite:
    """One piece of evidence an answer names."""

    source: str
    quote: str


def plain(text: str) -> str:
    """``text`` without a read's line-number column (``12 | ``)."""
    return _LINE_COLUMN.sub("", text)


def squash(text: str) -> str:
    """Whitespace collapsed, for "does this quote occur in that source"."""
    return " ".join(text.split())


def occurs_in(quote: str, source: Source) -> bool:
    """Whether ``quote`` occurs in ``source`` (whitespace-normalised, case kept)."""
    wanted = squash(quote)
    return bool(wanted) and wanted in squash(source.text)


CONTEXT_FRAME = re.compile(
    r"^(?:Workspace context for this task \(attached by Jarvis\):"
    r"|The workspace holds \d+ files?:"
    r"|--- .+ ---"
    r"|\[\d+ more lines: read them with read_code\]"
    r"|\[the file goes on: read the rest with read_code\])$"
)
"""The lines the attached context adds around the files it shows (see
``tools.attachments.attachment_text``; a test keeps the two in step): what Jarvis says
it attached, not what the files hold, so no answer cites them."""


def quotable_lines(text: str, frame: re.Pattern[str] | None = None) -> list[str]:
    """The lines a grammar offers as quotes of ``text``.

    Stripped, non-empty and distinct, each at most :data:`QUOTE_CHARS` (a longer line by
    its start), the last :data:`MAX_LINES` of them; lines ``frame`` matches are left out.
    """
    seen: dict[str, None] = {}
    for line in text.splitlines():
        line = squash(line)[:QUOTE_CHARS].strip()
        if line and not (frame and frame.match(line)):
            seen.setdefault(line, None)
    return list(seen)[-MAX_LINES:]


def cites_schema(sources: Sequence[Source]) -> dict[str, Any]:
    """A JSON schema for a list of cites that can name only ``sources`` and their lines.

    Under a grammar built from it, an answer cannot cite a call that did not happen, nor
    quote what its source does not hold.
    """
    items = []
    # The newest results first, the task and its context last; and in each item the quote
    # before the source: a small model picks a line by what it says, and its source then
    # follows, where picking a call id first is a guess among random strings.
    for source in sorted(reversed(sources), key=lambda s: s.id in (TASK, CONTEXT)):
        lines = quotable_lines(source.text, CONTEXT_FRAME if source.id == CONTEXT else None)
        if lines:
            items.append(
                {
                    "type": "object",
                    "properties": {
                        "quote": {"enum": lines},
                        "source": {"const": source.id},
                    },
                    "required": ["quote", "source"],
                    "additionalProperties": False,
                }
            )
    if not items:
        return {"type": "array", "maxItems": 0}
    one = items[0] if len(items) == 1 else {"anyOf": items}
    return {"type": "array", "items": one, "minItems": 1, "maxItems": MAX_CITES}


def cites_of(raw: Any) -> list[Cite]:
    """The cites of a final answer's arguments (malformed entries are dropped)."""
    if not isinstance(raw, list):
        return []
    return [
        Cite(str(c["source"]), str(c["quote"]))
        for c in raw
        if isinstance(c, dict) and isinstance(c.get("source"), str) and "quote" in c
    ]
