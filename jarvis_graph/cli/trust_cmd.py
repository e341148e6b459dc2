"""``jarvis trust``: let a folder's ``.jarvis`` settings run code and reach secrets.

A project's ``.jarvis/config.yaml`` and ``.jarvis/mcp.json`` may hold settings that start
commands, import Python files, lower confirmation, send the key elsewhere, hand secrets to
scripts or widen file access (``SETTING_TRUST`` in :mod:`jarvis_graph.config`). Until the
user trusts the folder those are ignored, and the run says so. ``jarvis trust`` shows them
and records the trust; a run on a terminal asks once (y/N) before it starts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli.visible import echo

_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_FOLDER = typer.Argument(None, help="The project folder (default: current dir).")


def trust(
    path: Path | None = _FOLDER,
    revoke: bool = typer.Option(False, "--revoke", help="Forget the trust in this folder."),
    list_all: bool = typer.Option(False, "--list", help="List the trusted folders."),
) -> None:
    """Show what a folder's .jarvis settings would enable, and trust them (see README)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError, held_settings, jarvis_home, trust_project
    from jarvis_graph.workspace_trust import revoke_trust, trusted_folders

    home = jarvis_home()
    if list_all:
        folders = trusted_folders(home)
        for folder, entry in sorted(folders.items()):
            typer.echo(f"{folder}  (trusted {entry.get('trusted_at', '?')})")
        if not folders:
            typer.echo("no folder is trusted; `jarvis trust PATH` trusts one")
        return
    ws = (path or Path.cwd()).resolve()
    if not ws.is_dir():
        typer.echo(f"error: {ws} is not a folder; give the project folder to trust", err=True)
        raise typer.Exit(1)
    if revoke:
        if revoke_trust(home, ws):
            typer.echo(f"{ws} is no longer trusted: its .jarvis settings that need trust wait")
        else:
            typer.echo(f"{ws} was not trusted; nothing changed")
        return
    try:
        held = held_settings(ws)
    except ConfigError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if held:
        echo(describe(ws, held))
    else:
        typer.echo(f"nothing in {ws / '.jarvis'} needs trust now")
    trust_project(ws)
    typer.echo(
        f"trusted {ws}: these settings apply until its .jarvis files or the code folders "
        "they name change (`jarvis trust --revoke` undoes it)"
    )


def ask_trust(ws: Path, non_interactive: bool) -> None:
    """On a terminal, ask once whether to trust ``ws`` when its settings need it.

    Without a terminal (or with ``-n``) nothing is asked: the run ignores those settings
    and says which in one line.
    """
    if non_interactive or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError, held_settings, project_trusted, trust_project

    try:
        if project_trusted(ws):
            return
        held = held_settings(ws)
    except ConfigError:
        return  # the run reports the broken file with its line
    if not held:
        return
    echo(describe(ws, held))  # the keys are the project file's
    if typer.confirm(f"Trust {ws} and use these settings?", default=False):
        trust_project(ws)
        typer.echo(f"trusted {ws}")
    else:
        typer.echo("not trusted: this run ignores them")


def describe(ws: Path, held: dict[str, Any]) -> str:
    """The settings of ``ws`` that wait for trust, one a line, secrets masked."""
    lines = [f"{ws / '.jarvis'} asks for settings that can run code or reach secrets:"]
    for key, value in held.items():
        lines.append(f"  {key}: {_shown(key, value)}")
    return "\n".join(lines)


def _shown(key: str, value: Any) -> str:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import mask_secrets

    text = json.dumps(mask_secrets(_mask_mcp(key, value)), default=str)
    return _USERINFO.sub("***@", text)


def _mask_mcp(key: str, value: Any) -> Any:
    """MCP ``env`` and ``headers`` values are secrets whatever their names."""
    if key not in ("mcp", ".jarvis/mcp.json"):
        return value
    servers = list(value.values()) if isinstance(value, dict) else value
    for server in servers if isinstance(servers, list) else []:
        if isinstance(server, dict):  # a copy is not needed: ``held`` is freshly read
            for part in ("env", "headers"):
                if isinstance(server.get(part), dict):
                    server[part] = {name: "***" for name in server[part]}
    return value
