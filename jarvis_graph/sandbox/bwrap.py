"""The ``bwrap`` level: the bubblewrap command line for a :class:`~.policy.Policy`.

What a command sees, mount by mount (shallower paths first, so a deeper mount wins; at the
same path the workspace wins over a hidden folder):

- the whole file system read-only, a new ``/dev`` and a ``/proc`` of its own PID namespace
  whose kernel settings are read-only;
- empty, private ``/tmp``, ``/var/tmp`` and ``/run`` (host sockets live there) and empty
  home folders (``$HOME``, ``/root``, ``/home``, Jarvis' own data folder);
- read-only again where the command needs them: the Python that runs Jarvis, ``PATH``
  folders, their toolchain folders and ``sandbox_readable`` paths lying in a hidden folder,
  an enclosing repository's root; secret-looking files in them covered;
- the workspace (read-write unless the policy says otherwise) and ``sandbox_writable``;
- inside the workspace: ``.jarvis/`` hidden (its ``tool_outputs/`` readable, ``reports/``
  writable), and what of the repository runs code with the user's git read-only (see
  :mod:`jarvis_graph.sandbox.git_guard`);
- covered wherever shown: Unix sockets bound on the host (with no network) and, for a
  command of root, owner-only system files (:mod:`jarvis_graph.sandbox.system_secrets`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from jarvis_graph.owned_paths import OwnedPathError, owned_dir
from jarvis_graph.sandbox.git_guard import pinned
from jarvis_graph.sandbox.policy import (
    Policy,
    enclosing_repository,
    hidden_folders,
    inside,
    path_dirs,
    real,
    runtime_paths,
    secret_entries,
    toolchain_roots,
)
from jarvis_graph.sandbox.system_secrets import owner_only

OWN_SHOWN = {"tool_outputs": "--ro-bind", "reports": "--bind"}
"""Folders of the workspace's hidden ``.jarvis/`` a ``bwrap`` command sees: the whole
outputs of earlier tool calls (read-only) and ``reports/``, where chains and scripts keep
what they make for the user (Jarvis never reads it as settings or records)."""


@functools.cache
def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


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
    ws = real(policy.workspace)
    writable = [ws] if policy.workspace_writable else []
    writable += [real(p) for p in policy.writable if os.path.exists(p)]
    hidden = hidden_folders(policy)
    paths = path_dirs(env, hidden)
    repos = enclosing_repository(ws, (real(policy.home), Path("/")))
    toolchains = toolchain_roots(paths, hidden)
    readable = [*runtime_paths(), *paths, *(real(p) for p in policy.readable)]
    readable += [*repos, *toolchains] + ([] if policy.workspace_writable else [ws])
    mounts: list[Mount] = [(p, 0, "--tmpfs") for p in hidden]
    shown = [p for p in dict.fromkeys(readable) if p.exists() and inside(p, hidden)]
    mounts += [
        (p, 1, "--ro-bind")
        for p in shown
        if not inside(p, writable) and not _shown_above(p, shown, hidden)
    ]
    mounts += [(p, 2, "--bind") for p in writable]
    # Secret-looking files stay covered in what is shown of a hidden folder (a toolchain
    # folder, a home folder that is the workspace itself) and in the root of an enclosing
    # repository (outside the workspace, which is the user's to show).
    exposed = [h for h in hidden if h in writable]
    covered = [p for root in [*toolchains, *exposed] for p in secret_entries(root)]
    covered += [p for r in repos for p in secret_entries(r) if not inside(p, [ws])]
    covered += [p for p in owner_only() if _visible(p, hidden, [*writable, *shown])]
    if policy.network != "allow":
        covered += [p for p in host_sockets() if _visible(p, hidden, [*writable, *shown])]
    mounts += [(p, 5, "--tmpfs" if p.is_dir() else "--ro-bind-empty") for p in covered]
    mounts += _workspace_guards(ws) if policy.workspace_writable else []
    mounts += [(r / ".jarvis", 3, "--tmpfs") for r in repos if (r / ".jarvis").is_dir()]
    if policy.network == "allow":  # name resolution may point into a hidden /run
        resolv = real("/etc/resolv.conf")
        if resolv.exists() and inside(resolv, hidden):
            mounts.append((resolv, 1, "--ro-bind"))
    return mounts


def _visible(path: Path, hidden: list[Path], shown: list[Path]) -> bool:
    """Whether ``path`` is seen by a bwrap command: not hidden, or shown again."""
    return not inside(path, hidden) or inside(path, shown)


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
                    found.append(real(path))
    return list(dict.fromkeys(found))


def _shown_above(path: Path, shown: list[Path], hidden: list[Path]) -> bool:
    """Whether a folder above ``path`` is shown already, with no hidden folder between."""
    return any(
        path != top
        and path.is_relative_to(top)
        and not any(h != top and h.is_relative_to(top) and path.is_relative_to(h) for h in hidden)
        for top in shown
    )


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
