"""``jarvis run`` and ``jarvis chat``."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o


def run(
    task: str = typer.Argument(..., help="What the agent should do."),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", "-n", help="Never ask: finish when the model answers."
    ),
    thread: str | None = o.Thread,
    new_thread: str | None = o.NewThread,
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    tool_group: str | None = o.ToolGroup,
    verbose: bool = o.Verbose,
    plan: bool = typer.Option(
        False, "--plan/--no-plan", help="Let the planner split the task into sub-tasks first."
    ),
) -> None:
    """Run the agent on TASK until it completes (a new session, or --thread to continue one)."""
    from jarvis_graph.cli.driver import run_task

    ctx = o.context_kwargs(
        workspace,
        platform,
        model,
        base_url,
        script,
        confirm,
        yes,
        max_iterations,
        non_interactive,
        tool_group,
    )
    kind = "planner" if plan else "agent"
    code = run_task(ctx, {"task": task}, thread, verbose, kind, new_thread=new_thread)
    raise typer.Exit(code)


def chat(
    thread: str | None = o.Thread,
    new_thread: str | None = o.NewThread,
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    tool_group: str | None = o.ToolGroup,
    verbose: bool = o.Verbose,
) -> None:
    """Talk with the agent in a REPL (!cmd runs a shell command, @path adds a file, /help)."""
    from jarvis_graph.cli.chat import chat_loop

    ctx = o.context_kwargs(
        workspace,
        platform,
        model,
        base_url,
        script,
        confirm,
        yes,
        max_iterations,
        False,
        tool_group,
    )
    raise typer.Exit(chat_loop(ctx, thread_id=thread, verbose=verbose, new_thread=new_thread))
