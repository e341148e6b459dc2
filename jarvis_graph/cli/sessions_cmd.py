"""``jarvis sessions``: list, show, resume, fork and delete threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(help="Saved sessions (threads) of this project.", no_args_is_help=True)


def _ctx(workspace: Path | None, **extra: Any) -> dict[str, Any]:
    return o.context_kwargs(workspace, None, None, None, None, None, False, None, False) | extra


@app.command("list")
def list_sessions(workspace: Path | None = o.Workspace) -> None:
    """List the sessions of the project, newest first."""
    from rich.table import Table

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError, list_threads
    from jarvis_graph.cli.driver import console, open_agent, thread_config

    with open_agent(_ctx(workspace)) as graph:
        rows = list_threads(graph.checkpointer)
        if not rows:
            console.print('no sessions yet; start one with: jarvis run "task"')
            return
        header = ("session", "status", "calls", "steps", "updated", "task")
        lines = []
        for row in rows:
            try:
                state = graph.get_state(thread_config(row.thread_id))
            except CheckpointError:  # `sessions show ID` says why; the others are listed
                hint = f"jarvis sessions show {row.thread_id} says why"
                lines.append((row.thread_id, "unreadable", "?", str(row.checkpoints), "", hint))
                continue
            values = state.values
            waiting = " (waiting)" if state.interrupts else ""
            status = values.get("status", "?") + waiting if state.next or values else "empty"
            updated = (state.created_at or "")[:19].replace("T", " ")
            task = " ".join(str(values.get("task", "")).split())[:60]
            chain = (state.metadata or {}).get("jarvis_chain")
            if chain:  # a chain run by hand (jarvis chains run)
                task = f"chain {chain}"
            calls = str(values.get("iteration", 0))
            lines.append((row.thread_id, status, calls, str(row.checkpoints), updated, task))
        if console.is_terminal:
            from rich.text import Text

            table = Table(*header)
            for line in lines:  # task texts are shown as typed, never as markup
                table.add_row(*(Text(cell) for cell in line))
            console.print(table)
        else:  # piped: a header, then one plain line per session, easy to grep and cut
            for line in [header, *lines]:
                echo("\t".join(line))  # tabs kept (rich would expand them)


@app.command("show")
def show(
    thread_id: str = typer.Argument(..., help="Session id (see `jarvis sessions list`)."),
    history: bool = typer.Option(False, "--history", help="List the checkpoints too."),
    tree: bool = typer.Option(
        False, "--tree", help="Only the tree of sub-runs (planner steps, sub-agents, hand-offs)."
    ),
    workspace: Path | None = o.Workspace,
) -> None:
    """Show a session's messages and sub-runs (and, with --history, its checkpoints)."""
    from rich.markup import escape

    from jarvis_graph.cli.driver import console, open_agent, thread_config
    from jarvis_graph.cli.render import short

    with open_agent(_ctx(workspace)) as graph:
        state = existing_session(graph, thread_id)
        chain = _chain_values(graph, thread_id, state)  # a chain run by hand: its steps
        if tree:
            if chain:
                _show_chain(chain, 0)
            else:
                task = " ".join(str(state.values.get("task", "")).split())
                console.print(f"{state.values.get('status', '?')} · {task}", markup=False)
            if not _show_sub_runs(graph.checkpointer, thread_id) and not chain:
                console.print("no sub-runs", markup=False)
            return
        if chain:
            _show_chain(chain, 0)
        for message in state.values.get("messages", []):
            if message.type == "system":
                continue
            calls = getattr(message, "tool_calls", None)
            text = escape(short(message.content, 300)) if message.content else ""
            extra = escape(" ".join(f"⚙ {c['name']}{short(c['args'], 80)}" for c in calls or []))
            console.print(f"[bold]{message.type:>5}[/] {text} [cyan]{extra}[/]")
        where = escape(f"status {state.values.get('status', '?')} · next {list(state.next)}")
        console.print(f"[dim]{where}[/]")
        _show_sub_runs(graph.checkpointer, thread_id)
        if history:
            for snap in graph.get_state_history(thread_config(thread_id)):
                cid = snap.config["configurable"]["checkpoint_id"]
                step = snap.metadata.get("step") if snap.metadata else "?"
                n = len(snap.values.get("messages", []))
                line = f"  {cid}  step {step:>3}  next {list(snap.next)}  messages {n}"
                console.print(line, markup=False)


