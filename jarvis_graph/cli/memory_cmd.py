"""``jarvis memory``: list, search, save, organize, export, import and clear memories."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from jarvis_graph.cli import episodes_cmd
from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="Saved memories: short-term, project and global long-term. `episodes` searches the "
    "archive of completed tasks (each snippet anchored to its session checkpoint). With "
    "`force_save_memory: true` in config, the model is asked once per task, before the "
    "history is cleared or when the task completes, to save what is worth remembering.",
    no_args_is_help=True,
)
app.add_typer(episodes_cmd.app, name="episodes")

TYPES_HELP = "Memory type (repeatable): project_long_term or global_long_term."
Types = typer.Option(None, "--type", "-T", help=TYPES_HELP)
Tags = typer.Option(None, "--tag", help="Tag (repeatable): memories with any of them.")
Ids = typer.Option(None, "--id", help="Memory id (repeatable).")
ExportPath = typer.Argument(..., help="JSON file to write.")
ImportPath = typer.Argument(..., help="Export file, or with --jarvis a folder of *.json.")


def _workspace(workspace: Path | None) -> Path:
    ws = (workspace or Path.cwd()).resolve()
    if not ws.is_dir():
        msg = f"workspace {ws} is not a directory"
        raise typer.BadParameter(msg)
    return ws


def _fail(message: str) -> NoReturn:
    typer.secho(f"error: {message}", fg="red", err=True)
    raise typer.Exit(2)


def _tiers(workspace: Path | None) -> Any:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.tiers import MemoryTiers

    return MemoryTiers(_workspace(workspace), thread_id="cli")


def _types(values: list[str] | None, long_term_only: bool = False) -> list[str] | None:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import LONG_TERM_TYPES, MEMORY_TYPES

    allowed = LONG_TERM_TYPES if long_term_only else MEMORY_TYPES
    for value in values or []:
        if value not in allowed:
            what = "long-term memory type" if long_term_only else "memory type"
            _fail(f"unknown {what} {value!r}; use one of {', '.join(allowed)}")
    return list(values) if values else None


def _print_records(records: list[dict[str, Any]], scores: list[float | None] | None = None) -> None:
    if not records:
        echo("no memories")
        return
    for n, rec in enumerate(records):
        score = f"  score {scores[n]:.2f}" if scores and scores[n] is not None else ""
        tags = ", ".join(rec.get("tags", [])) or "-"
        updated = rec.get("updated_at", "?")
        echo(f"{rec['id']}  [{rec['type']}]  tags: {tags}  updated {updated}{score}")
        echo(f"    {' '.join(str(rec['content']).split())[:300]}")


@app.command("list")
def list_memories(
    memory_type: list[str] | None = Types,
    tag: list[str] | None = Tags,
    workspace: Path | None = o.Workspace,
) -> None:
    """List long-term memories (short-term ones live only inside a run), newest first."""
    types = _types(memory_type, long_term_only=True)
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import LONG_TERM_TYPES

    _print_records(_tiers(workspace).records(types or list(LONG_TERM_TYPES), tag))


@app.command("search")
def search(
    query: str = typer.Argument(..., help="What to look for, in words."),
    memory_type: list[str] | None = Types,
    tag: list[str] | None = Tags,
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=200, help="Most results."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Search long-term memories by meaning (and tags)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import LONG_TERM_TYPES

    types = _types(memory_type, long_term_only=True) or list(LONG_TERM_TYPES)
    hits = _tiers(workspace).retrieve(types, tag, query, limit)
    _print_records([h.record for h in hits], [h.score for h in hits])


@app.command("save")
def save(
    content: str = typer.Argument(..., help="The fact to remember."),
    memory_type: str = typer.Option(
        "project_long_term", "--type", "-T", help="project_long_term or global_long_term."
    ),
    tag: list[str] | None = Tags,
    workspace: Path | None = o.Workspace,
) -> None:
    """Save one long-term memory."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import MemoryInputError, new_record

    _types([memory_type], long_term_only=True)
    try:
        record = new_record(memory_type, list(tag or []), content)
    except MemoryInputError as exc:
        _fail(str(exc))
    _tiers(workspace).save([record])
    echo(f"saved {record['id']} [{memory_type}]")


@app.command("clear")
def clear(
    memory_type: list[str] | None = Types,
    tag: list[str] | None = Tags,
    ids: list[str] | None = Ids,
    all_: bool = typer.Option(False, "--all", help="Delete every memory of the given types."),
    yes: bool = o.Yes,
    workspace: Path | None = o.Workspace,
) -> None:
    """Delete memories by --id, by --tag, or --all of the given --type."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import LONG_TERM_TYPES

    types = _types(memory_type, long_term_only=True) or list(LONG_TERM_TYPES)
    if not (tag or ids or all_):
        _fail("say what to delete: --id ID, --tag TAG, or --all (with --type to narrow it)")
    tiers = _tiers(workspace)
    targets = tiers.records(types, None if ids or all_ else tag)
    if ids:
        targets = [r for r in targets if r["id"] in set(ids)]
    if not targets:
        echo("no memories matched; nothing deleted")
        return
    if not yes and not typer.confirm(f"delete {len(targets)} memories?", default=False):
        raise typer.Exit(1)
    deleted = tiers.clear(types, None, [r["id"] for r in targets])
    echo(f"deleted {len(deleted)} memories")


@app.command("export")
def export(
    path: Path = ExportPath,
    memory_type: list[str] | None = Types,
    tag: list[str] | None = Tags,
    workspace: Path | None = o.Workspace,
) -> None:
    """Write long-term memories to a JSON file."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.transfer import export_memories

    types = _types(memory_type, long_term_only=True)
    if not path.parent.is_dir():
        _fail(f"folder {path.parent} does not exist")
    count = export_memories(_tiers(workspace), path, types, tag)
    echo(f"exported {count} memories to {path}")


