"""Jarvis' ``<PATCH file=...>`` blocks in a model's text, parsed into edit_file arguments.

::

    <PATCH file="src/app.py">
    <DIFF>
    <SEARCH>
    old text
    </SEARCH>
    <REPLACE>
    new text
    </REPLACE>
    </DIFF>
    <DIFF>
    <RANGE>10-40</RANGE>
    <SEARCH_START>def old(</SEARCH_START>
    <SEARCH_END>    return x</SEARCH_END>
    <REPLACE>def new(): ...</REPLACE>
    </DIFF>
    </PATCH>

``<DIFF>`` wrappers are optional; Aider-style ``<<<<<<< SEARCH`` / ``=======`` /
``>>>>>>> REPLACE`` blocks are accepted inside a PATCH too. One newline right after an
opening tag and right before a closing tag belongs to the layout, not to the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PATCH_OPEN = re.compile(
    r"<PATCH\s+file\s*=\s*(?:\"([^\"]+)\"|'([^']+)'|([^\s>]+))\s*>", re.IGNORECASE
)
PATCH_CLOSE = re.compile(r"</PATCH\s*>", re.IGNORECASE)
_FIELD = re.compile(
    r"<(SEARCH_START|SEARCH_END|SEARCH|REPLACE|RANGE)>(.*?)</\1>", re.IGNORECASE | re.DOTALL
)
_DIFF = re.compile(r"<DIFF>(.*?)</DIFF>", re.IGNORECASE | re.DOTALL)
_AIDER = re.compile(
    r"^<{5,9} SEARCH[^\n]*\n(.*?)^={5,9}[ \t]*\n(.*?)^>{5,9} REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class PatchBlock:
    """One ``<PATCH>`` block: its span in the text, and the call or the error it gives."""

    start: int
    end: int
    path: str
    args: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def _layout(text: str) -> str:
    """Drop one newline after the opening tag and one before the closing tag."""
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def _fields(body: str) -> list[dict[str, str]]:
    """The tagged fields of ``body``; a new edit starts when a field repeats or follows REPLACE."""
    diffs: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for match in _FIELD.finditer(body):
        key, value = match[1].lower(), _layout(match[2])
        if key in current or "replace" in current:
            diffs.append(current)
            current = {}
        current[key] = value
    if current:
        diffs.append(current)
    return diffs


def _diffs(body: str) -> list[dict[str, str]]:
    sections = _DIFF.findall(body)
    diffs = [d for section in sections for d in _fields(section)] if sections else _fields(body)
    for match in _AIDER.finditer(body):
        diffs.append(
            {"search": match[1].removesuffix("\n"), "replace": match[2].removesuffix("\n")}
        )
    return diffs


def parse_patch_blocks(text: str) -> list[PatchBlock]:
    """Every ``<PATCH>`` block of ``text``, as ``edit_file`` arguments or an error.

    A block without ``</PATCH>`` runs to the next ``<PATCH`` or the end of the text.
    """
    blocks: list[PatchBlock] = []
    pos = 0
    while (opening := PATCH_OPEN.search(text, pos)) is not None:
        path = (opening[1] or opening[2] or opening[3] or "").strip()
        following = PATCH_OPEN.search(text, opening.end())
        close = PATCH_CLOSE.search(text, opening.end())
        if close and (following is None or close.start() < following.start()):
            body, end = text[opening.end() : close.start()], close.end()
        else:
            end = following.start() if following else len(text)
            body = text[opening.end() : end]
        block = PatchBlock(opening.start(), end, path)
        diffs = _diffs(body)
        if not diffs:
            block.error = (
                f"the <PATCH file={path!r}> block has no edits: put <SEARCH>old</SEARCH>"
                "<REPLACE>new</REPLACE> (or SEARCH_START, SEARCH_END, REPLACE) inside it"
            )
        else:
            block.args = {"files": [{"path": path, "diffs": diffs}]}
        blocks.append(block)
        pos = end
    return blocks
