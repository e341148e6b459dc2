"""Turn a command into its sandboxed form: the bwrap prefix and the policy its launcher applies.

A :class:`Policy` says what the command may touch; :func:`prepare` gives a
:class:`Prepared` for the level in use. Two kinds of launcher apply the in-process part
(limits, the cgroup, Landlock, the socket filter; see :mod:`jarvis_graph.sandbox.confine`):
the script reaper (it loads ``confine`` itself, so a script costs one Python start) and,
for any other command, ``confine.py`` run in front of it (:meth:`Prepared.wrap`).

What the ``bwrap`` level shows a command, mount by mount (shallower paths first, so a
deeper mount wins; at the same path the workspace wins over a hidden folder):

- the whole file system read-only, a new ``/dev`` and a ``/proc`` of its own PID namespace;
- empty, private ``/tmp``, ``/var/tmp`` and ``/run`` (host sockets live there) and empty
  home folders (``$HOME``, ``/root``, ``/home``, Jarvis' own data folder);
- read-only again where the command needs them: the Python that runs Jarvis, ``PATH``
  folders and ``sandbox_readable`` paths lying in a hidden folder;
- the workspace (read-write unless the policy says otherwise) and ``sandbox_writable``;
- inside the workspace: ``.jarvis/`` hidden (its ``tool_outputs/`` readable, ``reports/``
  writable), and what of the repository runs code with the user's git read-only (see
  :mod:`jarvis_graph.sandbox.git_guard`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph.owned_paths import OwnedPathError, owned_dir
from jarvis_graph.sandbox import confine
from jarvis_graph.sandbox.cgroup import make_pids_cgroup
from jarvis_graph.sandbox.git_guard import pinned
from jarvis_graph.sandbox.system_secrets import owner_only, readable_parts
from jarvis_graph.secrets import is_secret_path

SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
"""What the ``landlock`` level lets a command read (and execute), besides its own paths."""
KERNEL_READ = ("/proc", "/sys")
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
"""Device files a command may write (the ``landlock`` level; bwrap makes its own /dev)."""
HIDDEN_SYSTEM = ("/tmp", "/var/tmp", "/run", "/var/run", "/root", "/home")
"""Folders a ``bwrap`` command sees empty: host sockets, other users' and root's files."""
DROPPED_VARIABLES = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK", "TMPDIR")
"""Variables pointing into hidden folders: the command gets none of them."""
OWN_SHOWN = {"tool_outputs": "--ro-bind", "reports": "--bind"}
"""Folders of the workspace's hidden ``.jarvis/`` a ``bwrap`` command sees: the whole
outputs of earlier tool calls (read-only) and ``reports/``, where chains and scripts keep
what they make for the user (Jarvis never reads it as settings or records)."""
DENIED_SOCKETS = ["unix", "inet", "inet6", "packet"]
"""Socket families refused at the ``landlock`` level with no network (no namespace there)."""


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

    def policy_json(self) -> str:
        """The launcher's policy as one argument."""
        return json.dumps(self.policy, separators=(",", ":"))

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


@functools.cache
def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, roots: list[Path]) -> bool:
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


def _runtime_paths() -> list[Path]:
    """What a launcher needs to start: this Python and Jarvis' own launcher files."""
    found = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(sys.base_exec_prefix),
        _real(sys.executable).parent,
        Path(confine.__file__).parent,
        Path(__file__).parents[1] / "tools",
    ]
    return [_real(p) for p in found]


