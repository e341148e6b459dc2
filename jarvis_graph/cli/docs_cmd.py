"""``jarvis docs add|list|remove``: the project's indexed documents (see ``ask_document``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

if TYPE_CHECKING:
    from jarvis_graph.documents.extract import Limits
    from jarvis_graph.memory.documents import DocumentIndex

app = typer.Typer(
    help="Documents indexed for ask_document: PDF, Word, spreadsheets, CSV, HTML, Markdown.",
    no_args_is_help=True,
)


def _index(workspace: Path | None) -> tuple[DocumentIndex, Limits]:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.context import JarvisContext, resolve_settings
    from jarvis_graph.documents.extract import limits_of
    from jarvis_graph.memory.documents import DocumentIndex

    ws = (workspace or Path.cwd()).resolve()
    return DocumentIndex(ws), limits_of(resolve_settings(JarvisContext(workspace=str(ws))))


@app.command("add")
def add(
    paths: list[Path] = typer.Argument(..., help="Documents to index (again, if changed)."),  # noqa: B008
    workspace: Path | None = o.Workspace,
) -> None:
    """Index documents: extract, cut into passages with anchors, embed; exit 1 if any fails."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.documents.extract import DocumentError
    from jarvis_graph.memory.documents import index_with_progress

    index, limits = _index(workspace)
    failed = 0
    for path in paths:
        try:
            entry, done = index_with_progress(index, path, limits, lambda t: echo(f"  {t}"))
        except DocumentError as exc:
            echo(f"error: {exc}", err=True)
            failed += 1
            continue
        state = "indexed" if done else "unchanged"
        note = f" ({entry['note']})" if entry.get("note") else ""
        echo(f"{state}: {entry['path']} ({entry['kind']}, {entry['passages']} passages){note}")
    raise typer.Exit(1 if failed else 0)


@app.command("list")
def list_docs(workspace: Path | None = o.Workspace) -> None:
    """List the indexed documents: path, kind, passages, when indexed."""
    index, _ = _index(workspace)
    entries = index.entries()
    if not entries:
        echo("no documents indexed; add them with `jarvis docs add PATH`")
    for e in entries:
        echo(f"{e['path']}\t{e['kind']}\t{e['passages']} passages\t{e['indexed_at']}")


@app.command("remove")
def remove(
    paths: list[str] = typer.Argument(..., help="Documents to forget (as listed)."),  # noqa: B008
    workspace: Path | None = o.Workspace,
) -> None:
    """Forget documents; exit 1 if one was not indexed."""
    index, _ = _index(workspace)
    missing = 0
    for path in paths:
        if index.remove(path) or index.remove(Path(path)):
            echo(f"removed: {path}")
        else:
            echo(f"error: {path} is not indexed (see `jarvis docs list`)", err=True)
            missing += 1
    raise typer.Exit(1 if missing else 0)
