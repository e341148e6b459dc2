"""Turn a command into its sandboxed form: the prefix and the policy its launcher applies.

:func:`prepare` gives a :class:`Prepared` for a :class:`~.policy.Policy` at the level in
use: at ``bwrap`` the bubblewrap prefix (:mod:`jarvis_graph.sandbox.bwrap`), at
``landlock`` the rules the launcher applies (:func:`landlock_rules`). Two kinds of launcher
apply the in-process part (limits, the cgroup, Landlock, the socket filter, capabilities;
see :mod:`jarvis_graph.sandbox.confine`): the script reaper (it loads ``confine`` itself,
so a script costs one Python start) and, for any other command, ``confine.py`` run in
front of it (:meth:`Prepared.wrap`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph.sandbox import confine
from jarvis_graph.sandbox.bwrap import bwrap_prefix
from jarvis_graph.sandbox.cgroup import make_pids_cgroup
from jarvis_graph.sandbox.policy import (
    Policy,
    enclosing_repository,
    hidden_folders,
    path_dirs,
    real,
    runtime_paths,
    secret_entries,
    toolchain_roots,
)
from jarvis_graph.sandbox.system_secrets import owner_only, readable_parts

SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
"""What the ``landlock`` level lets a command read (and execute), besides its own paths."""
KERNEL_READ = ("/proc", "/sys")
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
"""Device files a command may write (the ``landlock`` level; bwrap makes its own /dev)."""
DROPPED_VARIABLES = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK", "TMPDIR")
"""Variables pointing into hidden folders: the command gets none of them."""
DENIED_SOCKETS = ["unix", "inet", "inet6", "packet"]
"""Socket families refused at the ``landlock`` level with no network (no namespace there)."""


@dataclass
class Prepared:
    """A command's sandbox: prefix, launcher policy, environment, descriptors to pass."""

    level: str
    prefix: list[str]
    policy: dict[str, object]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    own_pids: bool = False
    """The command has a PID namespace of its own: pids it reports are not the host's."""
    cleanup: list[Callable[[], None]] = field(default_factory=list)

    def policy_json(self, **extra: object) -> str:
        """The launcher's policy as one argument (``extra`` added to it)."""
        return json.dumps({**self.policy, **extra}, separators=(",", ":"))

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started through ``confine.py`` in the sandbox (unchanged when off)."""
        if self.level == "off":
            return list(argv)
        launcher = [sys.executable, "-I", "-S", confine.__file__, self.policy_json(), "--"]
        return [*self.prefix, *launcher, *argv]

    def started(self) -> None:
        """The command has started: this side's copies of passed descriptors are closed."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()

    def close(self) -> None:
        """Release what the sandbox made for the command (its cgroup, private folders)."""
        self.started()
        for step in reversed(self.cleanup):
            with contextlib.suppress(OSError):
                step()
        self.cleanup.clear()


def _limits(policy: Policy, cgroup_fd: int | None) -> dict[str, object]:
    limits = policy.limits
    values: dict[str, int] = {
        "cpu": limits.cpu_seconds,
        "data": limits.memory_bytes,
        "fsize": limits.file_bytes,
        "core": 0,
    }
    launcher: dict[str, object] = {"limits": values}
    if cgroup_fd is not None:
        launcher["cgroup_fd"] = cgroup_fd
    elif os.geteuid() != 0:  # RLIMIT_NPROC counts every process of the user
        values["nproc"] = limits.processes + _own_process_count()
    return launcher


def _own_process_count() -> int:
    """Threads of this user now (``RLIMIT_NPROC`` counts threads of the real uid).

    Read from each process's ``status`` (its real uid and thread count): the owner of a
    ``/proc/<pid>`` folder is root for a non-dumpable process, such as Jarvis itself.
    """
    uid = str(os.getuid())
    count = 0
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = dict(
                    line.split(":", 1)
                    for line in Path(f"/proc/{name}/status").read_text().splitlines()
                    if ":" in line
                )
                if fields["Uid"].split()[0] == uid:
                    count += int(fields["Threads"])
    return count


def prepare(level: str, policy: Policy, cwd: Path, env: Mapping[str, str]) -> Prepared:
    """The sandbox of one command run in ``cwd`` with ``env`` at ``level``.

    ``level`` is ``bwrap``, ``landlock`` or ``off`` (see :mod:`jarvis_graph.sandbox.probe`).
    The caller starts the command with :attr:`Prepared.env` and :attr:`Prepared.pass_fds`,
    calls :meth:`Prepared.started` once it runs and :meth:`Prepared.close` once it ended.
    """
    if level == "off":
        return Prepared("off", [], {}, dict(env))
    cleanup: list[Callable[[], None]] = []
    group = make_pids_cgroup(policy.limits.processes)
    fds: tuple[int, ...] = ()
    if group is not None:
        cleanup.append(group.remove)
        fds = (group.procs_fd,)
    launcher = _limits(policy, group.procs_fd if group is not None else None)
    variables = {k: v for k, v in env.items() if k not in DROPPED_VARIABLES}
    if level == "bwrap":
        prefix = bwrap_prefix(policy, real(cwd), variables)
        variables |= {"HOME": str(policy.home), "TMPDIR": "/tmp"}
        return Prepared(level, prefix, launcher, variables, fds, True, cleanup)
    private = Path(tempfile.mkdtemp(prefix="jarvis-sandbox-"))
    cleanup.append(lambda: shutil.rmtree(private, ignore_errors=True))
    (private / "home").mkdir()
    (private / "tmp").mkdir()
    launcher["landlock"] = landlock_rules(policy, private, variables)
    if policy.network != "allow":
        launcher["seccomp"] = {"deny": DENIED_SOCKETS, "io_uring": True}
    variables |= {"HOME": str(private / "home"), "TMPDIR": str(private / "tmp")}
    return Prepared(level, [], launcher, variables, fds, False, cleanup)


def landlock_rules(policy: Policy, private: Path, env: Mapping[str, str]) -> dict[str, object]:
    """The ``landlock`` level's paths: read the system, write the workspace and ``private``."""
    ws = real(policy.workspace)
    write = [private, *(real(p) for p in policy.writable)]
    hidden = hidden_folders(policy)
    paths = path_dirs(env, hidden)
    kept = owner_only()
    system = [part for root in SYSTEM_READ for part in readable_parts(Path(root), kept)]
    read = [*system, *KERNEL_READ, *runtime_paths(), *paths]
    read += [real(p) for p in policy.readable]
    read += enclosing_repository(real(policy.workspace), (real(policy.home), Path("/")))
    # Landlock cannot cover a file inside a folder it shows: a toolchain folder with a
    # secret-looking file in it stays hidden (only its PATH folder is readable).
    read += [r for r in toolchain_roots(paths, hidden) if not secret_entries(r)]
    (write if policy.workspace_writable else read).append(ws)
    return {
        "read": [str(p) for p in read],
        "write": [str(p) for p in write],
        "files": list(DEVICE_FILES),
        "net": policy.network == "allow",
    }
