"""``jarvis run`` and ``jarvis chat``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo


def run(
    task: str | None = typer.Argument(None, help="What the agent should do."),
    preset: str | None = typer.Option(
        None, "--task", help="Run this predefined task (`jarvis tasks list`) instead of TASK."
    ),
    sets: list[str] = typer.Option(  # noqa: B008 - typer's way of declaring a list option
        [], "--set", help="KEY=VALUE for a {placeholder} of the --task (repeatable)."
    ),
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
    sandbox: str | None = o.Sandbox,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    tool_group: str | None = o.ToolGroup,
    verbose: bool = o.Verbose,
    plan: bool = typer.Option(
        False, "--plan/--no-plan", help="Let the planner split the task into sub-tasks first."
    ),
    definition: str | None = o.Definition,
    images: list[Path] = typer.Option(  # noqa: B008 - typer's way of declaring a list option
        [], "--image", help="An image for a vision model (repeatable); see the README."
    ),
) -> None:
    """Run the agent on TASK until it completes (a new session, or --thread to continue one)."""
    task = _task_text(task, preset, sets, workspace)
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
        sandbox,
    )
    kind = "planner" if plan else "agent"
    if definition is not None:
        kind = _apply(ctx, definition, plan)
    elif not (plan or images) and thread is None and new_thread is None and _to_code(ctx):
        from jarvis_graph.cli.code_cmd import start_code

        raise typer.Exit(start_code(ctx, task, verbose))
    graph_input: dict[str, Any] = {"task": task}
    if images:
        graph_input = _with_images(ctx, task, images)
    code = run_task(ctx, graph_input, thread, verbose, kind, new_thread=new_thread)
    raise typer.Exit(code)


def _task_text(
    task: str | None, preset: str | None, sets: list[str], workspace: Path | None
) -> str:
    """TASK as given, or the predefined task ``--task`` names, filled from ``--set``."""
    if preset is None:
        if sets:
            raise _usage("--set fills the placeholders of a --task; give --task NAME")
        if task is None:
            raise _usage("give a TASK, or --task NAME for a predefined one (`jarvis tasks list`)")
        return task
    if task is not None:
        raise _usage(f"give either a TASK or --task {preset}, not both")
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.task_presets import TaskPresetError, get_preset, parse_sets

    try:
        return get_preset((workspace or Path.cwd()).resolve(), preset).fill(parse_sets(sets))
    except TaskPresetError as exc:
        raise _usage(str(exc)) from None


def _apply(ctx: dict[str, Any], definition: str, plan: bool = False) -> str:
    """Set ``ctx`` up for the agent definition ``-c`` names; the graph kind to run."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.agents_cmd import apply_definition
    from jarvis_graph.config import ConfigError
    from jarvis_graph.tools.registry import close_registries

    try:
        kind = apply_definition(ctx, definition, plan)
        if ctx.get("agents_file"):
            # deferred: as above
            from jarvis_graph.cli.multi_cmd import check_agents

            check_agents(ctx)
        return kind
    except ConfigError as exc:
        raise _usage(str(exc)) from None
    finally:
        close_registries()


def _with_images(ctx: dict[str, Any], task: str, images: list[Path]) -> dict[str, Any]:
    """The graph input with the images (see cli/images_input); refusals are usage errors."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.images_input import task_input
    from jarvis_graph.config import ConfigError
    from jarvis_graph.images import ImageError

    try:
        return task_input(ctx, task, images)
    except (ImageError, ConfigError) as exc:
        raise _usage(str(exc)) from None


def _to_code(ctx: dict[str, Any]) -> bool:
    """Whether to hand the run to the code agent (a git repository; see code_switch)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.code_switch import switch_to_code

    return switch_to_code(ctx)


def _usage(message: str) -> typer.Exit:
    echo(f"error: {message}", err=True)
    return typer.Exit(2)


def chat(
    thread: str | None = o.Thread,
    new_thread: str | None = o.NewThread,
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    sandbox: str | None = o.Sandbox,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    tool_group: str | None = o.ToolGroup,
    verbose: bool = o.Verbose,
    definition: str | None = o.Definition,
    threads: bool = typer.Option(
        False, "--threads", help="List the open sessions (those thread_routing chooses from)."
    ),
) -> None:
    """Talk with the agent in a REPL (!cmd runs a shell command, @path adds a file, /help).

    On a terminal, a new chat without -c first offers the agent definitions and the
    predefined tasks (`chat_picker: false` in the config turns that off).
    """
    from jarvis_graph.cli.chat import chat_loop, list_open, start_choice

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
        sandbox,
    )
    if threads:
        raise typer.Exit(list_open(ctx))
    kind, first = "agent", None
    if definition is None and thread is None and new_thread is None:
        if _to_code(ctx):
            from jarvis_graph.cli.code_cmd import start_code

            raise typer.Exit(start_code(ctx, None, verbose))
        chosen, first = start_choice(ctx)
        definition = chosen.name if chosen is not None else None
    if definition is not None:
        kind = _apply(ctx, definition)
    code = chat_loop(ctx, thread, verbose, new_thread, kind=kind, first=first)
    raise typer.Exit(code)