@app.command("import")
def import_(
    path: Path = ImportPath,
    memory_type: list[str] | None = Types,
    tag: list[str] | None = Tags,
    overwrite: str = typer.Option(
        "skip", "--overwrite", help="On an existing id: skip, replace, or newer (keep the latest)."
    ),
    jarvis: bool = typer.Option(
        False, "--jarvis", help="PATH is a folder of Jarvis memory files (.jarvis/memory)."
    ),
    jarvis_type: str = typer.Option(
        "project_long_term", "--jarvis-type", help="Type of Jarvis files that do not say theirs."
    ),
    yes: bool = typer.Option(
        False,
        "--yes",
        "-y",
        help="Import global memories without asking (they reach every prompt).",
    ),
    workspace: Path | None = o.Workspace,
) -> None:
    """Import memories from an export file or from Jarvis memory files.

    Global memories go into the prompt of every later session in every project, so a file
    that holds some is imported only after the user says yes (or with ``--yes``).
    """
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.records import MemoryInputError
    from jarvis_graph.memory.transfer import import_records, read_export, read_jarvis_files

    types = _types(memory_type, long_term_only=True)
    _types([jarvis_type], long_term_only=True)
    if overwrite not in ("skip", "replace", "newer"):
        _fail(f"--overwrite must be skip, replace or newer, not {overwrite!r}")
    try:
        records = read_jarvis_files(path, jarvis_type) if jarvis else read_export(path)
        if not types:
            _types(sorted({r["type"] for r in records}), long_term_only=True)
        _confirm_global(records, types, tag, path, yes)
        report = import_records(_tiers(workspace), records, types, tag, overwrite)  # type: ignore[arg-type]
    except MemoryInputError as exc:
        _fail(str(exc))
    echo(
        f"imported {len(report.added)} new, replaced {len(report.replaced)}, "
        f"skipped {len(report.skipped)} existing"
    )


def _confirm_global(
    records: list[dict[str, Any]],
    types: list[str] | None,
    tags: list[str] | None,
    path: Path,
    yes: bool,
) -> None:
    """Stop unless the user allows the global memories the import would write."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.transfer import chosen_records

    chosen = chosen_records(records, types, tags)  # the records import_records takes
    count = sum(1 for r in chosen if r["type"] == "global_long_term")
    if not count or yes:
        return
    what = (
        f"{path} holds {count} global "
        + ("memory, which goes" if count == 1 else "memories, which go")
        + " into the prompt of every later session in every project"
    )
    if not sys.stdin.isatty():
        _fail(
            f"{what}; nothing was imported. Read the file, then import it with --yes, "
            "or only its project memories with --type project_long_term"
        )
    if not typer.confirm(f"{what}. Import them?", default=False):
        typer.echo("nothing imported")
        raise typer.Exit(1)


@app.command("organize")
def organize(
    memory_type: list[str] | None = Types,
    min_overlap: int = typer.Option(
        2, "--min-overlap", min=1, help="Shared tags that link two memories."
    ),
    threshold: float = typer.Option(
        0.9, "--threshold", min=0.0, max=1.0, help="Similarity from which memories are duplicates."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the groups; merge nothing."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Merge groups of overlapping long-term memories with the cheap model."""
    import numpy as np

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.memory.embedder import default_embedder
    from jarvis_graph.memory.organizer import organize as run_organizer
    from jarvis_graph.memory.records import LONG_TERM_TYPES

    types = _types(memory_type, long_term_only=True) or list(LONG_TERM_TYPES)
    tiers = _tiers(workspace)
    records = tiers.records(types)
    vectors = (
        np.asarray(default_embedder().embed_documents([r["content"] for r in records]))
        if records
        else None
    )
    complete = None if dry_run else _cheap_model(_workspace(workspace))
    report = run_organizer(
        records,
        vectors,
        complete,
        save=tiers.save,
        delete=lambda group: tiers.clear(types, None, [r["id"] for r in group]),
        min_overlap=min_overlap,
        threshold=threshold,
    )
    if not report.groups:
        echo("no groups to merge")
        return
    for n, group in enumerate(report.groups, 1):
        echo(f"group {n} [{group[0]['type']}]: " + ", ".join(r["id"] for r in group))
    for result in report.results:
        if result.merged:
            echo(f"merged {len(result.group)} into {result.merged['id']}")
        else:
            typer.secho(f"not merged ({result.error})", fg="yellow")
    if dry_run:
        echo(f"dry run: {len(report.groups)} groups would be merged")


def _cheap_model(workspace: Path) -> Any:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.context import JarvisContext, resolve_settings
    from jarvis_graph.messages import text_of
    from jarvis_graph.platforms.registry import PlatformError, create_chat_model

    try:
        model = create_chat_model(
            resolve_settings(JarvisContext(workspace=str(workspace))).model_for("cheap")
        )
    except PlatformError as exc:
        _fail(f"the cheap model cannot be set up: {exc}")

    def complete(prompt: str) -> str:
        return text_of(model.invoke(prompt))

    return complete
