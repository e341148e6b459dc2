"""Reading Rust source for the rules: comments and literals masked, matches at word starts."""

from __future__ import annotations

import re
from collections.abc import Iterator

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
