"""The central tool repository: a git repository of tool files shared by a team.

``central_tool_repo`` (config) names its URL. It is cloned into
``~/.jarvis/central_tool_repo`` the first time, and pulled (fast-forward only) once per
process after that; its ``*.py`` files load like those of any tool folder.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from jarvis_graph.config import jarvis_home
from jarvis_graph.secrets import redact_urls

logger = logging.getLogger(__name__)
GIT_TIMEOUT = 60.0


def central_repo_dir() -> Path:
    """Where the central tool repository is cloned."""
    return jarvis_home() / "central_tool_repo"


def sync_central_repo(url: str) -> str | None:
    """Clone or pull the repository at ``url``; returns a note when that failed.

    Called when a tool registry is built, so once per process and tool settings.

    A failed pull keeps the existing clone, so the run goes on with the tools it has.
    """
    target = central_repo_dir()
    if (target / ".git").is_dir():
        current = run_git(["config", "--get", "remote.origin.url"], target)
        if current.returncode == 0 and current.stdout.strip() != url:
            return redact_urls(
                f"central tool repository: {target} is a clone of {current.stdout.strip()!r}, "
                f"not {url!r}; move it away to clone the configured one"
            )
        result = run_git(["pull", "--ff-only", "--quiet"], target)
        action = "pull"
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        result = run_git(["clone", "--quiet", "--depth", "1", url, str(target)], target.parent)
        action = "clone"
    if result.returncode != 0:
        why = (result.stderr or result.stdout).strip().splitlines()
        note = f"central tool repository: git {action} of {url} failed: {why[-1] if why else '?'}"
        note = redact_urls(note)  # a token in the URL (git may quote it too) is not shown
        logger.warning("%s", note)
        return note
    return None


def run_git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run git without ever prompting; a failure to start or a timeout is exit code 1."""
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},  # never wait for a password
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(args, 1, "", str(exc))
