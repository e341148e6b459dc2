"""``jarvis doctor``: what this machine offers for the sandbox, and the level a run uses.

Each level of the ladder (:mod:`jarvis_graph.sandbox.probe`) is tried for real, the kernel
switches that decide it are shown, then the level the settings of the workspace choose.
The exit code says whether a run can start scripts: 0 when a level works or the sandbox
is off by the user's choice, 1 when no level works (the output says how to proceed).

Light on purpose: settings and the sandbox package only (no langgraph).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

if TYPE_CHECKING:
    from jarvis_graph.config import Settings

EXIT_NO_SANDBOX = 1
USERNS_SWITCHES = (
    (
        "user.max_user_namespaces",
        "0",
        "user namespaces are off: bwrap cannot start (raise it with sysctl)",
    ),
    (
        "kernel.apparmor_restrict_unprivileged_userns",
        "1",
        "AppArmor keeps unprivileged programs from user namespaces (Ubuntu 24.04): bwrap "
        "needs an AppArmor profile, or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`",
    ),
    (
        "kernel.unprivileged_userns_clone",
        "0",
        "unprivileged user namespaces are off (Debian): "
        "`sysctl kernel.unprivileged_userns_clone=1`",
    ),
)
"""Kernel switches bwrap depends on: name, the value that blocks it, what that means."""
PROCEED = (
    "to proceed: install bubblewrap (Debian, Ubuntu: `sudo apt-get install bubblewrap`) "
    "where user namespaces are allowed, or use a Linux kernel with Landlock (5.13 or "
    "later, in the lsm= boot parameter); or, knowing that scripts then run with your "
    "rights, set `sandbox: off` in ~/.jarvis/config.yaml or pass --sandbox off"
)


def doctor(
    workspace: Path | None = o.Workspace,
    sandbox: str | None = o.Sandbox,
) -> None:
    """Show what this machine supports for the sandbox and the level a run would use."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError, load_settings
    from jarvis_graph.sandbox import OFF_WARNING, level_for
    from jarvis_graph.sandbox.probe import LEVELS, check, process_limit_detail

    o.check_choice("--sandbox", sandbox, "SandboxMode")
    ws = (workspace or Path.cwd()).resolve()
    try:
        settings = load_settings(ws, overrides={"sandbox": sandbox} if sandbox else None)
    except ConfigError as exc:  # a project's file: its keys may hold control characters
        echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    echo("Sandbox levels on this machine, strongest first:")
    for level in LEVELS:
        found = check(level)
        echo(f"  {level}: {'works' if found.works else 'does not work'}: {found.detail}")
    echo("Kernel:")
    echo(f"  {_landlock_features()}")
    for line in _userns_lines():
        echo(f"  user namespaces: {line}")
    echo(f"  process limit: {process_limit_detail()}")
    limits = settings.sandbox_limits
    echo(f"Settings for {ws}:")
    echo(f"  sandbox: {settings.sandbox} · sandbox_network: {settings.sandbox_network}")
    for name in ("sandbox_writable", "sandbox_readable"):
        if getattr(settings, name):
            echo(f"  {name}: {', '.join(getattr(settings, name))}")
    echo(
        f"  limits of each command: {limits.cpu_seconds} s of CPU and {limits.memory_mb} MB of "
        f"memory a process, {limits.processes} processes, files up to {limits.file_mb} MB"
    )
    choice = level_for(settings)
    echo(f"level in use: {choice.level} ({choice.reason})")
    if choice.level == "off":
        echo(OFF_WARNING)
    elif choice.level == "none":
        echo("scripts the model writes will not run: no sandbox level works here")
        echo(_other_level(settings.sandbox) + PROCEED)
        raise typer.Exit(EXIT_NO_SANDBOX)


def _landlock_features() -> str:
    """The kernel's Landlock ABI and what it can confine."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.sandbox.confine import landlock_abi

    abi = landlock_abi()
    if abi < 1:
        return "Landlock: not available in this kernel"

    def has(version: int) -> str:
        return "yes" if abi >= version else f"no (needs ABI {version})"

    return (
        f"Landlock ABI {abi}: file rules yes; TCP rules {has(4)}; abstract unix socket and "
        f"signal scoping {has(6)}"
    )


def _userns_lines() -> list[str]:
    """The kernel switches of user namespaces this kernel has, with what a value means."""
    lines = []
    for name, blocking, meaning in USERNS_SWITCHES:
        path = Path("/proc/sys", *name.split("."))
        try:
            value = path.read_text(encoding="utf-8").strip()
        except OSError:
            continue  # absent here: this kernel has no such switch
        lines.append(f"{name} = {value}" + (f" ({meaning})" if value == blocking else ""))
    if not lines:
        lines.append("no switch for them in /proc/sys (not Linux, or a kernel without them)")
    if os.geteuid() == 0:
        lines[-1] += "; Jarvis runs as root, which the unprivileged restrictions do not cover"
    return lines


def _other_level(mode: str) -> str:
    """``sandbox: auto would use bwrap, ...`` when a level the setting excludes works."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.sandbox.probe import choose

    if mode == "auto":
        return ""
    other = choose("auto")
    if other.level in ("none", mode):
        return ""
    return f"`sandbox: auto` would use {other.level}, which works here; "


def start_line(settings: Settings) -> tuple[str, str]:
    """The line a run shows at its start about its sandbox, and its style.

    Args:
        settings: The run's settings.

    Returns:
        ``(style, text)``: ``dim`` for a working level, ``yellow`` for the warning of
        ``sandbox: off``, ``red`` when no level works (scripts will be refused).
    """
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.sandbox import OFF_WARNING, level_for

    choice = level_for(settings)
    if choice.level == "off":
        return "yellow", OFF_WARNING
    if choice.level == "none":
        return "red", (
            f"sandbox: none works here ({choice.reason}); scripts will not run: "
            "`jarvis doctor` shows why, --sandbox off runs them without one"
        )
    network = "network allowed" if settings.sandbox_network == "allow" else "no network"
    return "dim", f"sandbox: {choice.level} ({choice.reason}) · {network}"
