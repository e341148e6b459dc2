"""``jarvis code``: the code agent on a git repository."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o


def code(
    requirement: str | None = typer.Option(
        None, "--requirement", "-r", help="What to change (asked for when omitted)."
    ),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", "-n", help="Never ask: commit every edit automatically."
    ),
    prefix: str | None = typer.Option(
        None, "--prefix", help="Commit message prefix (default from config: 'jarvis:')."
    ),
    suffix: str | None = typer.Option(None, "--suffix", help="Commit message suffix."),
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    verbose: bool = o.Verbose,
) -> None:
    """Change code in a git repository: each successful edit is shown as a diff and committed."""
    from jarvis_graph.cli.code_driver import run_code

    ctx = o.context_kwargs(
        workspace, platform, model, base_url, script, confirm, yes, max_iterations, non_interactive
    )
    ctx |= {"toolset": "code", "event_bus": "code"}
    raise typer.Exit(
        run_code(ctx, requirement, thread_id=thread, prefix=prefix, suffix=suffix, verbose=verbose)
    )
