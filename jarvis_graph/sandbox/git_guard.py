"""The files through which git runs code, in the workspace's repository: pinned or undone.

Your git, run later in the workspace, runs what the repository's git folders say: their
``hooks/``, the commands their ``config`` names (``core.fsmonitor``, ``core.hooksPath``,
filters), and, through ``commondir`` and ``config.worktree`` (see gitrepository-layout),
the settings and hooks of another folder. A sandboxed command may change the workspace,
``.git`` included (``git commit`` works), so:

- what exists of these in every git folder of the workspace (``.git``, its submodules'
  ``.git/modules/*``, its linked worktrees' ``.git/worktrees/*``) is mounted read-only by
  the ``bwrap`` level (see :func:`pinned`), and ``.git`` itself is a mount point, so it
  cannot be renamed away and replaced by a copy;
- a ``commondir`` or ``config.worktree`` the command created is moved out of the
  repository when it ends, into ``.jarvis/quarantine/`` (see :func:`undo_new_redirects`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from jarvis_graph.owned_paths import owned_dir

REDIRECTS = ("commondir", "config.worktree")
"""Files in a git folder that make git read its settings (and hooks) from elsewhere."""
PINNED = ("hooks", "config", *REDIRECTS)
MAX_DEPTH = 4


def git_folders(ws: Path) -> list[Path]:
    """The workspace's git folders: ``.git`` and those of its submodules and worktrees."""
    top = ws / ".git"
    if not top.is_dir() or top.is_symlink():
        return []
    found = [top]
    todo = [(top / "modules", 1), (top / "worktrees", 1)]
    while todo:
        folder, depth = todo.pop()
        try:
            entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if (path / "HEAD").exists():
                found.append(path)
            if depth < MAX_DEPTH:  # submodules nest: modules/a/modules/b
                todo += [(path, depth + 1), (path / "modules", depth + 1)]
    return found


def pinned(ws: Path) -> list[Path]:
    """What exists of :data:`PINNED` in the workspace's git folders (never a link)."""
    return [
        path
        for folder in git_folders(ws)
        for name in PINNED
        if (path := folder / name).exists() and not path.is_symlink()
    ]


def redirects(ws: Path) -> set[Path]:
    """The :data:`REDIRECTS` files present in the workspace's git folders."""
    return {
        folder / name
        for folder in git_folders(ws)
        for name in REDIRECTS
        if os.path.lexists(folder / name)
    }


def undo_new_redirects(ws: Path, before: set[Path]) -> list[str]:
    """Move redirect files that appeared since ``before`` into ``.jarvis/quarantine/``.

    Returns:
        One line per file moved, naming where it went.
    """
    new = sorted(redirects(ws) - before)
    if not new:
        return []
    target = ws / ".jarvis" / "quarantine" / time.strftime("%Y%m%d-%H%M%S")
    notes = []
    for path in new:
        rel = path.relative_to(ws)
        dest = target / rel
        # A command at the landlock level can write .jarvis: no folder of the way may be
        # a link it planted (raises OwnedPathError, an OSError, naming it).
        owned_dir(ws, dest.parent.relative_to(ws))
        os.replace(path, dest)  # a link is moved as a link: nothing is followed
        notes.append(
            f"moved {rel} out of the repository to {dest.relative_to(ws)}: it would make "
            "git read its settings and hooks from elsewhere"
        )
    return notes
