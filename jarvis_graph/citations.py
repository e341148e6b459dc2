"""What an answer cites: the lines of the task's results that hold what it states.

An answer's evidence is ``[{"source": ID, "quote": LINE}]``: ``ID`` is the id of a tool
call of the current task, ``task`` or ``context``; ``LINE`` is a line of that source. The
cites are located, not written: :func:`locate` finds, for each value the answer states,
the newest line of a real result that holds it. So an answer cannot cite a call that did
not happen or a line no result holds, and a value found in no result has no cite, which is
what the answer review (``features.answer_check``) tells the model. Locating them takes no
model call and no skill of the model at picking lines.

Plain data only (the sources of a thread: :func:`jarvis_graph.messages.task_sources`): no
langchain, feature, platform or graph imports here.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

TASK = "task"
CONTEXT = "context"

ALWAYS_OFFERED = "always_offered"
"""Tool metadata: no tool filter leaves it out (how a task is declared)."""
DECLARES_TASK = "declares_task"
"""Tool metadata: the first call of each task, stating what the task needs done and what
kind of answer it asks for (the answer review holds the answer to it)."""

CITES_KEY = "cites"
"""Where an answer's cites travel on its message (``additional_kwargs``)."""

MAX_CITES = 6
"""Cites shown for one answer (a total and the rows it adds up)."""

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
    """One line of evidence of an answer."""

    source: str
    quote: str
    where: str = ""
    """For a line of the attached context: the file it shows that line of."""


def plain(text: str) -> str:
    """``text`` without a read's line-number column (``12 | ``)."""
    return _LINE_COLUMN.sub("", text)


def squash(text: str) -> str:
    """Whitespace collapsed, for "does this quote occur in that source"."""
    return " ".join(text.split())


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


_SECTION = re.compile(r"^--- (.+) ---$")
"""The context's line above each file it shows (``--- path ---``)."""

_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
"""A number: ``1,270.50`` whole, a CSV field (``gadget,11,7.00``) each on its own."""
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/@:]*[A-Za-z0-9_]|[0-9]")
_WORD = re.compile(r"\w{3,}")
"""A word, in any script (a name, a code word, 七个)."""


def values_in(text: str) -> list[str]:
    """What ``text`` states that can be checked against results.

    Numbers, and tokens that hold a digit or a ``_ . / @`` inside: file names, paths,
    identifiers, versions, addresses, dates. Plain words are not values.
    """
    found = [m.group(0).replace(",", "") for m in _NUMBER.finditer(text)]
    for token in _TOKEN.findall(text):
        if any(c.isdigit() for c in token) and _NUMBER.fullmatch(token):
            continue  # a number: already taken, by value
        if any(c.isdigit() for c in token) or re.search(r"[_./@]", token):
            found.append(token)
    return list(dict.fromkeys(found))


def words_in(text: str) -> list[str]:
    """The words of ``text`` of three characters or more, each once."""
    return list(dict.fromkeys(_WORD.findall(text)))


def holds(text: str, value: str) -> bool:
    """Whether ``text`` states ``value``: a number by value, anything else as a token."""
    if _NUMBER.fullmatch(value):
        wanted = float(value.replace(",", ""))
        return any(abs(float(n.replace(",", "")) - wanted) < 1e-9 for n in _NUMBER.findall(text))
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def lines_of(source: Source) -> list[tuple[str, str]]:
    """The lines of ``source`` an answer may cite, each with the file it shows (context).

    Stripped and non-empty; the context's own framing lines (:data:`CONTEXT_FRAME`) are
    not evidence of anything.
    """
    found: list[tuple[str, str]] = []
    where = ""
    for line in source.text.splitlines():
        line = squash(line)
        if source.id == CONTEXT:
            section = _SECTION.match(line)
            if section:
                where = section.group(1)
            if CONTEXT_FRAME.match(line):
                continue
        if line:
            found.append((line, where))
    return found


def locate(answer: str, sources: Sequence[Source], skip: Collection[str] = ()) -> list[Cite]:
    """The cites of ``answer``: for each value it states, the newest line that holds it.

    Results of calls are searched newest first, a successful one before a failed one,
    then the attached context; the task is not evidence of an answer (a value the user
    gave is no claim). Tools named in ``skip`` (a task's declaration) looked at nothing.
    An answer that states no value is cited by the newest successful line holding the
    most of its words, when one holds any (a name, a status word read or printed).
    """
    calls = [s for s in reversed(sources) if s.id not in (TASK, CONTEXT) and s.tool not in skip]
    ordered = [s for s in calls if not s.failed] + [s for s in calls if s.failed]
    ordered += [s for s in sources if s.id == CONTEXT]
    task = " ".join(s.text for s in sources if s.id == TASK)
    lines = [(s, line, where) for s in ordered for line, where in lines_of(s)]
    cites: dict[Cite, None] = {}
    for value in values_in(answer):
        if holds(task, value):
            continue
        for source, line, where in lines:
            if holds(line, value):
                cites.setdefault(Cite(source.id, line, where), None)
                break
    if not cites:
        words = [w for w in words_in(answer) if not holds(task, w)]
        best = max(
            (
                (sum(holds(line, w) for w in words), -rank, source, line, where)
                for rank, (source, line, where) in enumerate(lines)
                if not source.failed
            ),
            default=None,
            key=lambda t: (t[0], t[1]),
        )
        if best is not None and best[0] > 0:
            cites[Cite(best[2].id, best[3], best[4])] = None
    return list(cites)[:MAX_CITES]
