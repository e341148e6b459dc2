"""The OS sandbox every process the model starts runs in.

:mod:`~jarvis_graph.sandbox.probe` finds the level this machine offers (``bwrap``, then
``landlock``), :mod:`~jarvis_graph.sandbox.launch` turns a command into its sandboxed
form, :mod:`~jarvis_graph.sandbox.confine` is what the sandboxed launcher applies to
itself. This module ties them to the settings (``sandbox``, ``sandbox_network``,
``sandbox_writable``, ``sandbox_readable``, ``sandbox_limits``).

With no working level and ``sandbox`` not ``off``, :func:`prepare_for` refuses: a risky
tool is never run unconfined behind the user's back.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jarvis_graph.config import Settings, jarvis_home, load_settings
from jarvis_graph.sandbox.launch import Prepared, prepare
from jarvis_graph.sandbox.policy import Limits, Policy, SandboxUnavailable
from jarvis_graph.sandbox.probe import Choice, choose

__all__ = [
    "Choice",
    "contains",
    "Policy",
    "Prepared",
    "SandboxUnavailable",
    "level_for",
    "policy_for",
    "prepare_for",
    "settings_for",
    "unavailable_message",
]

OFF_WARNING = (
    "warning: the sandbox is off (sandbox: off): scripts the model writes run with your "
    "rights and can read your keys, your files and the network"
)


def level_for(settings: Settings) -> Choice:
    """The sandbox level a run with ``settings`` uses (probed once per process)."""
    return choose(settings.sandbox)


def _paths(values: list[str]) -> tuple[Path, ...]:
    return tuple(Path(os.path.expanduser(v)) for v in values)


def policy_for(settings: Settings, workspace: Path, workspace_writable: bool = True) -> Policy:
    """The :class:`Policy` of a command run for ``workspace`` under ``settings``."""
    limits = settings.sandbox_limits
    return Policy(
        workspace=workspace,
        network=settings.sandbox_network,
        writable=_paths(settings.sandbox_writable),
        readable=_paths(settings.sandbox_readable),
        workspace_writable=workspace_writable,
        limits=Limits(
            cpu_seconds=limits.cpu_seconds,
            memory_bytes=limits.memory_mb << 20,
            processes=limits.processes,
            file_bytes=limits.file_mb << 20,
        ),
        home=Path.home(),
        data_dirs=(jarvis_home(),),
    )


def unavailable_message(choice: Choice, what: str = "the script") -> str:
    """One line: why nothing was run and how to proceed."""
    return (
        f"{what} was not run: no sandbox works on this machine ({choice.reason}). "
        "`jarvis doctor` shows why; to run without one, set `sandbox: off` in "
        "~/.jarvis/config.yaml or pass --sandbox off"
    )


def prepare_for(
    settings: Settings,
    workspace: Path,
    cwd: Path,
    env: Mapping[str, str],
    workspace_writable: bool = True,
    what: str = "the script",
) -> Prepared:
    """The sandbox of one command under ``settings``.

    Raises:
        SandboxUnavailable: No level works here and the sandbox is not ``off``.
    """
    choice = level_for(settings)
    if choice.level == "none":
        raise SandboxUnavailable(unavailable_message(choice, what))
    policy = policy_for(settings, workspace, workspace_writable)
    return prepare(choice.level, policy, cwd, env)


CONTAINING_LEVELS = ("bwrap",)
"""Levels under which a workspace-confined call cannot harm anything outside: ``landlock``
cannot keep a script from writing ``.git/hooks`` (run later by the user's own git)."""


def contains(metadata: Mapping[str, Any], args: Any, settings: Settings) -> bool:
    """Whether a call runs confined to the workspace with no network (``confirm: sandboxed``).

    True for a tool that runs its work in the sandbox (metadata ``sandboxed``) at a level
    of :data:`CONTAINING_LEVELS`, with no network, no writable path outside the workspace
    and no call argument asking for the network.
    """
    if not metadata.get("sandboxed") or level_for(settings).level not in CONTAINING_LEVELS:
        return False
    if settings.sandbox_network != "none" or settings.sandbox_writable:
        return False
    return not (isinstance(args, dict) and args.get("network"))


def settings_for(folder: Path) -> Settings:
    """The settings of a process started for ``folder`` outside a run (the code agent's git).

    The merged settings of ``folder``, read once per process and ``JARVIS_*`` variables.
    """
    variables = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("JARVIS_")))
    return _settings_for(folder.resolve(), variables)


@functools.lru_cache(maxsize=16)
def _settings_for(folder: Path, variables: tuple[tuple[str, str], ...]) -> Settings:
    return load_settings(folder, env=dict(variables))
