"""The AFTER_TOOL_CALL subscriber that turns each successful edit into a commit.

After ``edit_file`` or ``rewrite_file`` succeeds (and after ``execute_script`` changed
files), :class:`GitWorkflow` stages the changed paths, shows a diff preview (a deleted
file as a note, more than :data:`FULL_DIFF_LIMIT` changed lines as statistics only),
commits them with the configured prefix and suffix (after asking, when a ``confirm``
function is given) and updates the repository's statistics. Paths that were already
dirty when the run started, and were not committed then, are left out of the commits made
after ``execute_script``; a file the agent edits itself is committed as it then is.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jarvis_graph.events import Event, EventBus
from jarvis_graph.gitflow.repo import (
    GitError,
    Identity,
    changed_paths,
    commit_args,
    git,
    has_head,
)
from jarvis_graph.gitflow.stats import CodeStats

FULL_DIFF_LIMIT = 300
EDIT_TOOLS = ("edit_file", "rewrite_file")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Numstat:
    """Added and removed lines of one staged path (``None`` for binary files)."""

    path: str
    added: int | None
    removed: int | None
    status: str = "M"


def staged_numstat(root: Path, paths: list[str]) -> list[Numstat]:
    """Line counts and status letters of the staged changes of ``paths``."""
    status = {}
    for line in git(root, "diff", "--cached", "--name-status", "--", *paths).splitlines():
        letter, _, name = line.partition("\t")
        status[name.split("\t")[-1]] = letter[:1]
    stats = []
    for line in git(root, "diff", "--cached", "--numstat", "--", *paths).splitlines():
        added, removed, name = line.split("\t", 2)
        stats.append(
            Numstat(
                name,
                None if added == "-" else int(added),
                None if removed == "-" else int(removed),
                status.get(name, "M"),
            )
        )
    return stats


def diff_preview(root: Path, stats: list[Numstat]) -> str:
    """The staged diff of ``stats``' paths: deletions as notes, big diffs as statistics."""
    notes = [f"deleted {s.path} ({s.removed or 0} lines)" for s in stats if s.status == "D"]
    shown = [s.path for s in stats if s.status != "D"]
    changed = sum((s.added or 0) + (s.removed or 0) for s in stats if s.status != "D")
    parts = notes[:]
    if shown and changed > FULL_DIFF_LIMIT:
        parts.append(
            f"{changed} changed lines (more than {FULL_DIFF_LIMIT}): statistics only\n"
            + git(root, "diff", "--cached", "--stat", "--", *shown).rstrip()
        )
    elif shown:
        parts.append(git(root, "diff", "--cached", "--no-color", "--", *shown).rstrip())
    return "\n".join(parts)


@dataclass(eq=False)
class GitWorkflow:
    """Commits each successful edit in ``root`` (subscribe it to AFTER_TOOL_CALL)."""

    root: Path
    workspace: Path
    prefix: str = ""
    suffix: str = ""
    show: Callable[[str], None] = print
    confirm: Callable[[str], bool] | None = None
    baseline: set[str] = field(default_factory=set)
    """Paths dirty before the run that the user chose not to commit (see the module doc)."""
    identity: Identity | None = None
    """Who commits when git has no identity of its own (Jarvis' fallback setting)."""
    commits: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, _event: Event, payload: dict[str, Any]) -> None:
        """Handle one AFTER_TOOL_CALL event."""
        name = payload.get("name", "")
        if payload.get("status") != "success" or name not in (*EDIT_TOOLS, "execute_script"):
            return
        with self._lock:  # parallel tool calls: one commit at a time
            try:
                self.record(name, self._paths(name, payload.get("args") or {}))
            except GitError as exc:
                self.show(f"git: {exc}")

    def _paths(self, name: str, args: dict[str, Any]) -> list[str]:
        dirty = {p for p in changed_paths(self.root) if not p.startswith(".jarvis/")}
        if name == "execute_script":
            return sorted(p for p in dirty if p not in self.baseline)
        raw = [f.get("path", "") for f in args.get("files") or [] if isinstance(f, dict)]
        raw += [args["path"]] if isinstance(args.get("path"), str) else []
        wanted = {self._repo_relative(p) for p in raw if p}
        return sorted(p for p in dirty if p in wanted)

    def _repo_relative(self, path: str) -> str:
        full = Path(path) if Path(path).is_absolute() else self.workspace / path
        try:
            return full.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return path

    def record(self, tool: str, paths: list[str]) -> str | None:
        """Preview and commit the changes of ``paths``; returns the commit id, if any."""
        if not paths:
            return None
        git(self.root, "add", "-A", "--", *paths)
        numstat = staged_numstat(self.root, paths)
        if not numstat:
            return None
        self.show(diff_preview(self.root, numstat))
        stats = CodeStats.load(self.root)
        stats.edits += 1
        stats.lines_added += sum(s.added or 0 for s in numstat)
        stats.lines_removed += sum(s.removed or 0 for s in numstat)
        message = self.message(tool, numstat)
        if self.confirm is not None and not self.confirm(f"commit as {message!r}?"):
            self._unstage(paths)
            self.show("not committed: the change stays in the work tree")
            stats.save(self.root)
            return None
        git(self.root, *commit_args(self.identity), "-q", "-m", message, "--", *paths)
        sha = git(self.root, "rev-parse", "--short", "HEAD").strip()
        stats.commits += 1
        stats.save(self.root)
        self.commits.append(sha)
        self.show(f"committed {sha}: {message}")
        return sha

    def _unstage(self, paths: list[str]) -> None:
        if has_head(self.root):
            git(self.root, "reset", "-q", "--", *paths)
        else:
            git(self.root, "rm", "-q", "--cached", "-r", "--", *paths)

    def message(self, tool: str, numstat: list[Numstat]) -> str:
        """``<prefix> <tool>: <files> (+a -r) <suffix>``."""
        names = ", ".join(s.path for s in numstat[:5]) + (" …" if len(numstat) > 5 else "")
        added = sum(s.added or 0 for s in numstat)
        removed = sum(s.removed or 0 for s in numstat)
        summary = f"{tool}: {names} (+{added} -{removed})"
        return " ".join(p for p in (self.prefix.strip(), summary, self.suffix.strip()) if p)


_attached: weakref.WeakKeyDictionary[EventBus, dict[Path, GitWorkflow]] = (
    weakref.WeakKeyDictionary()
)
_attached_lock = threading.Lock()


def attach_workflow(bus: EventBus, workflow: GitWorkflow) -> Callable[[], None]:
    """Subscribe ``workflow`` to ``bus`` (replacing one for the same repository)."""
    with _attached_lock:
        per_bus = _attached.setdefault(bus, {})
        old = per_bus.get(workflow.root)
        if old is not None:
            bus.unsubscribe(Event.AFTER_TOOL_CALL, old)
        per_bus[workflow.root] = workflow
    unsubscribe = bus.subscribe(Event.AFTER_TOOL_CALL, workflow)

    def detach() -> None:
        unsubscribe()
        with _attached_lock:
            if _attached.get(bus, {}).get(workflow.root) is workflow:
                del _attached[bus][workflow.root]

    return detach


def workflow_for(bus: EventBus, root: Path) -> GitWorkflow | None:
    """The workflow attached to ``bus`` for repository ``root``, if any."""
    with _attached_lock:
        return _attached.get(bus, {}).get(root)
