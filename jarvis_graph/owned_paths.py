"""Jarvis' own folders and files in a workspace: created private, never through a link.

A workspace may be a repository someone else wrote, and it can ship ``.jarvis/tool_outputs``
(or ``.jarvis`` itself, or ``.git/info``) as a symbolic link to a folder outside it: writing
there would put Jarvis' files, or the user's secrets, wherever the link points. Every folder
and file Jarvis creates for itself under a workspace goes through :func:`owned_dir` and
:func:`open_owned`, which check each component below the workspace with ``lstat`` and open
files with ``O_NOFOLLOW``: a link (or a file where a folder belongs) is refused with
:class:`OwnedPathError`, and nothing is written.

What Jarvis creates is private: folders ``0700``, files ``0600`` (session and memory stores
hold conversations, tool outputs may hold anything a tool printed).

Config layer: imports nothing of Jarvis.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class OwnedPathError(OSError):
    """A path Jarvis writes its own data to is a link or not a folder; nothing was written."""


def _refuse(path: Path, what: str) -> OwnedPathError:
    if what == "link":
        try:
            target = f" (to {os.readlink(path)})"
        except OSError:
            target = ""
        found = f"a symbolic link{target}"
    else:
        found = what
    msg = (
        f"{path} is {found}; Jarvis writes its own files only into real folders inside the "
        f"workspace and wrote nothing. Remove it (rm {path}) and run again."
    )
    return OwnedPathError(msg)


def split_owned(path: Path) -> tuple[Path, Path]:
    """``path`` as (base, rel) for the functions here: checked from the folder holding ``.jarvis``.

    ``<ws>/.jarvis/mcp_logs`` gives ``(<ws>, .jarvis/mcp_logs)``; a path with no ``.jarvis``
    part (a user-level folder) is checked from its parent.
    """
    parts = Path(path).parts
    if ".jarvis" in parts:
        at = len(parts) - 1 - parts[::-1].index(".jarvis")
        return Path(*parts[:at]), Path(*parts[at:])
    return Path(path).parent, Path(Path(path).name)


def owned_dir(base: Path, rel: str | Path) -> Path:
    """The folder ``base/rel``, created where missing (``0700``), no component a link.

    ``base`` (the workspace) is taken as it is, a link or not: it is the user's choice
    (created, with its parents, if missing).

    Raises:
        OwnedPathError: A component of ``rel`` is a symbolic link or a file.
    """
    return _walk(Path(base), Path(rel), create=True)


def check_owned(base: Path, rel: str | Path) -> None:
    """Check what exists of ``base/rel`` as :func:`owned_dir` would, creating nothing.

    Raises:
        OwnedPathError: An existing component of ``rel`` is a symbolic link or a file.
    """
    _walk(Path(base), Path(rel), create=False)


def _walk(path: Path, rel: Path, create: bool) -> Path:
    if create:  # the base is the user's (a workspace, a store's folder): made as asked
        path.mkdir(parents=True, exist_ok=True)
    for part in rel.parts:
        path = path / part
        if create:
            try:
                os.mkdir(path, FOLDER_MODE)
            except FileExistsError:
                pass
        try:
            info = os.lstat(path)
        except FileNotFoundError:  # only when not creating: nothing more exists below
            return path
        if stat.S_ISLNK(info.st_mode):
            raise _refuse(path, "link")
        if not stat.S_ISDIR(info.st_mode):
            raise _refuse(path, "a file, not a folder")
    return path


def open_owned(base: Path, rel: str | Path, flags: int = os.O_WRONLY | os.O_CREAT) -> int:
    """A descriptor of the file ``base/rel`` (created ``0600``), its folders by :func:`owned_dir`.

    The file itself is opened with ``O_NOFOLLOW``: a link in its place is refused. So is
    anything but a regular file (a FIFO planted there would block the open for good, a
    device would take what is written): the open does not wait (``O_NONBLOCK``, which a
    regular file ignores) and what was opened is checked.

    Raises:
        OwnedPathError: The file or one of its folders is a link (or the wrong kind).
    """
    rel = Path(rel)
    folder = owned_dir(base, rel.parent)
    path = folder / rel.name
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK, FILE_MODE)
    except OSError as exc:
        if os.path.islink(path):  # ELOOP from O_NOFOLLOW
            raise _refuse(path, "link") from None
        if not os.path.isfile(path) and os.path.exists(path):  # a FIFO no one reads: ENXIO
            raise _refuse(path, "not a regular file") from None
        raise exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _refuse(path, "not a regular file")
    return fd


def write_owned(
    base: Path, rel: str | Path, data: str | bytes, append: bool = False, exclusive: bool = False
) -> Path:
    """Write (or append) ``data`` (text as UTF-8) to the Jarvis-owned file ``base/rel``; its path.

    Args:
        base: The folder checks start from (see :func:`owned_dir`).
        rel: The file, relative to ``base``.
        data: What to write.
        append: Add to the end instead of replacing.
        exclusive: Refuse a file that exists (an upload never replaces another file).

    Raises:
        OwnedPathError: The file or one of its folders is a link (or the wrong kind), or
            (``exclusive``) the file exists.
    """
    mode = os.O_APPEND if append else os.O_TRUNC
    if exclusive:
        mode |= os.O_EXCL
    try:
        fd = open_owned(base, rel, os.O_WRONLY | os.O_CREAT | mode)
    except FileExistsError:
        msg = f"{Path(base) / rel} exists already; Jarvis wrote nothing over it"
        raise OwnedPathError(msg) from None
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with os.fdopen(fd, "wb") as handle:
        handle.write(raw)
    return Path(base) / rel


def owned_file(base: Path, rel: str | Path) -> Path:
    """``base/rel`` created empty (``0600``) if missing, for a library that opens it by name.

    SQLite gives its ``-wal`` and ``-shm`` files the database file's mode, so a store
    created here stays private as a whole. A store an older Jarvis left readable by others
    is made ``0600`` too (only the user's own files: the mode of another's is not ours).

    Raises:
        OwnedPathError: The file or one of its folders is a link (or the wrong kind).
    """
    rel = Path(rel)
    path = owned_dir(base, rel.parent) / rel.name
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
    except FileExistsError:
        # An existing file is checked by lstat, never opened: closing any descriptor of a
        # file drops every POSIX lock this process holds on it, SQLite's included.
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise _refuse(path, "link") from None
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "not a regular file") from None
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, FILE_MODE)
    else:
        os.close(fd)  # new, so no one holds a lock on it yet
    return path


def read_owned_tail(base: Path, rel: str | Path, most: int) -> bytes | None:
    """The last ``most`` bytes of the file ``base/rel`` Jarvis writes to, or ``None``.

    Read back only if it is what Jarvis would have written to: a regular file, itself and
    its folders below ``base`` no link (a repository's ``.jarvis/mcp_logs/x.log ->
    ~/.aws/credentials`` would otherwise be quoted in an error), and never more than
    ``most`` bytes of it (a server's log, someone's exclude file, may be huge). ``None``
    when it is missing or not such a file.
    """
    rel = Path(rel)
    try:
        check_owned(base, rel.parent)
        fd = os.open(Path(base) / rel, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:  # missing, a link (ELOOP), or a folder of it a link (OwnedPathError)
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        handle.seek(max(0, info.st_size - most))
        return handle.read(most)
