"""Reading Rust source for the rules: masking, matches at word starts, what a rule sees.

:class:`RustSource` is what the Rust rules see of the engine's
:class:`~jarvis_graph.security.rust_rules.RustFile` (kept here so no rule imports the
engine that calls it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

_LEX = re.compile(
    r"""//[^\n]*|/\*.*?\*/|r(\#*)".*?"\1|b?"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\\n])'""", re.S
)


def mask_rust(text: str) -> str:
    """Comments and literals blanked (``""`` kept for strings), newlines kept."""

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        nl = "\n" * tok.count("\n")
        if tok.startswith(("/", "'")):
            return " " + nl
        return '""' + nl

    return _LEX.sub(sub, text)


_BRACES = re.compile(r"[{}]")


def at_word(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    r"""The matches of ``pattern`` that start a word (as ``\b`` before it would allow)."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            pos = start + 1  # inside a word: look again from the next character
            continue
        yield m
        pos = max(m.end(), start + 1)


def close_brace(text: str, open_pos: int) -> int:
    """The offset of the brace that closes the one at ``open_pos`` (or the text's end)."""
    depth = 0
    for m in _BRACES.finditer(text, open_pos):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return m.start()
    return len(text)


class RustSource(Protocol):
    """One Rust file as the rules see it.

    Attributes:
        lines: the file's lines.
        masked: the text with comments and literals blanked (offsets and lines kept).
        externs: the foreign functions its ``extern`` blocks declare with a result.
    """

    lines: list[str]
    masked: str
    externs: set[str]

    def line(self, offset: int) -> int:
        """The 1-based line of an offset of the masked text."""

    def report(
        self, rule: str, offset: int, detail: str, fn: str = "", conf: float | None = None
    ) -> None:
        """Record one finding of ``rule`` at an offset of the masked text."""


@dataclass
class RustFn:
    """One function as the function rules see it.

    Attributes:
        name: the function's name.
        ext: whether it is an ``extern "C"`` fn (called from C).
        body: its masked body, from the opening brace.
        start: the body's offset in the masked file.
        raws: raw pointers it takes or declares.
        checked: pointers it checks (``is_null``, ``NonNull::new``).
    """

    name: str
    ext: bool
    body: str
    start: int
    raws: set[str]
    checked: set[str]
