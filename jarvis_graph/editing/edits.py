"""Applying edits to a text in memory: single replacements and range replacements.

Each failure is an :class:`EditError` whose text tells the model what to change: the
SEARCH text was not found (with the most similar lines), matched several places (with
their line numbers), or the RANGE is invalid.
"""

from __future__ import annotations

import re

from jarvis_graph.editing.errors import EditError
from jarvis_graph.editing.matching import (
    MAX_REINDENT,
    Span,
    find_all,
    line_of,
    locate,
    similar_lines,
    strip_blank_lines,
)
from jarvis_graph.editing.model import Edit

TRIED = f"exact, without leading/trailing blank lines, re-indented by 1-{MAX_REINDENT} spaces"
_RANGE = re.compile(r"\s*(\d+)\s*(?:-|:|,|\.\.)\s*(\d+)\s*")


def apply_edits(content: str, edits: tuple[Edit, ...], label: str) -> tuple[str, list[str]]:
    """Apply ``edits`` in order to ``content``; returns the new text and each strategy used.

    Raises:
        EditError: An edit cannot be applied (its number and the reason are in the text).
    """
    strategies: list[str] = []
    for index, edit in enumerate(edits, 1):
        later = " (line numbers count after the earlier edits of this call)" if index > 1 else ""
        try:
            content, strategy = _apply_one(content, edit, label)
        except EditError as exc:
            msg = f"edit {index}{later}: {exc}" if exc.kind != "invalid_edit" else str(exc)
            raise EditError(exc.kind, msg, exc.lines) from exc
        strategies.append(strategy)
    return content, strategies


def _apply_one(content: str, edit: Edit, label: str) -> tuple[str, str]:
    if edit.is_range:
        return _apply_range(content, edit, label)
    search = edit.search or ""
    if not search:
        if content.strip():
            msg = (
                f"SEARCH is empty but {label} is not empty; give the text to replace, or use "
                "rewrite_file to replace the whole file"
            )
            raise EditError("invalid_edit", msg)
        return edit.replace, "new content"
    strategy, spans = locate(content, search, edit.replace)
    span = _unique(content, spans, "SEARCH text", label, search)
    return content[: span.start] + span.replacement + content[span.end :], strategy


def _unique(content: str, spans: list[Span], what: str, label: str, search: str) -> Span:
    if len(spans) == 1:
        return spans[0]
    if spans:
        lines = tuple(line_of(content, s.start) for s in spans)
        where = ", ".join(str(n) for n in lines)
        msg = (
            f"the {what} matches {len(spans)} places in {label} (starting at lines {where}); "
            "include more surrounding lines so it matches exactly one place, or use a range "
            "edit with RANGE to pick the place"
        )
        raise EditError("ambiguous", msg, lines)
    raise not_found(content, search, what, label)


def not_found(content: str, search: str, what: str, label: str, first_line: int = 1) -> EditError:
    """The error for a text that is nowhere in ``content``, with the most similar lines."""
    msg = f"the {what} was not found in {label} (tried: {TRIED})."
    near = similar_lines(content, search)
    if near is None:
        hint = " Nothing in the file looks like it: read the file again with read_code."
        return EditError("not_found", msg + hint)
    start, lines = near
    start += first_line - 1
    width = len(str(start + len(lines) - 1))
    shown = "\n".join(f"{start + i:>{width}} | {line}" for i, line in enumerate(lines))
    ws_only = [ln.strip() for ln in lines] == [
        ln.strip() for ln in strip_blank_lines(search).split("\n")
    ]
    why = (
        "They differ from your text only in whitespace (indentation or spaces inside lines). "
        if ws_only
        else ""
    )
    span = f"line {start}" if len(lines) == 1 else f"lines {start}-{start + len(lines) - 1}"
    msg += (
        f" Did you mean these lines ({span})?\n{shown}\n{why}Copy the text exactly as it is "
        "in the file (without the line-number column), then send the edit again."
    )
    return EditError("not_found", msg, tuple(range(start, start + len(lines))))


def _window(content: str, raw: str | None, label: str) -> tuple[int, int, int, int]:
    """Character offsets of the RANGE line window, and its first and last line numbers."""
    if raw is None or not str(raw).strip():
        return 0, len(content), 1, 0
    total = content.count("\n") + (0 if content.endswith("\n") else 1)
    match = _RANGE.fullmatch(str(raw))
    first, last = (int(match[1]), int(match[2])) if match else (0, 0)
    if not match or first < 1 or last < first or last > total:
        msg = (
            f"invalid RANGE {raw!r}: {label} has lines 1-{total}; write RANGE as "
            "'start-end' with 1 <= start <= end <= the last line"
        )
        raise EditError("invalid_range", msg)
    starts = [0, *(i + 1 for i, ch in enumerate(content) if ch == "\n")]
    end = starts[last] if last < len(starts) else len(content)
    return starts[first - 1], end, first, last


def _apply_range(content: str, edit: Edit, label: str) -> tuple[str, str]:
    lo, hi, first_line, last_line = _window(content, edit.range, label)
    region = content[lo:hi]
    where = f"lines {first_line}-{last_line} of {label}" if last_line else label
    strategy, spans = locate(region, edit.search_start or "")
    try:
        start = _unique(region, spans, "SEARCH_START text", where, edit.search_start or "")
    except EditError as exc:
        if exc.kind == "not_found":
            raise not_found(
                region, edit.search_start or "", "SEARCH_START text", where, first_line
            ) from None
        shifted = tuple(n + first_line - 1 for n in exc.lines)
        raise EditError(exc.kind, _shift_lines(str(exc), exc.lines, shifted), shifted) from None
    end = _range_end(region, start, edit.search_end or "")
    if end is None:
        after = line_of(region, start.start) + first_line - 1
        err = not_found(region, edit.search_end or "", "SEARCH_END text", where, first_line)
        msg = f"{err} (it must come after the SEARCH_START text, found at line {after})"
        raise EditError("not_found", msg, err.lines)
    return content[: lo + start.start] + edit.replace + content[lo + end :], strategy


def _shift_lines(text: str, old: tuple[int, ...], new: tuple[int, ...]) -> str:
    return text.replace(", ".join(map(str, old)), ", ".join(map(str, new)), 1)


def _range_end(region: str, start: Span, marker: str) -> int | None:
    """End offset of the first SEARCH_END text that ends at or after the start text."""
    for candidate in (marker, strip_blank_lines(marker), marker.strip()):
        for pos in find_all(region[start.start :], candidate):
            end = start.start + pos + len(candidate)
            if end >= start.end:
                return end
    return None
