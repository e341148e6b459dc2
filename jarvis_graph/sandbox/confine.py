"""What a sandboxed process applies to itself before it starts the command it confines.

Standard library only: it runs as ``python -I -S confine.py POLICY -- ARGV...`` (or is
loaded by the script reaper, which calls :func:`apply`) and must start in milliseconds
and see nothing of the agent. ``POLICY`` is a JSON object written by
:mod:`jarvis_graph.sandbox.launch`:

- ``limits``: resource limits (``cpu`` seconds, ``data`` and ``fsize`` bytes, ``nproc``);
- ``cgroup_fd``: an open ``cgroup.procs`` file of a pids-limited cgroup; writing ``0``
  moves this process there, so everything it starts counts against the limit (root is
  exempt from ``RLIMIT_NPROC``: a cgroup is what limits a fork bomb there);
- ``landlock``: ``{"read": [...], "write": [...], "files": [...], "net": bool}``: paths
  the process may read (and execute), paths it may change, device files it may write,
  and whether TCP stays allowed (the ``landlock`` level, where no namespaces are used);
- ``parent_death_signal``: the signal this process gets when its parent dies (SIGKILL);
- every capability is dropped last (bounding set included): root's processes keep only
  what its uid owns;
- ``seccomp``: families of sockets to refuse (``unix``, ``inet``) and whether to refuse
  ``io_uring`` (which would create sockets past the filter).

Every step fails closed: a policy that cannot be applied ends the process with exit code
:data:`CONFINE_FAILED` and one line on stderr, and the command never starts.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import signal
import struct
import sys

CONFINE_FAILED = 125
"""Exit code when the sandbox could not be applied (the command did not run)."""

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# Landlock (linux/landlock.h); syscall numbers are the same on every architecture.
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_CHANGE = sum(1 << bit for bit in range(4, 13))  # remove and make files, dirs, links, ...
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

# seccomp-bpf (linux/filter.h, linux/seccomp.h, linux/audit.h)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),  # AUDIT_ARCH_X86_64, __NR_socket, __NR_io_uring_setup
    "aarch64": (0xC00000B7, 198, 425),
}
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06
SOCKET_FAMILIES = {"unix": 1, "inet": 2, "inet6": 10, "netlink": 16, "packet": 17}


class ConfineError(RuntimeError):
    """A part of the policy could not be applied."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise ConfineError(f"{what} failed: {os.strerror(code)} (errno {code})")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: Landlock is not available)."""
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        version = int(
            libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def set_limits(limits: dict[str, int]) -> None:
    """Apply resource limits (soft and hard: the command cannot raise them again)."""
    names = {
        "cpu": resource.RLIMIT_CPU,
        "data": resource.RLIMIT_DATA,
        "fsize": resource.RLIMIT_FSIZE,
        "nproc": resource.RLIMIT_NPROC,
        "core": resource.RLIMIT_CORE,
    }
    for name, value in limits.items():
        kind = names[name]
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard  # an existing lower limit stays
        resource.setrlimit(kind, (value, value))


PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def drop_capabilities() -> None:
    """Drop every capability, for good: the bounding set, the ambient set, and the rest.

    A process of root keeps root's files (they are its own), but no longer what a
    capability grants: reading another process's environment or memory
    (``CAP_SYS_PTRACE``), files it does not own (``CAP_DAC_OVERRIDE``), device nodes
    (``CAP_MKNOD``). With an empty bounding set, a program root starts gets none back.
    """
    libc = _libc()
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())  # noqa: SIM115, PTH123
    except (OSError, ValueError):
        last = 63
    # A process holding no capability cannot shrink its bounding set (that takes
    # CAP_SETPCAP), and needs not: with no_new_privs set, nothing it runs gains one.
    if _permitted_capabilities() != 0:
        for cap in range(last + 1):
            if libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1:
                _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"dropping capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3
    header = struct.pack("=Ii", LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) sets, all empty
    _check(
        libc.capset(ctypes.create_string_buffer(header), ctypes.create_string_buffer(data)),
        "capset",
    )


