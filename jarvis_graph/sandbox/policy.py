"""What a sandboxed command may touch, and the paths that follow from it.

A :class:`Policy` names the workspace, the network, extra paths and limits. The functions
here turn it into paths, shared by both levels: which folders are hidden (the home
folders, ``/tmp``, ``/run``), which are shown again (the Python that runs Jarvis, ``PATH``
folders and the toolchain folders they belong to, an enclosing repository's root), and
which secret-looking files stay covered in what is shown.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph.secrets import is_secret_path

HIDDEN_SYSTEM = ("/tmp", "/var/tmp", "/run", "/var/run", "/root", "/home")
"""Folders a ``bwrap`` command sees empty: host sockets, other users' and root's files."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed command (each process of it, the count for all)."""

    cpu_seconds: int = 600
    memory_bytes: int = 4 << 30
    processes: int = 512
    file_bytes: int = 2 << 30


@dataclass(frozen=True)
class Policy:
    """What a sandboxed command may touch."""

    workspace: Path
    network: str = "none"
    """``none``: no network (bwrap: a network namespace of its own; landlock: no sockets
    but pipes); ``allow``: the machine's network."""
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    workspace_writable: bool = True
    limits: Limits = field(default_factory=Limits)
    home: Path = field(default_factory=Path.home)
    data_dirs: tuple[Path, ...] = ()
    """Jarvis' own data folders (``~/.jarvis``): hidden like the home folder."""


class SandboxUnavailable(RuntimeError):
    """No sandbox level works here and the user did not turn the sandbox off."""


def real(path: Path | str) -> Path:
    """``path`` with every link resolved (what the kernel will find there)."""
    return Path(os.path.realpath(path))


def inside(path: Path, roots: list[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or below one.

    Resolved paths, compared as text: ``Path.is_relative_to`` parses both paths at every
    call, and this runs thousands of times per script.
    """
    text = str(path)
    for root in roots:
        top = str(root)
        if text == top or text.startswith(top if top == "/" else top + "/"):
            return True
    return False


def runtime_paths() -> list[Path]:
    """What a launcher needs to start: this Python and Jarvis' own launcher files."""
    found = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(sys.base_exec_prefix),
        real(sys.executable).parent,
        Path(__file__).parent,  # confine.py
        Path(__file__).parents[1] / "tools",  # the script reaper
    ]
    return [real(p) for p in found]


def path_dirs(env: Mapping[str, str], hidden: list[Path]) -> list[Path]:
    """``PATH``'s folders, but none that is a hidden folder or holds one (``PATH=~:...``)."""
    found = [real(p) for p in env.get("PATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    return [p for p in found if not any(h == p or h.is_relative_to(p) for h in hidden)]


def hidden_folders(policy: Policy) -> list[Path]:
    """The folders a command sees empty (bwrap) or not at all (landlock)."""
    hidden = [real(p) for p in HIDDEN_SYSTEM if not os.path.islink(p) and os.path.isdir(p)]
    hidden += [real(policy.home), *(real(p) for p in policy.data_dirs)]
    return [p for p in dict.fromkeys(hidden) if p.is_dir() and p != Path("/")]


def enclosing_repository(ws: Path, stop: tuple[Path, ...]) -> list[Path]:
    """The root of the git repository the workspace lies in below its top (``[]``: none).

    A workspace may be a folder of a larger repository; ``git status`` there needs the
    repository's root, which is shown read-only (the workspace alone stays writable), its
    ``.jarvis/`` hidden. The search stops below the folders in ``stop`` (the home folder).
    """
    for folder in ws.parents:
        if folder in stop:  # a home folder kept in git would show all of it
            break
        if (folder / ".git").exists():
            return [folder]
    return []


def toolchain_roots(path_dirs: list[Path], hidden: list[Path]) -> list[Path]:
    """The install folders of ``PATH`` folders lying in a hidden folder (``~/.pyenv``).

    A tool installed in the home folder often needs more of its install folder than the
    folder on ``PATH`` (a pyenv shim runs ``~/.pyenv/libexec/pyenv``): the folder right
    below the hidden one is shown read-only, its secret-looking files covered (see
    :func:`_covered`).
    """
    roots = []
    for path in path_dirs:
        for base in hidden:
            if path != base and path.is_relative_to(base):
                roots.append(base / path.relative_to(base).parts[0])
    return [root for root in dict.fromkeys(roots) if root.is_dir()]


_scanned: dict[Path, tuple[Path, ...]] = {}
SCAN_DEPTH = 3
SCAN_ENTRIES = 5000


def secret_entries(root: Path) -> tuple[Path, ...]:
    """Secret-looking files and folders (by name) in ``root``, a few levels deep, cached.

    A root too large to scan whole is covered whole: what was not looked at is not shown.
    """
    if root in _scanned:
        return _scanned[root]
    found: list[Path] = []
    todo, seen = [(root, 0)], 0
    while todo:
        folder, depth = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > SCAN_ENTRIES:
                _scanned[root] = (root,)
                return (root,)
            path = Path(entry.path)
            if is_secret_path(entry.name):
                found.append(path)
            elif depth + 1 < SCAN_DEPTH and entry.is_dir(follow_symlinks=False):
                todo.append((path, depth + 1))
    _scanned[root] = tuple(found)
    return _scanned[root]
