"""``jarvis config``: show the merged settings, write a starter file."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(help="Settings from config files and JARVIS_* variables.", no_args_is_help=True)


@app.command("show")
def show(workspace: Path | None = o.Workspace) -> None:
    """Print the merged settings (secrets masked) and which files were read."""
    import yaml

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import (
        ConfigError,
        load_settings,
        mask_secrets,
        project_config_path,
        user_config_path,
    )
    from jarvis_graph.secrets import redact_urls

    ws = (workspace or Path.cwd()).resolve()
    try:
        settings = load_settings(ws)
    except ConfigError as exc:  # a project's file: its keys may hold control characters
        echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for path in (user_config_path(), project_config_path(ws)):
        typer.echo(f"# {'read' if path.is_file() else 'absent'}: {path}")
    data = mask_secrets(settings.model_dump(mode="json"))
    # every URL of the settings (base URLs, checkpoint and store URLs, MCP servers) is shown
    # without its userinfo and secret query values, wherever in the tree it sits
    typer.echo(redact_urls(yaml.safe_dump(data, sort_keys=False).rstrip()))


@app.command("init")
def init(
    project: bool = typer.Option(False, "--project", help="Write <workspace>/.jarvis/config.yaml."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Write a commented starter config file (user-level unless --project)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import DEFAULT_CONFIG_TEMPLATE, project_config_path, user_config_path

    path = (
        project_config_path((workspace or Path.cwd()).resolve()) if project else user_config_path()
    )
    if path.exists() and not force:
        typer.echo(f"error: {path} already exists; pass --force to overwrite it", err=True)
        raise typer.Exit(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEFAULT_CONFIG_TEMPLATE, encoding="utf-8")
    typer.echo(f"wrote {path}")
