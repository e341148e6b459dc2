"""Real git repositories for tests (identity from the environment: HOME is isolated)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "Jarvis Test",
    "GIT_AUTHOR_EMAIL": "jarvis@example.invalid",
    "GIT_COMMITTER_NAME": "Jarvis Test",
    "GIT_COMMITTER_EMAIL": "jarvis@example.invalid",
}


def set_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commit author and committer for git commands run by the test and the code under test."""
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its output (fails the test on error)."""
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A repository at ``path`` with ``files`` committed as ``init``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def log(repo: Path) -> list[str]:
    """Commit subjects, newest first."""
    return git(repo, "log", "--format=%s").splitlines()
