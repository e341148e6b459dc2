"""Reading the files a scan names: regular files only, never blocking, with a size cap."""

from __future__ import annotations

import os
import stat
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
