"""A pids-limited cgroup per sandboxed command, where this machine lets Jarvis make one.

``RLIMIT_NPROC`` does not apply to root, and for other users it counts every process of
the user, so a fork bomb is bounded reliably only by a cgroup's ``pids.max``. A cgroup is
made where the process may: a v2 cgroup whose ``pids`` controller is delegated to it, or
the v1 ``pids`` hierarchy when running as root. The sandboxed launcher joins it itself,
through an open ``cgroup.procs`` passed to it (:mod:`jarvis_graph.sandbox.confine`), so
everything the command starts is counted from its first fork.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

_serial = itertools.count()


@dataclass
class PidsCgroup:
    """One cgroup made for one command; :meth:`remove` when the command has ended."""

    path: Path
    procs_fd: int

    def remove(self) -> None:
        """Close the ``cgroup.procs`` handle and remove the (then empty) cgroup."""
        with contextlib.suppress(OSError):
            os.close(self.procs_fd)
        with contextlib.suppress(OSError):
            self.path.rmdir()  # fails while a process is still in it: left for the kernel


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy (``""`` is v2), from /proc/self/cgroup."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _mounts() -> dict[str, Path]:
    """Mount points of the cgroup hierarchies: ``""`` for v2, ``"pids"`` for v1 pids."""
    found: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, extra = left.split(), right.split()
            if len(fields) < 5 or len(extra) < 3:
                continue
            if extra[0] == "cgroup2":
                found.setdefault("", Path(fields[4]))
            elif extra[0] == "cgroup" and "pids" in extra[2].split(","):
                found.setdefault("pids", Path(fields[4]))
    return found


@functools.cache
def pids_parent() -> Path | None:
    """The folder to make per-command cgroups in (``None``: no usable pids controller)."""
    own, mounts = _own_paths(), _mounts()
    if "" in mounts:  # v2: only where pids is enabled for our cgroup's children
        base = mounts[""] / own.get("", "/").lstrip("/")
        with contextlib.suppress(OSError):
            if "pids" in (base / "cgroup.subtree_control").read_text().split() and os.access(
                base, os.W_OK
            ):
                return base
    if "pids" in mounts:
        base = mounts["pids"] / own.get("pids", "/").lstrip("/")
        if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
            return base
    return None


def make_pids_cgroup(limit: int) -> PidsCgroup | None:
    """A new cgroup allowing ``limit`` processes (``None`` where none can be made)."""
    parent = pids_parent()
    if parent is None:
        return None
    path = parent / f"jarvis-sandbox-{os.getpid()}-{next(_serial)}"
    try:
        path.mkdir()
    except OSError:
        return None
    try:
        (path / "pids.max").write_text(str(limit))
        fd = os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return PidsCgroup(path, fd)
