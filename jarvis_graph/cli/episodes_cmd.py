"""``jarvis memory episodes``: search the archive of completed tasks, show an anchor."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="The episodic archive: what was said and done in completed tasks, each snippet "
    "anchored to its session checkpoint (THREAD:CHECKPOINT:INDEX).",
    no_args_is_help=True,
)
KINDS_HELP = "Only this kind: user, reasoning, tool_call, tool_result or response."


def _fail(message: str) -> NoReturn:
    typer.secho(f"error: {message}", fg="red", err=True)
    raise typer.Exit(2)


def _workspace(workspace: Path | None) -> Path:
    ws = (workspace or Path.cwd()).resolve()
    if not ws.is_dir():
        _fail(f"workspace {ws} is not a directory")
    return ws


@app.command("search")
def search(
    query: str = typer.Argument("", help="What to look for, in words (empty: the latest)."),
    thread: str | None = typer.Option(None, "--thread", "-t", help="Only this session."),
    kind: str | None = typer.Option(None, "--kind", "-k", help=KINDS_HELP),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=200, help="Most results."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Search the snippets of completed tasks by meaning, session and kind."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.episodic import EpisodicError, format_episodes, search_project

    ws = _workspace(workspace)
    try:
        episodes = search_project(ws, query, thread=thread, kind=kind, limit=limit)
    except EpisodicError as exc:
        _fail(str(exc))
    echo(format_episodes(episodes) if episodes else "no episodes")


@app.command("show")
def show(
    anchor: str = typer.Argument(..., help="THREAD:CHECKPOINT:INDEX, as `search` prints it."),
    before: int = typer.Option(2, "--before", "-B", min=0, help="Messages before the anchor."),
    after: int = typer.Option(2, "--after", "-A", min=0, help="Messages after the anchor."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Show the messages around an anchor, read from the session's checkpoint."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError, open_checkpointer, sqlite_path
    from jarvis_graph.config import ConfigError
    from jarvis_graph.context import JarvisContext, resolve_settings
    from jarvis_graph.memory.episodic import Anchor, EpisodicError, expand, format_expansion

    ws = _workspace(workspace)
    try:
        where = Anchor.parse(anchor)
        url = resolve_settings(JarvisContext(workspace=str(ws))).checkpoint_url
        path = sqlite_path(url, ws)
        if path is not None and not path.is_file():
            _fail(f"no sessions are stored at {path}; run a task in {ws} first")
        with open_checkpointer(ws, url) as saver:
            found = expand(saver, where, before, after)
    except (EpisodicError, CheckpointError, ConfigError) as exc:
        _fail(str(exc))
    echo(format_expansion(found))
