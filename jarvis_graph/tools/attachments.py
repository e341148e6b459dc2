"""Workspace context attached to a new task: the files it names, a small workspace's list.

A task that names ``app.json`` needs its content; attaching it (as editors attach files
mentioned in a chat) saves the model a tool round trip, and spares a small local model the
step it most often skips: it answers from imagination instead of reading the file. Only text
files inside the workspace are attached, never hidden files or files that look like secrets.

"Inside" is decided on the resolved path, symlinks followed, and again just before a file is
read. A hard link cannot be told from its path: a file with more than one link is not
attached (the model can still read it with ``read_code``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jarvis_graph.secrets import is_secret_path
from jarvis_graph.tools.builtin import table_note, walk_files

READ_BYTES = 256 * 1024  # a named file is read this far at most
_PATH_LIKE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w.-]*\w\.[A-Za-z0-9]{1,10})(?![\w/-])")
FILE_NAME = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:py|txt|json|csv|tsv|md|log|toml|"
    r"ya?ml|ini|cfg|conf|sh|js|ts|c|h|cpp|hpp|rs|go|java|html|css|xml|sql|rst|dat|out|lock))"
    r"(?![\w/-])",
    re.IGNORECASE,
)
"""A file name with one of the common extensions (stricter than the paths attached: a
name this matches is taken for a file the user means, present or not)."""


@dataclass(frozen=True)
class AttachLimits:
    """How much context a task gets (from the settings)."""

    named_files: int = 3
    max_lines: int = 200
    listing: int = 40


def small_listing(root: Path, limit: int) -> list[str] | None:
    """Relative paths of the workspace's files; ``None`` when there are more than ``limit``.

    Links that lead out of the workspace are not listed. The walk stops at the limit, so a
    large tree costs little.
    """
    found: list[str] = []
    root = root.resolve()
    for path in walk_files(root, hidden=False, within=root):
        if len(found) == limit:
            return None
        found.append(path.relative_to(root).as_posix())
    return found


def named_files(task: str, root: Path, listing: list[str] | None, limit: int) -> list[str]:
    """Workspace files the task names, as a relative path or a file name unique in ``listing``.

    Hidden and secret-looking files are left out, as are links to them or out of the
    workspace, and hard-linked files.
    """
    found: list[str] = []
    root = root.resolve()
    for token in _PATH_LIKE.findall(task):
        rel = _locate(token.rstrip("."), root, listing)
        if rel and rel not in found and attachable(root, rel) is not None:
            found.append(rel)
        if len(found) == limit:
            break
    return found


def _locate(token: str, root: Path, listing: list[str] | None) -> str | None:
    if (root / token).is_file():
        return token
    if listing and "/" not in token:
        matches = [p for p in listing if p.rsplit("/", 1)[-1] == token]
        if len(matches) == 1:
            return matches[0]
    return None


def attachable(root: Path, rel: str) -> Path | None:
    """The file ``rel`` names under the resolved ``root``, or ``None`` if it may not be attached.

    Refused: a path (or, for a link, its target) outside the workspace, hidden or
    secret-looking (any part of it), not a regular file, or with more than one hard link.
    """
    try:
        full = (root / rel).resolve(strict=True)
        info = full.stat()
    except (OSError, RuntimeError):  # missing, a dangling link or a link loop
        return None
    if not full.is_relative_to(root) or not full.is_file() or info.st_nlink > 1:
        return None
    target = full.relative_to(root).as_posix()
    if _private(rel) or _private(target):
        return None
    return full


def _private(rel: str) -> bool:
    return any(p.startswith(".") for p in rel.split("/")) or is_secret_path(rel)


def _text_lines(path: Path) -> tuple[list[str], bool] | None:
    """The lines of a text file's first ``READ_BYTES``, and whether it goes on after them."""
    try:
        with path.open("rb") as handle:
            data = handle.read(READ_BYTES + 1)
    except OSError:
        return None
    if b"\0" in data[:8192] or path.suffix.lower() in BINARY_SUFFIXES:
        return None
    text = data[:READ_BYTES].decode("utf-8", errors="replace")
    if text.count("\ufffd") > max(8, len(text) // 100):  # not UTF-8 text
        return None
    cut = len(data) > READ_BYTES
    lines = text.splitlines()
    return (lines[:-1] if cut else lines), cut


def absent_files(task: str, root: Path, listing: list[str] | None) -> list[str]:
    """File names the task mentions that are not in the workspace.

    A bare name counts as absent only when the whole workspace is listed (``listing``)
    and no file there has that name.
    """
    absent: list[str] = []
    for token in FILE_NAME.findall(task):
        if token in absent or _locate(token, root, listing):
            continue
        if "/" in token or (listing is not None and _is_bare_absent(token, listing)):
            absent.append(token)
    return absent


def _is_bare_absent(name: str, listing: list[str]) -> bool:
    return not any(p.rsplit("/", 1)[-1] == name for p in listing)


DOCUMENT_SUFFIXES = (".pdf", ".docx", ".xlsx", ".xlsm")
"""Documents the document tools read (they are not text to attach)."""
BINARY_SUFFIXES = (
    *DOCUMENT_SUFFIXES, ".zip", ".gz", ".tar", ".png", ".jpg", ".jpeg", ".gif", ".webp",
    ".bmp", ".ico", ".pyc", ".so", ".o", ".a", ".exe", ".dll", ".class", ".jar", ".sqlite",
)  # fmt: skip
"""Files never attached as text, whatever their first bytes look like."""


def attachment_text(task: str, root: Path, limits: AttachLimits) -> str | None:
    """The context message for ``task`` in workspace ``root``; ``None`` if nothing to attach."""
    listing = small_listing(root, limits.listing) if limits.listing else None
    parts: list[str] = []
    if listing:
        files = f"{len(listing)} file{'s' if len(listing) != 1 else ''}"
        parts.append(f"The workspace holds {files}:\n" + "\n".join(listing))
    # Only beside a listing: in an empty or a large workspace the first look says as much.
    absent = absent_files(task, root, listing) if listing else []
    if absent:
        parts.append("No file of this name is in the workspace now: " + ", ".join(absent))
    names = named_files(task, root, listing, limits.named_files) if limits.named_files else []
    for rel in names:
        full = attachable(root.resolve(), rel)  # again: the file may have changed meanwhile
        read = _text_lines(full) if full is not None else None
        if read is None:
            if full is not None and full.suffix.lower() in DOCUMENT_SUFFIXES:
                parts.append(
                    f"{rel} is a document: ask it with ask_document or read it with read_document"
                )
            continue
        lines, cut = read
        shown = lines[: limits.max_lines]
        more = len(lines) - len(shown)
        if cut:
            tail, count = "\n[the file goes on: read the rest with read_code]", "large file"
        else:
            tail = f"\n[{more} more lines: read them with read_code]" if more else ""
            count = f"{len(lines)} line{'s' if len(lines) != 1 else ''}{table_note(rel, lines)}"
        parts.append(
            f"--- {rel} ({count}) ---\n" + "\n".join(shown) + tail + f"\n--- end of {rel} ---"
        )
    if not parts:
        return None
    return "Workspace context for this task (attached by Jarvis):\n\n" + "\n\n".join(parts)