def _show_sub_runs(saver: Any, thread_id: str) -> bool:
    from rich.markup import escape

    from jarvis_graph.cli.driver import console
    from jarvis_graph.cli.subruns import describe, sub_runs

    runs = sub_runs(saver, thread_id)
    if runs:
        console.print("[bold]sub-runs[/]")
    for run in runs:
        console.print(f"{'  ' * run.level}└ {escape(describe(run))}")
        _show_chain(run.values, run.level + 1, header=False)
    return bool(runs)


def _chain_values(graph: Any, thread_id: str, state: Any) -> dict[str, Any]:
    """The values of a chain run by hand (``{}`` for another session).

    ``graph`` is the agent's, which has no channel for a chain's steps: they are read from
    the saved checkpoint.
    """
    from jarvis_graph.cli.driver import thread_config

    if (state.metadata or {}).get("jarvis_graph") != "chain":
        return {}
    saved = graph.checkpointer.get_tuple(thread_config(thread_id))
    return dict(saved.checkpoint.get("channel_values") or {}) if saved else {}


def _show_chain(values: dict[str, Any], level: int, header: bool = True) -> None:
    """A chain run's line (with ``header``) and its steps one level below ``level``."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import console
    from jarvis_graph.cli.subruns import SubRun, chain_steps, describe

    if not values.get("chain"):
        return
    if header:
        console.print(describe(SubRun("", level, "chain", values)), markup=False)
    for line in chain_steps(values):
        console.print(f"{'  ' * (level + 1)}└ {line}", markup=False)


def existing_session(graph: Any, thread_id: str) -> Any:
    """The latest state of ``thread_id``; an unknown or unreadable session exits 1."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError, list_threads
    from jarvis_graph.cli.driver import console, thread_config
    from jarvis_graph.cli.preflight import unknown_session

    try:
        state = graph.get_state(thread_config(thread_id))
    except CheckpointError as exc:  # a part of the session is gone or unreadable
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    if not state.created_at:
        known = [row.thread_id for row in list_threads(graph.checkpointer)]
        console.print(f"[red]error:[/] {escape(unknown_session(thread_id, known))}")
        raise typer.Exit(1)
    return state


def known_session(graph: Any, thread_id: str) -> None:
    """Exit 1 unless the store has ``thread_id``; its checkpoints are not read.

    For commands that must work on a session that cannot be read (delete, unlock).
    """
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import list_threads
    from jarvis_graph.cli.driver import console
    from jarvis_graph.cli.preflight import unknown_session

    known = [row.thread_id for row in list_threads(graph.checkpointer)]
    if thread_id not in known:
        console.print(f"[red]error:[/] {escape(unknown_session(thread_id, known))}")
        raise typer.Exit(1)


@app.command("resume")
def resume(
    thread_id: str = typer.Argument(..., help="Session id."),
    workspace: Path | None = o.Workspace,
    yes: bool = o.Yes,
    non_interactive: bool = typer.Option(False, "--non-interactive", "-n"),
    verbose: bool = o.Verbose,
) -> None:
    """Continue a session from its last checkpoint (tool calls already done are not re-run)."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import (
        EXIT_OK,
        console,
        drive,
        open_agent,
        prepare_tools,
        saved_context,
    )
    from jarvis_graph.cli.preflight import RunSetupError, check_model
    from jarvis_graph.config import ConfigError

    base = _ctx(workspace)
    with open_agent(base) as graph:
        state = existing_session(graph, thread_id)
        kind = str((state.metadata or {}).get("jarvis_graph") or "agent")
    if kind == "chain":
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.cli.chains_cmd import resume_chain

        raise typer.Exit(resume_chain(thread_id, workspace, yes, non_interactive, verbose))
    ctx = {**base, **saved_context(state), "workspace": base["workspace"]}
    with open_agent(ctx, kind) as graph:
        state = existing_session(graph, thread_id)
        ctx["workspace"] = base["workspace"]
        if yes:
            ctx["confirm"] = "never"
        if non_interactive:
            ctx["non_interactive"] = True
        # A step whose tasks all saved their results before a kill has no ``next`` but
        # still has ``tasks``: resuming applies those results and goes on.
        if not state.next and not state.tasks:
            console.print(
                f"session {thread_id} is {state.values.get('status', 'finished')}; give it a new "
                f'task with: jarvis run --thread {thread_id} "..."',
                markup=False,
            )
            raise typer.Exit(EXIT_OK)
        try:
            prepare_tools(ctx)
            check_model(ctx, kind)  # before a step is added to the session
        except (ConfigError, RunSetupError) as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
        raise typer.Exit(drive(graph, ctx, None, thread_id, verbose))


@app.command("fork")
def fork(
    thread_id: str = typer.Argument(..., help="Session id to fork."),
    checkpoint: str | None = typer.Option(
        None, "--checkpoint", "-c", help="Checkpoint id to fork from (default: the latest)."
    ),
    workspace: Path | None = o.Workspace,
) -> None:
    """Copy a session, as of a checkpoint, into a new session (time travel)."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError, fork_thread
    from jarvis_graph.cli.driver import console, new_thread_id, open_agent

    with open_agent(_ctx(workspace)) as graph:
        existing_session(graph, thread_id)
        new_id = new_thread_id()
        try:
            at = fork_thread(graph.checkpointer, thread_id, new_id, checkpoint)
        except CheckpointError as exc:
            message = escape(f"{exc}; see `jarvis sessions show ID --history`")
            console.print(f"[red]error:[/] {message}")
            raise typer.Exit(1) from None
        console.print(f"forked {thread_id} at checkpoint {at} into {new_id}", markup=False)
        console.print(f"[dim]continue with: jarvis sessions resume {new_id}[/]")