def _path_dirs(env: Mapping[str, str], hidden: list[Path]) -> list[Path]:
    """``PATH``'s folders, but none that is a hidden folder or holds one (``PATH=~:...``)."""
    found = [_real(p) for p in env.get("PATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    return [p for p in found if not any(h == p or h.is_relative_to(p) for h in hidden)]


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
        prefix = bwrap_prefix(policy, _real(cwd), variables)
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
    ws = _real(policy.workspace)
    write = [private, *(_real(p) for p in policy.writable)]
    hidden = _hidden(policy)
    paths = _path_dirs(env, hidden)
    kept = owner_only()
    system = [part for root in SYSTEM_READ for part in readable_parts(Path(root), kept)]
    read = [*system, *KERNEL_READ, *_runtime_paths(), *paths]
    read += [_real(p) for p in policy.readable]
    read += enclosing_repository(_real(policy.workspace), (_real(policy.home), Path("/")))
    # Landlock cannot cover a file inside a folder it shows: a toolchain folder with a
    # secret-looking file in it stays hidden (only its PATH folder is readable).
    read += [r for r in _toolchain_roots(paths, hidden) if not _secret_entries(r)]
    (write if policy.workspace_writable else read).append(ws)
    return {
        "read": [str(p) for p in read],
        "write": [str(p) for p in write],
        "files": list(DEVICE_FILES),
        "net": policy.network == "allow",
    }


def _hidden(policy: Policy) -> list[Path]:
    hidden = [_real(p) for p in HIDDEN_SYSTEM if not os.path.islink(p) and os.path.isdir(p)]
    hidden += [_real(policy.home), *(_real(p) for p in policy.data_dirs)]
    return [p for p in dict.fromkeys(hidden) if p.is_dir() and p != Path("/")]


PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""Kernel settings in ``/proc``: the sandbox's own procfs is writable, and a root-owned
file there is writable by uid 0 without any capability (``kernel.core_pattern`` names a
program the kernel runs as root)."""


def bwrap_prefix(policy: Policy, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The ``bwrap ... --`` part of the command line for ``policy`` (see the module)."""
    args = [_bwrap(), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if policy.network == "allow":
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
    for kernel in PROC_READ_ONLY:
        if os.path.exists(kernel):
            args += ["--ro-bind", kernel, kernel]
    mounts = _bwrap_mounts(policy, env)
    for path, _, option in sorted(set(mounts), key=lambda m: (len(m[0].parts), m[1], m[0])):
        if option == "--tmpfs":
            args += [option, str(path)]
        elif option == "--ro-bind-empty":
            args += ["--ro-bind", os.devnull, str(path)]
        else:
            args += [option, str(path), str(path)]
    return [*args, "--chdir", str(cwd), "--"]


Mount = tuple[Path, int, str]
"""``(path, rank, option)``: mounts go shallowest first; at one path a higher rank wins."""


def _bwrap_mounts(policy: Policy, env: Mapping[str, str]) -> list[Mount]:
    ws = _real(policy.workspace)
    writable = [ws] if policy.workspace_writable else []
    writable += [_real(p) for p in policy.writable if os.path.exists(p)]
    hidden = _hidden(policy)
    paths = _path_dirs(env, hidden)
    repos = enclosing_repository(ws, (_real(policy.home), Path("/")))
    toolchains = _toolchain_roots(paths, hidden)
    readable = [*_runtime_paths(), *paths, *(_real(p) for p in policy.readable)]
    readable += [*repos, *toolchains] + ([] if policy.workspace_writable else [ws])
    mounts: list[Mount] = [(p, 0, "--tmpfs") for p in hidden]
    shown = [p for p in dict.fromkeys(readable) if p.exists() and _inside(p, hidden)]
    mounts += [
        (p, 1, "--ro-bind")
        for p in shown
        if not _inside(p, writable) and not _shown_above(p, shown, hidden)
    ]
    mounts += [(p, 2, "--bind") for p in writable]
    # Secret-looking files stay covered in what is shown of a hidden folder (a toolchain
    # folder, a home folder that is the workspace itself) and in the root of an enclosing
    # repository (outside the workspace, which is the user's to show).
    exposed = [h for h in hidden if h in writable]
    covered = [p for root in [*toolchains, *exposed] for p in _secret_entries(root)]
    covered += [p for r in repos for p in _secret_entries(r) if not _inside(p, [ws])]
    covered += [p for p in owner_only() if _visible(p, hidden, [*writable, *shown])]
    if policy.network != "allow":
        covered += [p for p in host_sockets() if _visible(p, hidden, [*writable, *shown])]
    mounts += [(p, 5, "--tmpfs" if p.is_dir() else "--ro-bind-empty") for p in covered]
    mounts += _workspace_guards(ws) if policy.workspace_writable else []
    mounts += [(r / ".jarvis", 3, "--tmpfs") for r in repos if (r / ".jarvis").is_dir()]
    if policy.network == "allow":  # name resolution may point into a hidden /run
        resolv = _real("/etc/resolv.conf")
        if resolv.exists() and _inside(resolv, hidden):
            mounts.append((resolv, 1, "--ro-bind"))
    return mounts


def _visible(path: Path, hidden: list[Path], shown: list[Path]) -> bool:
    """Whether ``path`` is seen by a bwrap command: not hidden, or shown again."""
    return not _inside(path, hidden) or _inside(path, shown)


def host_sockets() -> list[Path]:
    """Unix sockets bound to a path on this machine now (from ``/proc/net/unix``).

    A socket file is reached by its path, whatever network namespace the caller is in:
    with no network, the ones a command would see are covered with an empty file, so a
    daemon's socket outside the hidden folders (``/var/lib``, the workspace) is not
    reachable either. A socket bound after the command started is not covered.
    """
    found: list[Path] = []
    try:
        lines = Path("/proc/net/unix").read_text(errors="replace").splitlines()[1:]
    except OSError:
        return found
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            path = Path(fields[7])
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(path.lstat().st_mode):
                    found.append(_real(path))
    return list(dict.fromkeys(found))


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


def _shown_above(path: Path, shown: list[Path], hidden: list[Path]) -> bool:
    """Whether a folder above ``path`` is shown already, with no hidden folder between."""
    return any(
        path != top
        and path.is_relative_to(top)
        and not any(h != top and h.is_relative_to(top) and path.is_relative_to(h) for h in hidden)
        for top in shown
    )


def _toolchain_roots(path_dirs: list[Path], hidden: list[Path]) -> list[Path]:
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


def _secret_entries(root: Path) -> tuple[Path, ...]:
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


def _workspace_guards(ws: Path) -> list[tuple[Path, int, str]]:
    """Mounts keeping Jarvis' records and the repository's code-running config out of reach."""
    guards: list[tuple[Path, int, str]] = []
    # A hidden or pinned folder must exist before the command starts, or the command could
    # make it itself: a .jarvis/config.yaml or a hook it made would be read, or run, after
    # it ended. The caller makes .jarvis (a run has one); an empty .git/hooks is made here.
    own = _folder(ws, ".jarvis", create=False)
    if own is not None and not own.is_symlink():
        guards.append((own, 3, "--tmpfs"))
        for name, option in OWN_SHOWN.items():
            shown = own / name
            if shown.is_dir() and not shown.is_symlink():
                guards.append((shown, 4, option))
    if _folder(ws, ".git", create=False) is not None and not (ws / ".git").is_symlink():
        # .git itself is a mount point: it cannot be renamed away and replaced by a copy
        # whose hooks and config are writable (see git_guard).
        guards.append((ws / ".git", 3, "--bind"))
        _folder(ws, ".git/hooks")
        guards += [(path, 4, "--ro-bind") for path in pinned(ws)]
    return guards


def _folder(ws: Path, rel: str, create: bool = True) -> Path | None:
    """``ws/rel`` as a real folder of the workspace (made if missing); ``None`` if not one."""
    try:
        return owned_dir(ws, rel) if create else (ws / rel if (ws / rel).is_dir() else None)
    except (OwnedPathError, OSError):
        return None  # a link or a file there: nothing the sandbox can pin
