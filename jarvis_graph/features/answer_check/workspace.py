"""The workspace as the answer check sees it: files found by path or name, a fingerprint."""

from __future__ import annotations

import hashlib
from itertools import islice
from pathlib import Path

from jarvis_graph.secrets import is_secret_path
from jarvis_graph.tools.builtin import walk_files

MAX_WALK = 5000
"""Files looked at to find a file by its name alone, or to fingerprint the workspace."""
MAX_READ = 1 << 20
"""Bytes of a named file read to look for the question's terms."""


def _by_name(root: Path, name: str) -> tuple[list[Path], bool]:
    """Files named ``name`` anywhere in the workspace, and whether the walk saw them all.

    The walk stops after :data:`MAX_WALK` files; hidden files, caches and links out of the
    workspace are not looked at.
    """
    walk = walk_files(root, hidden=False, within=root)
    seen = list(islice(walk, MAX_WALK + 1))
    return [p for p in seen[:MAX_WALK] if p.name == name], len(seen) <= MAX_WALK


def exists(root: Path, rel: str) -> bool:
    """Whether ``rel`` names a file in the workspace: as a path, or by its name alone."""
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        return True  # outside: not this check's business (tools refuse such paths)
    if target.exists():
        return True
    if "/" in rel:
        return False
    found, complete = _by_name(root, rel)
    return bool(found) or not complete  # too large to tell: give the benefit of the doubt


def workspace_digest(workspace: Path) -> str | None:
    """A fingerprint of the workspace's files (paths, sizes, modification times).

    Hidden files and folders (``.jarvis``, ``.git``) and caches are left out. ``None``
    when the workspace holds more than :data:`MAX_WALK` files.
    """
    root = workspace.resolve()
    digest = hashlib.sha256()
    for index, path in enumerate(walk_files(root, hidden=False, within=root)):
        if index >= MAX_WALK:
            return None
        try:
            info = path.lstat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def find_file(root: Path, rel: str) -> Path | None:
    """The workspace file ``rel`` names (a path, or a name unique in the workspace).

    Never a hidden or secret-looking file (whose content is nobody's evidence), nor one
    whose real path leaves the workspace.
    """
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        return None
    if not target.is_file():
        if "/" in rel:
            return None
        found, _ = _by_name(root, rel)
        if len(found) != 1:
            return None
        target = found[0].resolve()
    inside = target.relative_to(root).as_posix()
    if any(part.startswith(".") for part in inside.split("/")) or is_secret_path(inside):
        return None
    return target


def read_head(path: Path) -> str | None:
    """The first :data:`MAX_READ` characters of ``path``; ``None`` when it cannot be read.

    A huge file is not read whole.
    """
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_READ)
    except OSError:
        return None
