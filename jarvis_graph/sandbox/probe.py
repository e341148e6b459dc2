"""What this machine offers for a sandbox, and the level a run uses (``sandbox: auto``).

The ladder, strongest first:

- ``bwrap``: bubblewrap starts the command in its own mount, PID, IPC, UTS and network
  namespaces: read-only system, writable workspace, private ``/tmp``, hidden home.
- ``landlock``: the kernel's Landlock LSM restricts the file system (read the system,
  write the workspace) and, from ABI 4, TCP; a seccomp filter refuses other sockets.
  Without namespaces processes keep the machine's PIDs and network stack.
- ``off``: no sandbox (only by the user's choice: ``sandbox: off`` or ``--sandbox off``).

Each level is tried for real once per process (a probe command), so a ``bwrap`` that is
installed but blocked (AppArmor restricting user namespaces, a container's seccomp
profile) is reported with its own error instead of failing the first script.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass

from jarvis_graph.sandbox import confine
from jarvis_graph.sandbox.cgroup import pids_parent

LEVELS = ("bwrap", "landlock")
"""The sandbox levels, strongest first."""
MIN_LANDLOCK_ABI = 1
PROBE_SECONDS = 10.0


@dataclass(frozen=True)
class LevelCheck:
    """Whether one level works here, and why not."""

    level: str
    works: bool
    detail: str
    """What was found (``bwrap 0.8.0 at /usr/bin/bwrap``) or why it fails."""


@dataclass(frozen=True)
class Choice:
    """The level a run uses: ``bwrap``, ``landlock``, ``off`` or ``none`` (no level works)."""

    level: str
    reason: str


def _hints(error: str) -> str:
    """The usual cause of a bwrap failure, said in one clause."""
    text = error.lower()
    if "setting up uid map" in text or "no permissions to creat" in text or "userns" in text:
        return (
            " (unprivileged user namespaces are restricted: on Ubuntu 24.04 AppArmor's "
            "kernel.apparmor_restrict_unprivileged_userns, or kernel.unprivileged_userns_clone=0)"
        )
    if "operation not permitted" in text:
        return " (a container's seccomp profile or missing privileges block namespaces)"
    return ""


@functools.cache
def check_bwrap() -> LevelCheck:
    """Run a trivial command under bubblewrap with the namespaces the sandbox uses."""
    path = shutil.which("bwrap")
    if path is None:
        return LevelCheck("bwrap", False, "bwrap not found (install the bubblewrap package)")
    argv = [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return LevelCheck("bwrap", False, f"{path} did not run: {exc}")
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return LevelCheck("bwrap", False, f"{path} fails: {error}{_hints(error)}")
    return LevelCheck("bwrap", True, f"{bwrap_version(path)} at {path}")


def bwrap_version(path: str) -> str:
    """``bubblewrap 0.8.0`` (or just ``bubblewrap``)."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return done.stdout.strip() or "bubblewrap"


@functools.cache
def check_landlock() -> LevelCheck:
    """Whether the kernel has Landlock, and whether a confined process really starts."""
    if sys.platform != "linux":
        return LevelCheck("landlock", False, f"Landlock is Linux only (this is {sys.platform})")
    abi = confine.landlock_abi()
    if abi < MIN_LANDLOCK_ABI:
        return LevelCheck(
            "landlock",
            False,
            f"the kernel ({platform.release()}) has no Landlock, or it is not enabled "
            "(lsm= boot parameter)",
        )
    policy = '{"landlock": {"read": ["/"], "write": [], "files": [], "net": true}}'
    argv = [sys.executable, "-I", "-S", confine.__file__, policy, "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return LevelCheck("landlock", False, f"a confined process did not start: {exc}")
    if done.returncode != 0:
        return LevelCheck("landlock", False, done.stderr.strip() or "a confined process failed")
    tcp = "TCP confined" if abi >= 4 else "TCP not confined (needs ABI 4)"
    return LevelCheck("landlock", True, f"Landlock ABI {abi}, {tcp}")


def check(level: str) -> LevelCheck:
    """The check of one level by name."""
    return check_bwrap() if level == "bwrap" else check_landlock()


def choose(mode: str) -> Choice:
    """The level for ``mode`` (``auto``, ``bwrap``, ``landlock`` or ``off``)."""
    if mode == "off":
        return Choice("off", "sandbox: off was chosen")
    wanted = LEVELS if mode == "auto" else (mode,)
    failures = []
    for level in wanted:
        found = check(level)
        if found.works:
            return Choice(level, found.detail)
        failures.append(f"{level}: {found.detail}")
    return Choice("none", "; ".join(failures))


def process_limit_detail() -> str:
    """How the process count of a sandboxed command is limited here."""
    parent = pids_parent()
    if parent is not None:
        return f"a pids cgroup under {parent}"
    if os.geteuid() == 0:
        return "not limited (root is exempt from RLIMIT_NPROC and no pids cgroup is writable)"
    return "RLIMIT_NPROC (counts all of your processes)"
