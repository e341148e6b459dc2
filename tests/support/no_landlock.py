"""Start a command on a kernel that seems to have no Landlock (a seccomp filter does it).

``python no_landlock.py ARGV...`` installs a filter answering ``landlock_create_ruleset``
(syscall 444 on every architecture) with ``ENOSYS``, what a kernel built without Landlock
answers, then executes ``ARGV``: the command and everything it starts see no Landlock,
while the rest of the kernel works as usual. Tests use it to take the ``landlock`` level
of the sandbox away without another machine.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

from jarvis_graph.sandbox.confine import (
    BPF_JEQ_K,
    BPF_LD_W_ABS,
    BPF_RET_K,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_SECCOMP,
    SECCOMP_MODE_FILTER,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SYS_LANDLOCK_CREATE_RULESET,
)


def filter_program() -> bytes:
    """The BPF program: ``ENOSYS`` for ``landlock_create_ruleset``, every other call allowed."""
    prog = [
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (BPF_JEQ_K, 0, 1, SYS_LANDLOCK_CREATE_RULESET),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(struct.pack("=HBBI", op, jt, jf, k) for op, jt, jf, k in prog)


def hide_landlock() -> None:
    """Install the filter on this process (inherited by everything it executes)."""
    code = filter_program()
    buffer = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    # no_new_privs: an unprivileged process may install a filter only with it set
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "prctl(SECCOMP)")


def command(argv: list[str]) -> list[str]:
    """``argv`` started through this launcher."""
    return [sys.executable, __file__, *argv]


if __name__ == "__main__":
    hide_landlock()
    os.execv(sys.argv[1], sys.argv[1:])