def _permitted_capabilities() -> int:
    """This process's permitted capabilities, as the bit mask ``/proc/self/status`` shows."""
    try:
        with open("/proc/self/status") as status:  # noqa: PTH123
            for line in status:
                if line.startswith("CapPrm:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    return -1  # unknown: try to drop them all


def join_cgroup(fd: int) -> None:
    """Move this process into the cgroup whose ``cgroup.procs`` is open as ``fd``."""
    try:
        os.write(fd, b"0")
    except OSError as exc:
        raise ConfineError(f"joining the sandbox's cgroup failed: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _ruleset_attr(abi: int, net: bool) -> tuple[bytes, int]:
    """The ``landlock_ruleset_attr`` for ``abi`` and the file rights it handles.

    Only fields the kernel knows are sent. With ``net`` the TCP rights are not handled,
    so TCP stays allowed.
    """
    fs = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_CHANGE
    if abi >= 2:
        fs |= FS_REFER
    if abi >= 3:
        fs |= FS_TRUNCATE
    if abi >= 5:
        fs |= FS_IOCTL_DEV
    if abi < 4:
        return struct.pack("=Q", fs), fs
    tcp = 0 if net else NET_BIND_TCP | NET_CONNECT_TCP
    if abi < 6:
        return struct.pack("=QQ", fs, tcp), fs
    return struct.pack("=QQQ", fs, tcp, SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL), fs


def apply_landlock(read: list[str], write: list[str], files: list[str], net: bool) -> int:
    """Restrict this process (and all it starts) to ``read``/``write``; the ABI used.

    Landlock only adds rights: a path not listed, and nothing beneath it, cannot be opened.
    From ABI 4, TCP is refused unless ``net``; from ABI 6, abstract Unix sockets and
    signals to processes outside the sandbox are refused too.
    """
    abi = landlock_abi()
    if abi < 1:
        raise ConfineError("Landlock is not available in this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr, handled = _ruleset_attr(abi, net)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(
        libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, len(attr), 0), "landlock_create_ruleset"
    )
    try:
        reads = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
        files_rights = FS_READ_FILE | FS_WRITE_FILE
        for paths, rights in ((read, reads), (write, handled), (files, files_rights)):
            for path in paths:
                _add_path_rule(libc, ruleset, path, rights & handled)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _add_path_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this machine does not have: nothing to allow
    try:
        if not os.path.isdir(path):  # files take file rights only
            rights &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        rule = struct.pack("=Qi", rights, fd)
        buf = ctypes.create_string_buffer(rule, len(rule))
        _check(
            libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, buf, 0),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


def seccomp_program(families: list[str], deny_io_uring: bool, machine: str) -> bytes:
    """A BPF program refusing ``socket()`` of ``families`` with EACCES (and io_uring).

    Syscalls of another architecture (32-bit programs, the x32 ABI) are refused whole:
    they would reach ``socket`` under other numbers.
    """
    if machine not in _ARCHES:
        raise ConfineError(f"no socket filter for the {machine} architecture")
    arch, nr_socket, nr_io_uring = _ARCHES[machine]
    deny = SECCOMP_RET_ERRNO | errno.EACCES
    codes = [SOCKET_FAMILIES[name] for name in families]
    prog: list[tuple[int, int, int, int]] = [
        (BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (BPF_JEQ_K, 1, 0, arch),
        (BPF_RET_K, 0, 0, deny),
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),
        (BPF_RET_K, 0, 0, deny),
    ]
    if deny_io_uring:
        prog += [(BPF_JEQ_K, 0, 1, nr_io_uring), (BPF_RET_K, 0, 0, deny)]
    prog += [
        (BPF_JEQ_K, 1, 0, nr_socket),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (BPF_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the family
    ]
    for code in codes:
        prog += [(BPF_JEQ_K, 0, 1, code), (BPF_RET_K, 0, 0, deny)]
    prog.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return b"".join(struct.pack("=HBBI", op, jt, jf, k) for op, jt, jf, k in prog)


def apply_seccomp(families: list[str], deny_io_uring: bool) -> None:
    """Install the socket filter for this process and everything it starts."""
    code = seccomp_program(families, deny_io_uring, os.uname().machine)
    count = len(code) // 8
    filt = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(count, ctypes.cast(filt, ctypes.c_void_p))
    libc = _libc()
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    _check(
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
        "prctl(SECCOMP)",
    )


def apply(policy: dict[str, object]) -> None:
    """Apply ``policy`` to this process (see the module's docstring).

    Raises:
        ConfineError: A part of the policy could not be applied.
    """
    libc = _libc()
    # Ends with its parent (the agent, or bwrap): nothing confined outlives the call. The
    # script reaper asks for SIGTERM, its signal to end everything the script started.
    death = policy.get("parent_death_signal")
    signum = death if isinstance(death, int) else int(signal.SIGKILL)
    _check(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0), "prctl(PDEATHSIG)")
    fd = policy.get("cgroup_fd")
    if isinstance(fd, int):
        join_cgroup(fd)
    limits = policy.get("limits")
    if isinstance(limits, dict):
        try:
            set_limits({str(k): int(v) for k, v in limits.items()})
        except (OSError, ValueError, KeyError) as exc:
            raise ConfineError(f"setting resource limits failed: {exc!r}") from exc
    rules = policy.get("landlock")
    if isinstance(rules, dict):
        apply_landlock(
            [str(p) for p in rules.get("read", [])],
            [str(p) for p in rules.get("write", [])],
            [str(p) for p in rules.get("files", [])],
            bool(rules.get("net")),
        )
    filt = policy.get("seccomp")
    if isinstance(filt, dict):
        apply_seccomp([str(f) for f in filt.get("deny", [])], bool(filt.get("io_uring")))
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    drop_capabilities()  # last: the steps above may need them (seccomp without NNP does)


def main(argv: list[str]) -> int:
    """Entry point: ``confine.py POLICY -- ARGV...``: apply, then become ARGV."""
    if len(argv) < 4 or argv[2] != "--":
        print("usage: confine.py POLICY -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    try:
        apply(json.loads(argv[1]))
    except (ConfineError, ValueError) as exc:
        print(f"sandbox: {exc}; the command was not run", file=sys.stderr)
        return CONFINE_FAILED
    try:
        os.execvp(argv[3], argv[3:])
    except OSError as exc:
        print(f"sandbox: cannot run {argv[3]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv))
