"""Applying PATCH and REWRITE edits: text first, then all files of a call or none.

:func:`apply_edits` works on a string; :func:`plan_patch` reads the files and computes
every new text; :func:`apply_patch` writes them only when every edit of every file
applies (atomic writes, restored on failure), so a failed call changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

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
from jarvis_graph.editing.model import Edit, FilePatch
from jarvis_graph.editing.textfile import TextFile, read_text_file, write_all, write_atomic

TRIED = f"exact, without leading/trailing blank lines, re-indented by 1-{MAX_REINDENT} spaces"
_RANGE = re.compile(r"\s*(\d+)\s*(?:-|:|,|\.\.)\s*(\d+)\s*")


@dataclass
class FileOutcome:
    """What happened to one file of a call."""

    path: str
    ok: bool
    message: str = ""
    before: str | None = None
    after: str | None = None
    strategies: list[str] = field(default_factory=list)
    kind: str = ""
    """The :class:`EditError` kind when the file failed."""

    @property
    def created(self) -> bool:
        """Whether the file did not exist before."""
        return self.before is None


@dataclass
class PatchOutcome:
    """The result of a PATCH call; :meth:`report` is the text the model gets."""

    files: list[FileOutcome]
    written: bool = False

    @property
    def ok(self) -> bool:
        """Whether every file was edited."""
        return self.written and all(f.ok for f in self.files)

    def report(self) -> str:
        """A summary for the model: what changed, or why nothing did."""
        if self.ok:
            return "\n".join(_done_line(f) for f in self.files)
        failed = [f for f in self.files if not f.ok]
        head = (
            f"No file was changed: {len(failed)} of {len(self.files)} file(s) had an edit "
            "that cannot be applied (a call is applied completely or not at all)."
        )
        lines = [head]
        for outcome in self.files:
            if outcome.ok:
                lines.append(
                    f"- {outcome.path}: its edits would apply, but were not written because "
                    "another file failed; send them again together with the fixed edits."
                )
            else:
                lines.append(f"- {outcome.path}: {outcome.message}")
        return "\n".join(lines)


def _done_line(outcome: FileOutcome) -> str:
    if outcome.created:
        return f"Created {outcome.path}."
    n = len(outcome.strategies)
    loose = sorted({s for s in outcome.strategies if s != "exact"})
    how = f" (matched {', '.join(loose)})" if loose else ""
    return f"Edited {outcome.path}: {n} edit{'s' if n != 1 else ''} applied{how}."


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


Resolver = Callable[[str], Path]


def plan_patch(
    patches: list[FilePatch], resolve: Resolver
) -> list[tuple[FileOutcome, Path, TextFile | None]]:
    """Compute every file's new text without writing (same path twice: edits in order).

    ``resolve`` maps a path from the call to a real path; it raises ``ValueError`` with a
    message for paths it refuses (outside the workspace, say).
    """
    planned: dict[Path, tuple[FileOutcome, Path, TextFile | None]] = {}
    results: list[tuple[FileOutcome, Path, TextFile | None]] = []
    for patch in patches:
        try:
            path = resolve(patch.path)
        except ValueError as exc:
            failed = FileOutcome(patch.path, False, str(exc), kind="file")
            results.append((failed, Path(patch.path), None))
            continue
        if path in planned:
            outcome, _, original = planned[path]
            text = outcome.after if outcome.ok else None
        else:
            outcome, original, text = _start(patch.path, path)
            planned[path] = (outcome, path, original)
            results.append(planned[path])
        if outcome.ok and text is not None:
            _plan_edits(outcome, text, patch, original)
    return results


def _start(label: str, path: Path) -> tuple[FileOutcome, TextFile | None, str | None]:
    try:
        original = read_text_file(path, label)
    except EditError as exc:
        return FileOutcome(label, False, str(exc), kind=exc.kind), None, None
    text = original.text if original else ""
    return (
        FileOutcome(label, True, before=original.text if original else None, after=text),
        original,
        text,
    )


def _plan_edits(
    outcome: FileOutcome, text: str, patch: FilePatch, original: TextFile | None
) -> None:
    if not patch.edits:
        outcome.ok, outcome.kind = False, "invalid_edit"
        outcome.message = "no edits were given for this file"
        return
    first = patch.edits[0]
    if original is None and (first.is_range or first.search):
        outcome.ok, outcome.kind = False, "file"
        outcome.message = (
            f"{patch.path} does not exist. To create it, use one edit with an empty SEARCH and "
            "the whole content as REPLACE (or rewrite_file); check the path with list_files"
        )
        return
    form = original or TextFile("")
    edits = tuple(_normalised(e, form) for e in patch.edits)
    try:
        outcome.after, used = apply_edits(text, edits, patch.path)
    except EditError as exc:
        outcome.ok, outcome.message, outcome.kind = False, str(exc), exc.kind
        return
    outcome.strategies += used


def _normalised(edit: Edit, form: TextFile) -> Edit:
    def norm(value: str | None) -> str | None:
        return None if value is None else form.normalise(value)

    return Edit(
        search=norm(edit.search),
        replace=form.normalise(edit.replace),
        search_start=norm(edit.search_start),
        search_end=norm(edit.search_end),
        range=edit.range,
    )


def apply_patch(patches: list[FilePatch], resolve: Resolver) -> PatchOutcome:
    """Apply a PATCH call: every file or none (see the module docstring)."""
    planned = plan_patch(patches, resolve)
    outcome = PatchOutcome([item[0] for item in planned])
    if not planned or not all(o.ok for o in outcome.files):
        return outcome
    changes: list[tuple[Path, bytes]] = []
    try:
        for result, path, original in planned:
            changes.append((path, (original or TextFile("")).encode(result.after or "")))
        write_all(changes)
    except EditError as exc:
        for result, _, _ in planned:
            result.ok, result.message = False, str(exc)
        return outcome
    outcome.written = True
    return outcome


def rewrite_file(path: Path, label: str, content: str) -> FileOutcome:
    """Replace a whole file (or create it) atomically, keeping its encoding and newlines."""
    try:
        original = read_text_file(path, label)
        form = original or TextFile("")
        write_atomic(path, form.encode(form.normalise(content)))
    except EditError as exc:
        return FileOutcome(label, False, str(exc))
    except OSError as exc:
        return FileOutcome(label, False, f"writing {label} failed: {exc.strerror or exc}")
    return FileOutcome(
        label,
        True,
        before=original.text if original else None,
        after=form.normalise(content),
        strategies=["rewrite"],
    )
