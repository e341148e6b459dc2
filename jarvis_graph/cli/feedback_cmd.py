"""``jarvis feedback THREAD --rating 1..5``: rate a finished task so later runs learn from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o


def feedback(
    thread_id: str = typer.Argument(..., help="Session id (see `jarvis sessions list`)."),
    rating: int = typer.Option(..., "--rating", "-r", min=1, max=5, help="1 (bad) to 5 (good)."),
    comment: str = typer.Option("", "--comment", "-m", help="What was good or wrong."),
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    # not o.Model, whose -m would take this command's -m (--comment, as in git commit -m)
    model: str | None = typer.Option(None, "--model", help="Model name for the platform."),
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
) -> None:
    """Rate a task: 1-2 writes a lesson, 4-5 keeps what worked, for similar tasks later."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import EXIT_ERROR, console, open_agent
    from jarvis_graph.cli.sessions_cmd import existing_session
    from jarvis_graph.config import ConfigError
    from jarvis_graph.platforms.errors import PlatformError

    ctx = o.context_kwargs(workspace, platform, model, base_url, script, None, False, None, True)
    try:
        with open_agent(ctx) as graph:
            state = existing_session(graph, thread_id)
            code = rate(graph, ctx, state.values, thread_id, rating, comment)
    except (ConfigError, PlatformError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_ERROR) from None
    raise typer.Exit(code)


def rate(
    graph: Any,
    ctx: dict[str, Any],
    values: dict[str, Any],
    thread_id: str,
    rating: int,
    comment: str,
) -> int:
    """Store the rating, learn from it, and say what was kept; the exit code."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import console
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.runtime.feedback import LOW, give_feedback
    from jarvis_graph.runtime.services import RunServices

    model = RunServices(JarvisContext(**ctx)).chat_model("cheap")
    outcome = give_feedback(
        values, thread_id, rating, comment, Path(ctx["workspace"]), model, graph.store
    )
    line = f"rated {thread_id} {rating}/5"
    record = outcome.record
    if record is not None:
        kind = "lesson" if "lesson" in record["tags"] else "pattern"
        where = f"{record['id']}, tags: {', '.join(record['tags'])}"
        if outcome.from_comment:
            line += f"; {outcome.problem}, so your comment is the lesson ({where}):"
        else:
            line += f"; {kind} saved ({where}):"
        console.print(escape(line), highlight=False)
        console.print(f"  {record['content']}", markup=False, highlight=False)
        return 0
    if outcome.problem:
        kind = "lesson" if rating <= LOW else "pattern"
        line += (
            f"; no {kind} was written: {outcome.problem}. The rating is kept; rate the task "
            "again to retry."
        )
    console.print(escape(line), highlight=False)
    return 0
