"""The central methodology repository: a git repository of methodology files.

``central_methodology_repo`` (config) names its URL. It is cloned into
``~/.jarvis/central_methodology_repo`` and pulled (fast-forward only) at most once a day;
``share`` copies records into the clone, commits and pushes them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from jarvis_graph.methodology.store import Methodology, MethodologyError, central_dir, save
from jarvis_graph.secrets import redact_urls
from jarvis_graph.tools.tool_repo import run_git

PULL_EVERY_S = 24 * 3600
STAMP = "last_pull"
"""File under ``.git/`` holding the time of the last successful pull."""


def sync(url: str, force: bool = False, target: Path | None = None) -> str:
    """Clone the repository, or pull it when the last pull is a day old (or ``force``).

    Returns:
        What was done: ``cloned``, ``pulled`` or ``up to date``.

    Raises:
        MethodologyError: git failed, or the clone belongs to another URL.
    """
    target = target or central_dir()
    if not (target / ".git").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", "--quiet", url, str(target)], target.parent, f"clone {url}")
        _stamp(target)
        return "cloned"
    origin = _git(["config", "--get", "remote.origin.url"], target, "read the remote").strip()
    if origin != url:
        msg = (
            f"{target} is a clone of {origin!r}, not of the configured {url!r}; "
            "move it away so the configured repository can be cloned"
        )
        raise MethodologyError(redact_urls(msg))
    stamp = target / ".git" / STAMP
    if not force and stamp.is_file() and time.time() - stamp.stat().st_mtime < PULL_EVERY_S:
        return "up to date"
    if _has_commits(target):
        _git(["pull", "--ff-only", "--quiet"], target, f"pull {url}")
    else:  # cloned while the repository was empty: take its first branch now
        _first_pull(target, url)
    _stamp(target)
    return "pulled"


def _first_pull(target: Path, url: str) -> None:
    _git(["fetch", "--quiet", "origin"], target, f"fetch {url}")
    refs = _git(
        ["for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin"],
        target,
        "list the branches",
    ).split()
    branches = [r for r in refs if r != "HEAD"]
    if branches:
        branch = branches[0]
        _git(
            ["checkout", "--quiet", "-B", branch, "--track", f"origin/{branch}"],
            target,
            "check out",
        )


def share(url: str, records: Sequence[Methodology], target: Path | None = None) -> str:
    """Copy ``records`` into the clone, commit and push them.

    Returns:
        The commit message, or a note that nothing changed.

    Raises:
        MethodologyError: git failed (the message carries git's own words).
    """
    target = target or central_dir()
    sync(url, force=True, target=target)
    for record in records:
        save(target, Methodology(record.problem_type, record.content))
    _git(["add", "--all", "."], target, "stage the methodologies")
    if not _git(["status", "--porcelain"], target, "check for changes").strip():
        return "nothing to share: the central repository already has these methodologies"
    names = ", ".join(r.problem_type for r in records)
    message = f"methodologies: {names}"[:200]
    identity = ["-c", "user.name=Jarvis", "-c", "user.email=jarvis@localhost"]
    if _configured(target, "user.email"):
        identity = []
    _git([*identity, "commit", "--quiet", "-m", message], target, "commit")
    _git(["push", "--quiet", "-u", "origin", "HEAD"], target, f"push to {url}")
    return message


def _has_commits(target: Path) -> bool:
    return run_git(["rev-parse", "--verify", "--quiet", "HEAD"], target).returncode == 0


def _configured(target: Path, key: str) -> bool:
    result = run_git(["config", key], target)
    return result.returncode == 0 and bool(result.stdout.strip())


def _stamp(target: Path) -> None:
    (target / ".git" / STAMP).write_text(str(time.time()))


def _git(args: list[str], cwd: Path, what: str) -> str:
    result = run_git(args, cwd)
    if result.returncode != 0:
        why = (result.stderr or result.stdout).strip().splitlines()
        msg = f"git could not {what}: {why[-1] if why else f'exit code {result.returncode}'}"
        raise MethodologyError(redact_urls(msg))  # a token in the URL is not shown
    return result.stdout
