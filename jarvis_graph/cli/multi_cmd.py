"""``jarvis multi``: a task for a team of agents defined in a YAML file."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o

AgentsFile = typer.Option(
    ..., "--config", "-c", help="Agents YAML (main_agent, agents, ...); see examples/."
)


def multi(
    task: str = typer.Argument(..., help="What the team should do."),
    config: Path = AgentsFile,
    route: bool = typer.Option(
        False, "--route", help="Expert routing: one agent, picked by its description, answers."
    ),
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    sandbox: str | None = o.Sandbox,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    verbose: bool = o.Verbose,
) -> None:
    """Run TASK with the agents of --config: they hand work to each other until one answers."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import EXIT_ERROR, console, run_task
    from jarvis_graph.config import ConfigError

    ctx = o.context_kwargs(
        workspace,
        platform,
        model,
        base_url,
        script,
        confirm,
        yes,
        max_iterations,
        True,
        sandbox=sandbox,
    )
    ctx["agents_file"] = str(config.expanduser().resolve())
    try:
        check_agents(ctx)
    except ConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
        raise typer.Exit(EXIT_ERROR) from None
    finally:
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.tools.registry import close_registries

        close_registries()
    kind = "expert_router" if route else "multi_agent"
    raise typer.Exit(run_task(ctx, {"task": task}, thread_id=thread, verbose=verbose, kind=kind))


def check_agents(ctx: dict[str, object]) -> None:
    """The agents file is valid and every tool it names exists (before anything runs)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import prepare_tools
    from jarvis_graph.multi.config import check_tools, load_agents

    agents = load_agents(str(ctx["agents_file"]))
    check_tools(agents, set(prepare_tools(dict(ctx), show_sandbox=False)))
