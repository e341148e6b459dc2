"""Files of the system that only their owner may read: kept from sandboxed commands of root.

A sandboxed command keeps Jarvis' uid. For any other user the system's own permissions
already keep ``/etc/shadow``, TLS keys in ``/etc/ssl/private`` or a database's data folder
out of reach; a command of root owns them, capabilities or not. So when Jarvis runs as
root, what the system keeps from other users (no read bit for "others") is kept from the
command too: covered at the ``bwrap`` level, left out of the ``landlock`` level's rules.

The folders where such files live are scanned a few levels deep, once per process.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

SCANNED = {"/etc": 4, "/var": 4, "/srv": 3, "/opt": 3, "/mnt": 2, "/media": 2, "/boot": 2}
"""Folders scanned for owner-only files, and how deep."""
MAX_ENTRIES = 100_000


def _scan(folder: str, depth: int, found: list[Path], budget: list[int]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            if mode & 0o005 != 0o005:  # others may not list or enter it
                found.append(Path(entry.path))
            elif depth > 1:
                _scan(entry.path, depth - 1, found, budget)
        elif stat.S_ISREG(mode) and not mode & 0o004:
            found.append(Path(entry.path))


@functools.cache
def owner_only() -> tuple[Path, ...]:
    """Owner-only files and folders of the system (``()`` unless Jarvis runs as root)."""
    if os.geteuid() != 0:
        return ()
    found: list[Path] = []
    budget = [MAX_ENTRIES]
    for folder, depth in SCANNED.items():
        if os.path.isdir(folder) and not os.path.islink(folder):
            _scan(folder, depth, found, budget)
    return tuple(found)


def readable_parts(root: Path, excluded: tuple[Path, ...]) -> list[Path]:
    """Paths whose trees together hold everything under ``root`` but ``excluded``.

    For Landlock, which can only add rights: ``root`` itself when nothing under it is
    excluded, else its entries, each split the same way.
    """
    inside = [p for p in excluded if p != root and p.is_relative_to(root)]
    if root in excluded:
        return []
    if not inside:
        return [root]
    parts: list[Path] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    for entry in entries:
        parts += readable_parts(entry, tuple(inside))
    return parts
