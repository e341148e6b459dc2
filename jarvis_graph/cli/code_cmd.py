"""``jarvis code``: the code agent on a git repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o


def code(
    requirement: str | None = typer.Option(
        None, "--requirement", "-r", help="What to change (asked for when omitted)."
    ),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", "-n", help="Never ask: commit every edit automatically."
    ),
    prefix: str | None = typer.Option(
        None, "--prefix", help="Commit message prefix (default from config: 'jarvis:')."
    ),
    suffix: str | None = typer.Option(None, "--suffix", help="Commit message suffix."),
    thread: str | None = o.Thread,
    new_thread: str | None = o.NewThread,
    workspace: Path | None = o.Workspace,
    platform: str | None = o.Platform,
    model: str | None = o.Model,
    base_url: str | None = o.BaseUrl,
    script: Path | None = o.Script,
    confirm: str | None = o.Confirm,
    sandbox: str | None = o.Sandbox,
    yes: bool = o.Yes,
    max_iterations: int | None = o.MaxIter,
    verbose: bool = o.Verbose,
) -> None:
    """Change code in a git repository: each successful edit is shown as a diff and committed."""
    from jarvis_graph.cli.code_driver import run_code

    ctx = o.context_kwargs(
        workspace,
        platform,
        model,
        base_url,
        script,
        confirm,
        yes,
        max_iterations,
        non_interactive,
        sandbox=sandbox,
    )
    ctx |= {"toolset": "code", "event_bus": "code"}
    _check(ctx, requirement, thread, new_thread)
    tid = thread or new_thread
    raise typer.Exit(
        run_code(ctx, requirement, thread_id=tid, prefix=prefix, suffix=suffix, verbose=verbose)
    )


def start_code(ctx: dict[str, Any], requirement: str | None, verbose: bool = False) -> int:
    """Run the code agent with a ``jarvis run``/``chat`` context; the exit code."""
    from jarvis_graph.cli.code_driver import run_code

    code_ctx = {**ctx, "toolset": "code", "event_bus": "code"}
    _check(code_ctx, requirement, None, None)
    return run_code(code_ctx, requirement, verbose=verbose)


def _check(
    ctx: dict[str, Any], requirement: str | None, thread: str | None, new_thread: str | None
) -> None:
    """Refuse, before the repository or the session is touched, a run that cannot start."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import CheckpointError
    from jarvis_graph.cli.driver import console
    from jarvis_graph.cli.preflight import RunSetupError, check_model, check_task, check_thread
    from jarvis_graph.config import ConfigError

    try:
        if requirement is not None:
            check_task(requirement)
        check_thread(ctx, thread, new_thread)
        check_model(ctx, "code_agent")
    except RunSetupError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(exc.code) from None
    except (ConfigError, CheckpointError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
