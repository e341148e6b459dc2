"""Applying PATCH and REWRITE edits to files: all files of a call or none.

:func:`plan_patch` reads the files and computes every new text with
:func:`~jarvis_graph.editing.edits.apply_edits`; :func:`apply_patch` writes them only when
every edit of every file applies (atomic writes, restored on failure), so a failed call
changes nothing. A call that would leave a JSON, Python, TOML or YAML file that parsed
unparsable fails too (:mod:`jarvis_graph.editing.syntax`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph.editing.data_changes import report_lines
from jarvis_graph.editing.edits import apply_edits
from jarvis_graph.editing.errors import EditError
from jarvis_graph.editing.model import Edit, FilePatch
from jarvis_graph.editing.syntax import broken_by_edit
from jarvis_graph.editing.textfile import TextFile, read_text_file, write_all, write_atomic


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
    changes = report_lines(outcome.path, outcome.before, outcome.after or "")
    return f"Edited {outcome.path}: {n} edit{'s' if n != 1 else ''} applied{how}.{changes}"


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
    for outcome, _, _ in results:  # the whole call's result, file by file
        if outcome.ok and (
            broken := broken_by_edit(outcome.path, outcome.before, outcome.after or "")
        ):
            outcome.ok, outcome.message, outcome.kind = False, broken, "syntax"
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
    """Replace a whole file (or create it) atomically, keeping its encoding and newlines.

    Refused (nothing written) when the new content of a JSON, Python, TOML or YAML file
    does not parse and the old one did (see :mod:`jarvis_graph.editing.syntax`).
    """
    try:
        original = read_text_file(path, label)
        form = original or TextFile("")
        broken = broken_by_edit(label, original.text if original else None, content)
        if broken:
            return FileOutcome(label, False, broken, kind="syntax")
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
