"""Reading the files a scan names: regular files only, never blocking, never outside the tree.

A source or header is read with a size cap; a symlink or an include path that leads out of
the scanned tree is not followed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 16_000_000  # an amalgamation such as sqlite3.c (9 MB) is still read


def read_regular(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes, str]:
    """``(data, "")``, or ``(b"", reason)``: ``unreadable``, ``not a regular file``, ``huge``.

    The file is opened without blocking and checked on the open descriptor, so a FIFO or a
    device named like source (or swapped in after a look at the name) cannot hold up a scan.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b"", "unreadable"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"", "not a regular file"
        if info.st_size > max_bytes:
            return b"", "huge"
        with open(fd, "rb", closefd=False) as file:
            return file.read(), ""
    except OSError:
        return b"", "unreadable"
    finally:
        os.close(fd)


def inside(real_root: str, path: str | Path) -> bool:
    """Whether ``path``, resolved (symlinks followed), is ``real_root`` or under it.

    ``real_root`` is already resolved (``os.path.realpath``).
    """
    return Path(os.path.realpath(path)).is_relative_to(real_root)


@dataclass(frozen=True)
class Tree:
    """What a scan may read besides a file: its tree's resolved root and headers.

    Attributes:
        root: the scanned folder, resolved; nothing outside it is read (a symlink or an
            ``#include "../../x.h"`` that leads out is not followed).
        headers: header file name -> path, the tree's headers, which stand in for the
            build's include path.
    """

    root: str
    headers: dict[str, str] = field(default_factory=dict)

    def header(self, source: Path, name: str) -> str | None:
        """The header ``#include "name"`` of ``source`` reads, if it is inside the tree.

        It is looked up beside the file, then by file name among the tree's headers.
        """
        candidate = source.parent / name
        if candidate.is_file() and inside(self.root, candidate):
            return str(candidate)
        return self.headers.get(Path(name).name)
