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
import errno
import functools
import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path

_serial = itertools.count()


@dataclass
class PidsCgroup:
    """One cgroup made for one command; :meth:`remove` when the command has ended."""

    path: Path
    procs_fd: int

    def remove(self) -> None:
        """Close the ``cgroup.procs`` handle and remove the cgroup once it is empty.

        The command's processes were killed, but the kernel may still be taking the last
        of them down (a PID namespace ends asynchronously): removal is retried for up to
        :data:`REMOVE_SECONDS`. One left behind is removed by the next Jarvis process
        (:func:`sweep`).
        """
        with contextlib.suppress(OSError):
            os.close(self.procs_fd)
        deadline = time.monotonic() + REMOVE_SECONDS
        while True:
            try:
                self.path.rmdir()
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    return
            time.sleep(0.01)


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


PREFIX = "jarvis-sandbox-"
REMOVE_SECONDS = 2.0


@functools.cache
def sweep(parent: Path) -> int:
    """Remove the empty cgroups of Jarvis processes that have ended; how many (once a process).

    A cgroup is named for the process that made it (``jarvis-sandbox-<pid>-<n>``): one of a
    live process is its own to remove, and one still holding a process is left alone.
    """
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            owner = entry.name.removeprefix(PREFIX).split("-")[0]
            if not entry.name.startswith(PREFIX) or not owner.isdigit():
                continue
            if int(owner) != os.getpid() and not os.path.exists(f"/proc/{owner}"):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)
                    removed += 1
    return removed


def make_pids_cgroup(limit: int) -> PidsCgroup | None:
    """A new cgroup allowing ``limit`` processes (``None`` where none can be made)."""
    parent = pids_parent()
    if parent is None:
        return None
    sweep(parent)
    path = parent / f"{PREFIX}{os.getpid()}-{next(_serial)}"
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
