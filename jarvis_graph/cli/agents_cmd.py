"""``jarvis agents list``: the agents, roles and teams ``jarvis run -c NAME`` can run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="Agent definitions: built-in and ~/.jarvis/agents, .jarvis/agents (YAML).",
    no_args_is_help=True,
)


@app.command("list")
def list_agents(workspace: Path | None = o.Workspace) -> None:
    """List the agent definitions: name, kind, source, description."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError
    from jarvis_graph.multi.definitions import load_definitions

    try:
        found = load_definitions((workspace or Path.cwd()).resolve())
    except ConfigError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for d in found.values():
        echo(f"{d.name}\t{d.kind}\t{d.source}\t{d.description}")


def apply_definition(ctx: dict[str, Any], name: str, plan: bool = False) -> str:
    """Set ``ctx`` up for the definition called ``name``; the kind of graph to run.

    An agent or role adds its instructions to the system prompt and keeps only its tools
    (every name or glob must match a tool the run has); a team runs its agents file.

    Raises:
        ConfigError: No such definition, a broken file, a tool the run lacks, or ``plan``
            asked of a team.
    """
    import fnmatch

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.multi.definitions import get_definition
    from jarvis_graph.runtime.services import RunServices

    definition = get_definition(Path(ctx["workspace"]), name)
    if definition.agents_file is not None:
        if plan:
            msg = f"--plan splits a task for one agent; {name!r} is a {definition.kind} team"
            raise ConfigError(msg)
        ctx["agents_file"] = definition.agents_file
        return definition.graph_kind
    if definition.model_group:
        ctx["model_group"] = definition.model_group
    if definition.system_prompt:
        ctx["role_prompt"] = definition.system_prompt
    if definition.tools is not None:
        have = RunServices(JarvisContext(**ctx)).tools
        for pattern in definition.tools:
            if not any(fnmatch.fnmatchcase(tool, pattern) for tool in have):
                msg = (
                    f"{definition.kind} {name!r} ({definition.source}) names tool {pattern!r}, "
                    f"which this run does not have; its tools are: {', '.join(sorted(have))}"
                )
                raise ConfigError(msg)
        ctx["only_tools"] = ",".join(definition.tools)
    return "planner" if plan or definition.plan else "agent"
