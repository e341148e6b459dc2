"""Where a SEARCH text is in a file: one function per matching strategy, tried in order.

The ladder: the exact text, then the text without its leading and trailing blank lines,
then that text re-indented by 1 to 16 spaces. The first strategy that finds the text
decides: one match is used, several are reported as ambiguous (never guessed).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

MAX_REINDENT = 16
SIMILAR_MIN_RATIO = 0.5


@dataclass(frozen=True)
class Span:
    """A match: the characters ``start:end`` are to become ``replacement``."""

    start: int
    end: int
    replacement: str


Strategy = Callable[[str, str, str], list[Span]]


def find_all(text: str, needle: str) -> list[int]:
    """Every offset where ``needle`` starts in ``text``, overlapping ones included."""
    if not needle:
        return []
    found, pos = [], text.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def strip_blank_lines(text: str) -> str:
    """``text`` without the whitespace-only lines at its start and end."""
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def indent(text: str, spaces: int) -> str:
    """``text`` with ``spaces`` spaces in front of every line that is not blank."""
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else line for line in text.split("\n"))


def match_exact(content: str, search: str, replace: str) -> list[Span]:
    """The search text exactly as given."""
    return [Span(i, i + len(search), replace) for i in find_all(content, search)]


def match_without_blank_edges(content: str, search: str, replace: str) -> list[Span]:
    """The search text without leading and trailing blank lines (the replacement too)."""
    core = strip_blank_lines(search)
    if not core or core == search:
        return []
    return match_exact(content, core, strip_blank_lines(replace))


def match_reindented(content: str, search: str, replace: str) -> list[Span]:
    """The trimmed search text indented by 1..16 more spaces, at line starts.

    The replacement is indented the same way.
    """
    core, new = strip_blank_lines(search), strip_blank_lines(replace)
    if not core:
        return []
    for spaces in range(1, MAX_REINDENT + 1):
        spans = [  # whole lines only: "x" indented by 1 is not the tail of 4 spaces
            s
            for s in match_exact(content, indent(core, spaces), indent(new, spaces))
            if s.start == 0 or content[s.start - 1] == "\n"
        ]
        if spans:
            return spans
    return []


LADDER: tuple[tuple[str, Strategy], ...] = (
    ("exact", match_exact),
    ("without leading/trailing blank lines", match_without_blank_edges),
    ("re-indented", match_reindented),
)


def locate(content: str, search: str, replace: str = "") -> tuple[str, list[Span]]:
    """The first strategy that finds ``search`` and its matches (``("", [])``: none)."""
    for name, strategy in LADDER:
        spans = strategy(content, search, replace)
        if spans:
            return name, spans
    return "", []


def line_of(content: str, offset: int) -> int:
    """1-based line number of the character at ``offset``."""
    return content.count("\n", 0, offset) + 1


def similar_lines(content: str, search: str) -> tuple[int, list[str]] | None:
    """The window of file lines most like ``search``: (first line number, lines), or None.

    Whitespace-only differences count as near matches, so they always come back.
    """
    lines = content.split("\n")
    wanted = strip_blank_lines(search).split("\n")
    size = max(1, len(wanted))
    if not "".join(wanted).strip() or not content.strip():
        return None
    target = "\n".join(line.strip() for line in wanted)
    best, best_ratio = 0, 0.0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for first in range(max(1, len(lines) - size + 1)):
        window = "\n".join(line.strip() for line in lines[first : first + size])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = first, ratio
    if best_ratio < SIMILAR_MIN_RATIO:
        return None
    return best + 1, lines[best : best + size]
