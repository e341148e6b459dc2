"""``jarvis methodology``: list, add, import, export, share and sync methodologies."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="Methodologies: reusable ways of solving kinds of problems.", no_args_is_help=True
)

FileOpt = typer.Option(None, "--file", "-f", help="Read the text from a file.")
ImportPath = typer.Argument(..., help="Export file, a JSON record or list, or a folder.")
ExportPath = typer.Argument(..., help="JSON file to write.")
ShareTypes = typer.Argument(None, help="Problem types to share (default: all of yours).")


def _fail(message: str) -> NoReturn:
    typer.secho(f"error: {message}", fg="red", err=True)
    raise typer.Exit(2)


def _settings(workspace: Path | None) -> Any:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError, load_settings

    try:
        return load_settings((workspace or Path.cwd()).resolve())
    except ConfigError as exc:
        _fail(str(exc))


def _central_url(settings: Any) -> str:
    url = settings.central_methodology_repo
    if not url:
        _fail(
            "no central repository is configured; set `central_methodology_repo: <git URL>` "
            "in ~/.jarvis/config.yaml or JARVIS_CENTRAL_METHODOLOGY_REPO"
        )
    return str(url)


@app.command("list")
def list_methodologies(
    full: bool = typer.Option(False, "--full", help="Print the whole content."),
    workspace: Path | None = o.Workspace,
) -> None:
    """List the methodologies of every folder (the first one holding a problem type wins)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.store import load_all, methodology_dirs

    records = load_all(methodology_dirs(_settings(workspace)))
    if not records:
        echo("no methodologies; add one with: jarvis methodology add TYPE --content ...")
        return
    for record in records:
        echo(f"{record.problem_type}\t{record.source}")
        if full:
            echo(f"  {record.content}".replace("\n", "\n  "))


@app.command("add")
def add(
    problem_type: str = typer.Argument(..., help="Short name of the kind of problem."),
    content: str | None = typer.Option(None, "--content", "-c", help="The methodology text."),
    file: Path | None = FileOpt,
) -> None:
    """Add (or replace) a methodology in ~/.jarvis/methodologies."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.store import MethodologyError, checked, home_dir, save

    if (content is None) == (file is None):
        _fail("give the methodology text with --content TEXT or --file PATH (one of them)")
    if file is not None:
        try:
            content = file.read_text(encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot read {file}: {exc}")
    try:
        path = save(home_dir(), checked(problem_type, content))
    except MethodologyError as exc:
        _fail(str(exc))
    echo(f"saved {problem_type!r} to {path}")


@app.command("import")
def import_methodologies(
    path: Path = ImportPath,
) -> None:
    """Import methodologies into ~/.jarvis/methodologies (same problem type: replaced)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.store import MethodologyError, home_dir, read_records, save

    if not path.exists():
        _fail(f"{path} does not exist")
    try:
        records = read_records(path)
    except MethodologyError as exc:
        _fail(str(exc))
    for record in records:
        save(home_dir(), record)
    echo(f"imported {len(records)} methodologies into {home_dir()}")


@app.command("export")
def export(
    path: Path = ExportPath,
    workspace: Path | None = o.Workspace,
) -> None:
    """Export every methodology to one JSON file."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.store import export_records, load_all, methodology_dirs

    count = export_records(load_all(methodology_dirs(_settings(workspace))), path)
    echo(f"exported {count} methodologies to {path}")


@app.command("share")
def share(
    problem_types: list[str] = ShareTypes,
    yes: bool = typer.Option(False, "--yes", "-y", help="Share without asking."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Commit your methodologies to the central repository and push them, after confirming."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.git_sync import share as push
    from jarvis_graph.methodology.store import MethodologyError, home_dir, load_dir
    from jarvis_graph.secrets import redact_url, redact_urls

    url = _central_url(_settings(workspace))
    mine = load_dir(home_dir())
    wanted = {p.lower() for p in problem_types or []}
    chosen = [m for m in mine if not wanted or m.problem_type.lower() in wanted]
    missing = wanted - {m.problem_type.lower() for m in chosen}
    if missing:
        _fail(f"no methodology named {', '.join(sorted(missing))} in {home_dir()}")
    if not chosen:
        _fail(f"no methodologies to share in {home_dir()}")
    echo(f"to share with {redact_url(url)}:")
    for record in chosen:
        echo(f"  {record.problem_type}")
    if not yes and not typer.confirm("Commit and push these methodologies?", default=False):
        echo("nothing shared")
        raise typer.Exit(1)
    try:
        echo(redact_urls(push(url, chosen)))
    except MethodologyError as exc:
        _fail(str(exc))


@app.command("sync")
def sync(workspace: Path | None = o.Workspace) -> None:
    """Clone or pull the central methodology repository now."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.methodology.git_sync import sync as pull
    from jarvis_graph.methodology.store import MethodologyError, central_dir
    from jarvis_graph.secrets import redact_url

    url = _central_url(_settings(workspace))
    try:
        done = pull(url, force=True)
    except MethodologyError as exc:
        _fail(str(exc))
    echo(f"{done}: {redact_url(url)} in {central_dir()}")
