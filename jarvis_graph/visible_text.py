r"""Untrusted text on the terminal: control characters shown as escapes, never obeyed.

Model answers, tool output, file contents, memory records, document paths, stored
session ids and titles, and the code a security scan quotes can all hold bytes a terminal
acts on: an OSC 52 sequence writes the user's clipboard, ``ESC [2J`` clears the screen,
an OSC 8 sequence hides a link behind text, ``\r`` overwrites what was printed. Every
such character is printed as its escape (``\x1b``, ``\r``, ``\u202e``), so the user sees
what the text holds. Newlines and tabs stay.

Base layer (only :mod:`re`): the CLI (``cli.visible.echo``, ``render.TerminalConsole``)
and the security scan's direct path print through it alike.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1 (8-bit CSI and OSC)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidirectional overrides (reordered text)
)
_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x08": "\\b", "\x07": "\\a"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str) -> str:
    r"""``text`` with every terminal control character written out as its escape.

    ``"\x1b]52;c;aGk=\x07"`` becomes the visible ``\x1b]52;c;aGk=\a``; newlines and tabs
    are kept.
    """
    return _CONTROL.sub(_escape, text)
