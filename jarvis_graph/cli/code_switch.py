"""Offering the code agent when ``jarvis run`` or ``jarvis chat`` starts at a repository's top.

Only a workspace that is the top folder of a git repository is offered it (a project's
root, not a folder inside one such as ``examples/workspace``).

``code_agent_switch`` in the config: ``ask`` (the default) asks on a terminal, ``auto``
switches without asking, ``off`` never does. A run with ``-n`` never asks (it switches only
with ``auto``); runs that continue a session, or that name an agent definition, a plan or a
team, are not offered it. The question says when the work tree has uncommitted changes:
the code agent then offers to commit them before its first edit, and leaves them out of
its own commits otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from jarvis_graph.cli.driver import console
from jarvis_graph.config import ConfigError
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.gitflow.repo import GitError, changed_paths, find_repo_root


def switch_to_code(ctx: dict[str, Any]) -> bool:
    """Whether this run goes to the code agent (asked when ``code_agent_switch: ask``)."""
    try:
        mode = resolve_settings(JarvisContext(**ctx)).code_agent_switch
    except ConfigError:
        return False  # the run reports a broken config where it starts
    if mode == "off":
        return False
    interactive = not ctx.get("non_interactive") and sys.stdin.isatty() and console.is_terminal
    if mode == "ask" and not interactive:
        return False
    workspace = Path(ctx["workspace"]).resolve()
    root = find_repo_root(workspace)
    if root != workspace:  # outside a repository, or in a folder of one (examples/...)
        return False
    if mode == "auto":
        console.print(f"[dim]{escape(f'{root} is a git repository: the code agent runs')}[/]")
        return True
    try:
        dirty = [p for p in changed_paths(root) if not p.startswith(".jarvis/")]
    except GitError:
        dirty = []
    note = (
        f" It has {len(dirty)} uncommitted change{'s' if len(dirty) != 1 else ''}; the code "
        "agent offers to commit them before it starts."
        if dirty
        else ""
    )
    question = (
        f"{root} is a git repository. Use the code agent (exact edits, each committed)?{note} "
        "[y/N] "
    )
    try:
        answer = console.input(escape(question))
    except (EOFError, KeyboardInterrupt):
        console.print()
        return False
    return answer.strip().lower() in ("y", "yes")
