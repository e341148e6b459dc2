"""Small, checked wrappers around the ``git`` command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from filelock import FileLock

IGNORE_LINE = ".jarvis/"


class GitError(RuntimeError):
    """A git command failed; the text has the command and git's own message."""


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run ``git args`` in ``repo`` and return its stdout.

    Raises:
        GitError: The command exited non-zero (with ``check``), or git is not installed.
    """
    # Paths are file names, never globs ("a*.py" is one file).
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_LITERAL_PATHSPECS": "1"}
    try:
        proc = subprocess.run(
            ["git", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=120
        )
    except FileNotFoundError as exc:
        msg = "git is not installed; jarvis code needs git (install it and try again)"
        raise GitError(msg) from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        msg = f"`git {' '.join(args)}` failed in {repo}: {detail}"
        raise GitError(msg)
    return proc.stdout


def find_repo_root(path: Path) -> Path | None:
    """The top folder of the git repository holding ``path`` (``None`` outside one)."""
    folder = path if path.is_dir() else path.parent
    try:
        out = git(folder, "rev-parse", "--show-toplevel", check=True)
    except GitError:
        return None
    return Path(out.strip()).resolve()


def init_repo(path: Path) -> Path:
    """``git init`` in ``path``; returns the repository root."""
    git(path, "init", "-q")
    return path.resolve()


def ensure_gitignore(root: Path) -> bool:
    """Add ``.jarvis/`` to the repository's ``.gitignore``; returns whether it was added."""
    ignore = root / ".gitignore"
    text = ignore.read_text(encoding="utf-8") if ignore.is_file() else ""
    if any(
        line.strip() in (IGNORE_LINE, ".jarvis", "/.jarvis/", "/.jarvis")
        for line in text.splitlines()
    ):
        return False
    sep = "" if not text or text.endswith("\n") else "\n"
    ignore.write_text(f"{text}{sep}{IGNORE_LINE}\n", encoding="utf-8")
    return True


def changed_paths(root: Path) -> list[str]:
    """Paths (relative to ``root``) with uncommitted changes, untracked files included."""
    out = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename is followed by its source path
            next(entries, None)
    return paths


def has_head(root: Path) -> bool:
    """Whether the repository has a commit yet."""
    return bool(git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip())


def commit_all(root: Path, message: str) -> str | None:
    """Commit every change of the work tree; returns the new commit id (``None``: clean)."""
    if not changed_paths(root):
        return None
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def repo_lock(root: Path) -> FileLock:
    """The lock that keeps one code agent per repository (``.jarvis/code_agent.lock``)."""
    folder = root / ".jarvis"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / "code_agent.lock"))
