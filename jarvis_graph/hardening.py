"""Keep the keys in a running Jarvis process from other processes of the same user.

A process of the same user may, by default, read another's ``/proc/<pid>/environ`` (the
provider keys the user exported) and ``/proc/<pid>/mem`` (every key Jarvis loaded), or
attach a debugger to it. A *non-dumpable* process (``prctl(PR_SET_DUMPABLE, 0)``) refuses
all of these to any process without ``CAP_SYS_PTRACE``, writes no core dump, and has its
``/proc/<pid>/`` files owned by root. Programs Jarvis starts are dumpable again (the kernel
resets the flag on ``exec``), so scripts and servers run as usual.

Base layer: standard library only, and cheap to import (the ``jarvis`` entry point calls
it before anything else loads).
"""

from __future__ import annotations

import ctypes
import sys

PR_SET_DUMPABLE = 4
"""From ``<linux/prctl.h>``."""


def harden_process() -> bool:
    """Make this process non-dumpable, on Linux; elsewhere nothing is done.

    Never fails the run: a libc that cannot be loaded or a refused call (a seccomp policy)
    leaves the process as it was.

    Returns:
        Whether the process is now non-dumpable.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no libc to load, or one without prctl
        return False
