"""``jarvis tools list``: the tools a run in this workspace would have."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o

app = typer.Typer(help="Tools: built-in, user folders, MCP servers.", no_args_is_help=True)


@app.command("list")
def list_tools(
    group: str | None = typer.Option(None, "--group", "-g", help="Only the tools of this group."),
    workspace: Path | None = o.Workspace,
) -> None:
    """List the tools by name with their source (MCP servers are started to ask them)."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import TerminalConsole, clip
    from jarvis_graph.config import ConfigError
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.runtime.services import RunServices
    from jarvis_graph.tools.registry import close_registries

    console = TerminalConsole(highlight=False)
    ws = (workspace or Path.cwd()).resolve()
    try:
        services = RunServices(JarvisContext(workspace=str(ws), tool_group=group))
        tools = services.tools
        table = Table("tool", "source", "risky", "description")
        for name, tool in sorted(tools.items()):
            meta = tool.metadata or {}
            first = (tool.description or "").strip().splitlines()[:1]
            table.add_row(  # names and descriptions (MCP servers' too) are text, not markup
                Text(name),
                Text(str(meta.get("source", "built-in"))),
                "yes" if meta.get("risky") else "",
                Text(clip(first[0], 100) if first else ""),
            )
        console.print(table)
        count = f"{len(tools)} tool{'' if len(tools) == 1 else 's'}"
        console.print(count + (f" in group {group!r}" if group else ""), markup=False)
        for note in services.problems:
            console.print(f"[yellow]warning:[/] {escape(note)}")
        hints: dict[str, list[str]] = {}
        for name, hint in services.unavailable.items():
            hints.setdefault(hint, []).append(name)
        for hint, names in hints.items():
            console.print(f"off: {', '.join(names)}: {hint}", markup=False)
    except ConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    finally:
        close_registries()
