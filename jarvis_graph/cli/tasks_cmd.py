"""``jarvis tasks``: the predefined tasks of the project and the user."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="Predefined tasks (.jarvis/tasks.yaml, ~/.jarvis/tasks.yaml).", no_args_is_help=True
)


@app.command("list")
def list_tasks(workspace: Path | None = o.Workspace) -> None:
    """List the predefined tasks: name, placeholders, description, file."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.task_presets import TaskPresetError, load_presets, preset_files

    project = (workspace or Path.cwd()).resolve()
    try:
        presets = load_presets(project)
    except TaskPresetError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if not presets:
        where = " or ".join(str(p) for p in preset_files(project))
        echo(f"no predefined tasks; add them to {where} (see the README)")
        return
    for preset in sorted(presets.values(), key=lambda p: p.name):
        fields = " ".join(f"{{{n}}}" for n in preset.placeholders)
        echo(f"{preset.name}\t{fields}\t{preset.description}\t{preset.source}")
