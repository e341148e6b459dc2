"""``jarvis models``: platforms and configured model groups."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o

app = typer.Typer(help="Model platforms and model groups.", no_args_is_help=True)


@app.command("list")
def list_models(workspace: Path | None = o.Workspace) -> None:
    """List registered platforms (plugins included) and the configured model groups."""
    from rich.console import Console
    from rich.table import Table

    from jarvis_graph.config import ConfigError, load_settings
    from jarvis_graph.platforms.registry import list_platforms, plugin_errors, resolve_platform

    console = Console(highlight=False)
    table = Table("platform", "source", "description")
    for info in list_platforms():
        table.add_row(info.name, info.source, info.description)
    console.print(table)
    for note in plugin_errors():
        console.print(f"[yellow]warning:[/] {note}")
    try:
        settings = load_settings((workspace or Path.cwd()).resolve())
    except ConfigError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    groups = Table("group", "role", "platform", "model", "base_url", "key variable")
    for name, roles in settings.model_groups.items():
        active = " (active)" if name == settings.model_group else ""
        for role, spec in roles.items():
            try:
                platform = resolve_platform(spec)
            except Exception:
                platform = f"{spec.platform} (unresolved)"
            groups.add_row(
                name + active,
                role,
                platform,
                spec.model or "-",
                spec.base_url or "-",
                spec.api_key_env,
            )
    console.print(groups)
