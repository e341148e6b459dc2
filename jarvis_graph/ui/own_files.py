"""Folders and files the console writes, created without following links.

A workspace is often a cloned repository, so a name under its ``.jarvis/`` may be a link a
stranger put there (``.jarvis/uploads -> ~/.ssh``). Jarvis' own folders are made one part at
a time and a part that is a link, or not a folder, is refused; files are opened with
``O_NOFOLLOW``, so a link planted in place of a file is refused too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE = 0o700


class OwnFileError(ValueError):
    """A folder or file Jarvis writes is a link or not what it should be; the message says."""


def own_dir(root: Path, *parts: str, mode: int = PRIVATE) -> Path:
    """``root/parts...``, each part made (``mode``) or checked to be a real folder.

    ``root`` is the user's choice (the workspace, the Jarvis home) and may itself be a link.

    Raises:
        OwnFileError: A part is a link, or exists and is not a folder.
    """
    path = root
    for part in parts:
        path = path / part
        try:
            os.mkdir(path, mode)
        except FileExistsError:
            pass
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            msg = (
                f"{path} is a link to {os.readlink(path)}; Jarvis writes its own files there "
                "and does not follow links: remove the link"
            )
            raise OwnFileError(msg)
        if not stat.S_ISDIR(info.st_mode):
            raise OwnFileError(f"{path} is not a folder; remove it or move it away")
    return path


def open_own(path: Path, *, exclusive: bool = False, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened for writing (truncated), never through a link.

    Args:
        path: The file, in a folder made by :func:`own_dir`.
        exclusive: Refuse a file that exists (an upload never replaces another file).
        mode: Permissions of a new file.

    Raises:
        OwnFileError: ``path`` is a link, or (``exclusive``) exists.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    if exclusive:
        flags |= os.O_EXCL
    try:
        return os.open(path, flags, mode)
    except FileExistsError:
        raise OwnFileError(f"{path} exists already; not replacing it") from None
    except OSError as exc:  # ELOOP: the name is a link
        msg = f"cannot write {path} ({exc.strerror}); Jarvis does not write through links"
        raise OwnFileError(msg) from None


def write_own(path: Path, data: bytes, *, exclusive: bool = False) -> Path:
    """Write ``data`` to ``path`` through :func:`open_own`; ``path``.

    Raises:
        OwnFileError: As :func:`open_own`.
    """
    fd = open_own(path, exclusive=exclusive)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path