@app.command("unlock")
def unlock(
    thread_id: str = typer.Argument(..., help="Session id."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Release a session's lock left by a run on another host that is gone.

    A run on this host that is gone is noticed by the next run, which takes its lock over;
    the lock of a run still alive on this host is not released.
    """
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError
    from jarvis_graph.cli.driver import console, open_agent
    from jarvis_graph.thread_lock import break_lock

    with open_agent(_ctx(workspace)) as graph:
        known_session(graph, thread_id)
        try:
            holder = break_lock(graph.checkpointer, thread_id)
        except CheckpointError as exc:  # held by a live run here
            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
    if holder is None:
        console.print(f"session {escape(thread_id)} was not locked")
    else:
        console.print(f"released session {escape(thread_id)} (held by {escape(holder.describe())})")


@app.command("delete")
def delete(
    thread_id: str = typer.Argument(..., help="Session id."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Delete a session, all its checkpoints and its episodes in the archive.

    On a terminal it asks first; elsewhere (a script, a pipe) it needs ``--yes``.
    """
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import console, held_thread, open_agent
    from jarvis_graph.memory.episodic import forget_project_thread
    from jarvis_graph.thread_lock import ThreadBusyError

    ctx = _ctx(workspace)
    with open_agent(ctx) as graph:
        known_session(graph, thread_id)  # an unreadable session can be deleted too
        if not yes:
            _confirm_delete(thread_id)
        try:
            with held_thread(graph, ctx, thread_id):  # not under a run that is using it
                graph.checkpointer.delete_thread(thread_id)
        except ThreadBusyError as exc:
            from rich.markup import escape

            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
        episodes = forget_project_thread(Path(ctx["workspace"]), thread_id)
        message = f"deleted session {thread_id} and its {episodes} archived episodes"
        console.print(message, markup=False)


def _confirm_delete(thread_id: str) -> None:
    """Exit 1 unless the user says yes; without a terminal to ask on, say to pass --yes."""
    import sys

    what = f"session {thread_id}, all its checkpoints and its archived episodes"
    if not sys.stdin.isatty():
        echo(f"error: not deleting {what} without asking: pass --yes (-y)", err=True)
        raise typer.Exit(1)
    if not typer.confirm(f"Delete {what}?", default=False):
        echo("nothing deleted")
        raise typer.Exit(1)


ExportPath = typer.Argument(..., help="File to write (JSON Lines).")
ExportThreads = typer.Option(
    None, "--thread", "-t", help="Session to export (repeatable; default: all)."
)
ImportPath = typer.Argument(..., help="A file written by `jarvis sessions export`.")


@app.command("export")
def export(
    path: Path = ExportPath,
    thread: list[str] = ExportThreads,
    force: bool = typer.Option(False, "--force", help="Overwrite PATH if it exists."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Write sessions, with every checkpoint and sub-run, to a file another store imports."""
    import os
    import tempfile

    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError
    from jarvis_graph.cli.driver import console, open_agent
    from jarvis_graph.session_transfer import export_sessions

    if path.exists() and not force:
        console.print(f"[red]error:[/] {escape(str(path))} exists; pass --force to overwrite it")
        raise typer.Exit(1)
    with open_agent(_ctx(workspace)) as graph:
        fd, part = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                report = export_sessions(graph.checkpointer, out, list(thread or []))
            os.replace(part, path)
        except CheckpointError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
        finally:
            Path(part).unlink(missing_ok=True)
    console.print(
        f"exported {len(report.threads)} sessions ({report.checkpoints} checkpoints) to {path}",
        markup=False,
    )


@app.command("import")
def import_(
    path: Path = ImportPath,
    replace: bool = typer.Option(
        False, "--replace", help="Replace sessions this store already has (default: skip them)."
    ),
    workspace: Path | None = o.Workspace,
) -> None:
    """Add the sessions of an export file to this project's session store."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError
    from jarvis_graph.cli.driver import console, open_agent
    from jarvis_graph.session_transfer import import_sessions

    with open_agent(_ctx(workspace)) as graph:
        try:
            report = import_sessions(graph.checkpointer, path, replace=replace)
        except CheckpointError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
    console.print(
        f"imported {len(report.threads)} sessions ({report.checkpoints} checkpoints)"
        + (f", replaced {', '.join(report.replaced)}" if report.replaced else ""),
        markup=False,
    )
    if report.skipped:
        console.print(
            f"skipped {len(report.skipped)} sessions this store already has: "
            f"{', '.join(report.skipped)} (--replace replaces them)",
            markup=False,
        )


@app.command("prune")
def prune(
    older_than: str | None = typer.Option(
        None, "--older-than", help="Delete sessions not used for this long (30d, 12h, 90m)."
    ),
    keep_last: int | None = typer.Option(
        None, "--keep-last", help="In finished sessions, keep only the last N checkpoints."
    ),
    grace: str = typer.Option(
        "1h", "--grace", help="Keep unreferenced parts younger than this (a run may need them)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would go; change nothing."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Delete old sessions and old checkpoints, collect orphan parts, give space back."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError
    from jarvis_graph.cli.driver import console, open_agent, thread_config
    from jarvis_graph.memory.episodic import forget_project_thread
    from jarvis_graph.session_prune import parse_duration
    from jarvis_graph.session_prune import prune as prune_store

    try:
        age = parse_duration(older_than) if older_than is not None else None
        keep_for = parse_duration(grace)
    except ValueError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    ctx = _ctx(workspace)
    with open_agent(ctx) as graph:

        def finished(thread: str) -> bool:
            try:
                state = graph.get_state(thread_config(thread))
            except CheckpointError:  # unreadable: its checkpoints are left as they are
                return False
            return not state.next and not state.interrupts

        try:
            report = prune_store(
                graph.checkpointer,
                older_than=age,
                keep_last=keep_last,
                finished=finished,
                grace=keep_for,
                dry_run=dry_run,
            )
        except CheckpointError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(1) from None
        if not dry_run:
            for thread in report.sessions:
                forget_project_thread(Path(ctx["workspace"]), thread)
    would = "would remove" if dry_run else "removed"
    parts = ", ".join(f"{n} {table}" for table, n in report.parts.items())
    console.print(
        f"{would} {len(report.sessions)} sessions, {report.checkpoints} checkpoints, "
        f"orphan parts ({parts}) and {report.files} old blob files",
        markup=False,
    )
    if report.sessions:
        console.print(f"  sessions: {', '.join(report.sessions)}", markup=False)
    if report.busy:
        console.print(
            f"left {len(report.busy)} sessions in use by a run: {', '.join(report.busy)}",
            markup=False,
        )
    if dry_run:  # the store is as it was: say what a prune would give back
        now = f"; store now {_size(report.bytes_before)}" if report.bytes_before is not None else ""
        console.print(f"would free about {_size(report.freed)}{now}", markup=False)
    elif report.bytes_before is not None and report.bytes_after is not None:
        console.print(
            f"store: {report.bytes_before / 1e6:.2f} MB -> {report.bytes_after / 1e6:.2f} MB",
            markup=False,
        )


def _size(count: int) -> str:
    """``0.48 MB``, or ``12.3 kB`` below a tenth of a megabyte."""
    return f"{count / 1e6:.2f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"
