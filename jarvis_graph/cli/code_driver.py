"""Drive a ``jarvis code`` run: repository checks, the lock, the commit subscriber, the graph."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import Timeout
from rich.markup import escape

from jarvis_graph.checkpointing import CheckpointError
from jarvis_graph.cli.driver import (
    EXIT_ERROR,
    console,
    drive,
    new_thread_id,
    open_agent,
    prepare_tools,
)
from jarvis_graph.config import ConfigError
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import get_event_bus
from jarvis_graph.gitflow.repo import (
    GitError,
    Identity,
    changed_paths,
    commit_all,
    commit_identity,
    ensure_excluded,
    fallback_identity,
    find_repo_root,
    init_repo,
    left_out,
    repo_lock,
    untracked_secrets,
)
from jarvis_graph.gitflow.stats import CodeStats
from jarvis_graph.gitflow.workflow import GitWorkflow, attach_workflow
from jarvis_graph.platforms.registry import PlatformError


class CodeRunError(Exception):
    """``jarvis code`` cannot start; the text says why and what to do."""


def run_code(
    ctx: dict[str, Any],
    requirement: str | None,
    thread_id: str | None = None,
    prefix: str | None = None,
    suffix: str | None = None,
    verbose: bool = False,
) -> int:
    """Run the code agent on ``requirement`` in the workspace's repository.

    Returns:
        The process exit code.
    """
    interactive = not ctx.get("non_interactive")
    try:
        settings = resolve_settings(JarvisContext(**ctx))
        fallback = fallback_identity(settings.code_git_name, settings.code_git_email)
        root, identity = _repository(Path(ctx["workspace"]), interactive, fallback)
        with _one_agent(root):
            commit_prefix = prefix or settings.code_commit_prefix
            baseline = _dirty_tree(root, interactive, commit_prefix, identity)
            task = requirement or _ask_requirement(interactive)
            workflow = GitWorkflow(
                root,
                Path(ctx["workspace"]),
                prefix=settings.code_commit_prefix if prefix is None else prefix,
                suffix=settings.code_commit_suffix if suffix is None else suffix,
                show=_show,
                confirm=_ask_commit if interactive else None,
                baseline=baseline,
                identity=identity,
            )
            detach = attach_workflow(get_event_bus(ctx["event_bus"]), workflow)
            try:
                with open_agent(ctx, "code_agent") as graph:
                    prepare_tools(ctx)
                    code = drive(graph, ctx, {"task": task}, thread_id or new_thread_id(), verbose)
            finally:
                detach()
            stats = CodeStats.load(root)
            console.print(
                f"[dim]{len(workflow.commits)} commit(s) this run · repository totals: "
                f"{stats.summary()}[/]"
            )
            return code
    except (CodeRunError, GitError, ConfigError, CheckpointError, PlatformError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")  # may quote the repository
        return EXIT_ERROR


def _repository(
    workspace: Path, interactive: bool, fallback: Identity | None
) -> tuple[Path, Identity | None]:
    """The repository root and the fallback identity to commit with (``None``: git's own).

    Every check comes before the first change, so a refusal leaves the folder as it was.
    """
    identity = commit_identity(workspace, fallback)
    root = find_repo_root(workspace)
    if root is None:
        if interactive:
            answer = console.input(f"{workspace} is not in a git repository; run git init? [Y/n] ")
            if answer.strip().lower() not in ("", "y", "yes"):
                msg = "jarvis code commits every edit and needs a git repository; run git init"
                raise CodeRunError(msg)
        root = init_repo(workspace)
        console.print(f"[dim]initialised a git repository in {root}[/]")
    if identity is not None:
        console.print(
            f"[dim]git has no identity here: committing as {escape(identity.name)} "
            f"<{escape(identity.email)}> (code_git_name / code_git_email)[/]"
        )
    if ensure_excluded(root) is not None:
        console.print("[dim]excluded .jarvis/ from git in .git/info/exclude (nothing committed)[/]")
    return root, identity


@contextmanager
def _one_agent(root: Path) -> Iterator[None]:
    lock = repo_lock(root)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        msg = (
            f"another jarvis code run is working in {root} (lock {lock.lock_file}); "
            "wait for it to finish or stop it"
        )
        raise CodeRunError(msg) from None
    try:
        yield
    finally:
        lock.release()


def _dirty_tree(root: Path, interactive: bool, prefix: str, identity: Identity | None) -> set[str]:
    """Commit uncommitted changes first (asked when interactive); else the paths to leave."""
    dirty = changed_paths(root)
    if not dirty:
        return set()
    if interactive:
        shown = ", ".join(dirty[:8]) + (" …" if len(dirty) > 8 else "")
        answer = console.input(
            f"the work tree has uncommitted changes ({shown}); commit them first? [Y/n] "
        )
        if answer.strip().lower() not in ("", "y", "yes"):
            console.print("[dim]left as they are; the agent's commits will not include them[/]")
            return set(dirty)
    message = f"{prefix.strip()} checkpoint before the code agent's edits".strip()
    secrets = untracked_secrets(root)
    sha = commit_all(root, message, identity, leave=secrets)
    console.print(f"[dim]committed the uncommitted changes first ({sha[:7] if sha else '-'})[/]")
    if secrets:
        console.print(f"[dim]{escape(left_out(secrets))}[/]")
    return set(secrets)


def _ask_requirement(interactive: bool) -> str:
    if not interactive:
        msg = "no requirement given: pass it with -r/--requirement in a non-interactive run"
        raise CodeRunError(msg)
    text = console.input("[bold]what should be changed?[/] ").strip()
    if not text:
        msg = "no requirement given; nothing to do"
        raise CodeRunError(msg)
    return text


def _show(text: str) -> None:
    console.print(text, markup=False, highlight=False)


def _ask_commit(question: str) -> bool:
    return console.input(f"{question} [Y/n] ").strip().lower() in ("", "y", "yes")
