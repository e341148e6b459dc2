"""Reading and writing text files while keeping their encoding and line endings.

Writes are atomic: the bytes go to a temporary file in the same folder, which then
replaces the target with ``os.replace``, so a reader sees the old or the new file, never a
part. :func:`write_all` writes several files and puts every one back if any write fails.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jarvis_graph.editing.errors import EditError

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True)
class TextFile:
    """A decoded file; ``text`` has LF newlines even when the file uses CRLF."""

    text: str
    encoding: str = "utf-8"
    newline: str = "\n"
    bom: bytes = b""

    def encode(self, text: str) -> bytes:
        """``text`` (with LF newlines) as bytes in this file's encoding and newlines.

        Raises:
            EditError: The text has characters the file's encoding cannot hold.
        """
        if self.newline == "\r\n":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            bad = text[exc.start : exc.end]
            msg = (
                f"the new text has {bad!r}, which the file's encoding {self.encoding} cannot "
                "hold; write it without that character (or an escape the language allows)"
            )
            raise EditError("file", msg) from exc

    def normalise(self, text: str) -> str:
        """Text from the model in this file's in-memory form (CRLF -> LF where it applies)."""
        if self.newline == "\r\n" or "\r" not in self.text:
            return text.replace("\r\n", "\n")
        return text


def decode(data: bytes, label: str) -> TextFile:
    """Decode a file's bytes, detecting BOMs, UTF-8 and (as a lossless fallback) Latin-1.

    Raises:
        EditError: The file looks binary.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _with_newlines(data[len(bom) :].decode(encoding), encoding, bom)
    if b"\0" in data[:8192]:
        msg = f"{label} looks binary ({len(data)} bytes); only text files can be edited"
        raise EditError("file", msg)
    try:
        return _with_newlines(data.decode("utf-8"), "utf-8", b"")
    except UnicodeDecodeError:
        return _with_newlines(data.decode("latin-1"), "latin-1", b"")


def _with_newlines(text: str, encoding: str, bom: bytes) -> TextFile:
    crlf = text.count("\r\n")
    if crlf and crlf == text.count("\n"):
        return TextFile(text.replace("\r\n", "\n"), encoding, "\r\n", bom)
    return TextFile(text, encoding, "\n", bom)


def read_text_file(path: Path, label: str) -> TextFile | None:
    """The decoded file, or ``None`` when it does not exist.

    Raises:
        EditError: The path is a folder, unreadable, or binary.
    """
    if not path.exists():
        return None
    if not path.is_file():
        msg = f"{label} is not a regular file (a folder?); give the path of a file"
        raise EditError("file", msg)
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{label} cannot be read: {exc.strerror or exc}"
        raise EditError("file", msg) from exc
    return decode(data, label)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (keeps an existing file's permissions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_all(changes: list[tuple[Path, bytes]]) -> None:
    """Write every file atomically; if one write fails, restore the ones already written.

    Raises:
        EditError: A write failed (every file is back as it was).
    """
    before = [(path, path.read_bytes() if path.is_file() else None) for path, _ in changes]
    created = [d for d in _missing_dirs([p for p, _ in changes])]
    done = 0
    try:
        for path, data in changes:
            write_atomic(path, data)
            done += 1
    except OSError as exc:
        _restore(before[:done], created)
        msg = f"writing {changes[done][0]} failed ({exc.strerror or exc}); no file was changed"
        raise EditError("file", msg) from exc


def _missing_dirs(paths: list[Path]) -> list[Path]:
    missing: set[Path] = set()
    for path in paths:
        parent = path.parent
        while not parent.exists():
            missing.add(parent)
            parent = parent.parent
    return sorted(missing, key=lambda p: len(p.parts), reverse=True)


def _restore(before: list[tuple[Path, bytes | None]], created: list[Path]) -> None:
    for path, data in reversed(before):
        with contextlib.suppress(OSError):
            if data is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, data)
    for folder in created:  # deepest first
        with contextlib.suppress(OSError):
            folder.rmdir()
