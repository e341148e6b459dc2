"""``jarvis code`` where git cannot commit yet: checks first, changes nothing, says what to do.

Real git in temporary folders. HOME is the test's own (no global identity there) and
``GIT_CONFIG_NOSYSTEM`` hides the machine's ``/etc/gitconfig``, so git has no identity
unless a test gives it one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_process, write_script
from tests.support.git import git, log

MARKER = "!!!COMPLETE!!!"
SETUP_IDENTITY = ("-c", "user.name=Set Up", "-c", "user.email=setup@example.invalid")
IDENTITY_VARS = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "EMAIL",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
)


@pytest.fixture(autouse=True)
def no_git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """git sees no identity: none in the (temporary) HOME, the system file or the env."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)


def script(tmp_path: Path) -> Path:
    """One file written by the agent, then done."""
    call = {"name": "rewrite_file", "args": {"path": "hello.py", "content": "print('hi')\n"}}
    return write_script(tmp_path / "s.yaml", [{"tool_calls": [call]}, {"text": f"ok {MARKER}"}])


def code(folder: Path, tmp_path: Path, *more: str, input: str = "") -> Any:
    args = ["code", *more, "-r", "say hi", "--platform", "scripted", "--script"]
    return run_process([*args, str(script(tmp_path))], cwd=folder, input=input)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (the .git folder included) with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def repo_without_identity(path: Path) -> Path:
    """A repository with one commit, made with an identity given on the command line only."""
    path.mkdir()
    git(path, "init", "-q")
    (path / "app.py").write_text("x = 1\n")
    git(path, "add", "-A")
    git(path, *SETUP_IDENTITY, "commit", "-qm", "init")
    return path


def test_no_repository_and_no_identity_is_refused_before_git_init(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    before = snapshot(folder)
    proc = code(folder, tmp_path, "-n", "-y")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "git has no identity to commit with" in out
    assert 'git config --global user.name "Your Name"' in out
    assert "JARVIS_GIT_NAME" in out and "changed nothing" in out
    assert snapshot(folder) == before  # no .git, no .jarvis: nothing half-made
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_interactive_run_without_identity_does_not_even_ask_to_git_init(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    proc = code(folder, tmp_path, "-y", input="y\n")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "run git init?" not in out
    assert "git has no identity to commit with" in out
    assert list(folder.iterdir()) == []


def test_repository_without_identity_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    repo = repo_without_identity(tmp_path / "repo")
    (repo / "app.py").write_text("x = 2\n")  # uncommitted work of the user
    before = snapshot(repo)
    proc = code(repo, tmp_path, "-n", "-y")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "git has no identity to commit with" in out
    assert "unable to auto-detect email address" in out  # git's own reason
    assert snapshot(repo) == before  # no checkpoint commit, no .jarvis, no exclude line
    assert log(repo) == ["init"]


def test_configured_fallback_identity_commits_when_git_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_without_identity(tmp_path / "repo")
    monkeypatch.setenv("JARVIS_GIT_NAME", "Jarvis Fallback")
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "fallback@example.invalid")
    proc = code(repo, tmp_path, "-n", "-y")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "committing as Jarvis Fallback <fallback@example.invalid>" in out
    authors = git(repo, "log", "--format=%an <%ae> | %cn <%ce> | %s").splitlines()
    assert authors[0] == (
        "Jarvis Fallback <fallback@example.invalid> | Jarvis Fallback <fallback@example.invalid>"
        " | jarvis: rewrite_file: hello.py (+1 -0)"
    )
    unset = subprocess.run(["git", "config", "--get", "user.name"], cwd=repo, check=False)
    assert unset.returncode == 1  # the fallback was not written into the repository


def test_the_users_own_identity_wins_over_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_without_identity(tmp_path / "repo")
    git(repo, "config", "user.name", "Real User")
    git(repo, "config", "user.email", "real@example.invalid")
    monkeypatch.setenv("JARVIS_GIT_NAME", "Jarvis Fallback")
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "fallback@example.invalid")
    proc = code(repo, tmp_path, "-n", "-y")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "committing as" not in proc.stdout
    assert (
        git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Real User <real@example.invalid>"
    )


def test_an_incomplete_fallback_identity_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_without_identity(tmp_path / "repo")
    monkeypatch.setenv("JARVIS_GIT_NAME", "Only A Name")
    before = snapshot(repo)
    proc = code(repo, tmp_path, "-n", "-y")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "set code_git_email (JARVIS_GIT_EMAIL) too" in out
    assert snapshot(repo) == before


def test_history_gets_no_commit_of_jarvis_own_for_the_ignore_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Real User")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "real@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Real User")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "real@example.invalid")
    folder = tmp_path / "fresh"
    folder.mkdir()
    proc = code(folder, tmp_path, "-n", "-y")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert log(folder) == ["jarvis: rewrite_file: hello.py (+1 -0)"]  # the agent's edit only
    assert not (folder / ".gitignore").exists()
    assert ".jarvis/" in (folder / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(folder, "status", "--porcelain") == ""  # .jarvis/ is ignored all the same
    assert git(folder, "ls-files").split() == ["hello.py"]


def test_a_users_gitignore_is_not_touched_nor_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_without_identity(tmp_path / "repo")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", ".gitignore")
    git(repo, *SETUP_IDENTITY, "commit", "-qm", "ignore logs")
    git(repo, "config", "user.name", "Real User")
    git(repo, "config", "user.email", "real@example.invalid")
    proc = code(repo, tmp_path, "-n", "-y")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / ".gitignore").read_text() == "*.log\n"
    assert log(repo) == ["jarvis: rewrite_file: hello.py (+1 -0)", "ignore logs", "init"]
    assert git(repo, "status", "--porcelain") == ""


def test_without_git_installed_nothing_is_changed(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    args = ["code", "-n", "-r", "x", "--platform", "scripted", "--script", str(script(tmp_path))]
    env = {**os.environ, "PATH": str(tmp_path / "empty-bin")}
    proc = subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "git is not installed; jarvis code needs git" in out
    assert list(folder.iterdir()) == []


def test_a_git_hook_the_agent_could_write_never_sees_provider_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hook runs with git's environment; a model that wrote one must not get the keys.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hook-must-not-see-this-0123456789")
    monkeypatch.setenv("JARVIS_GIT_NAME", "Fallback")
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "fallback@example.invalid")
    folder = repo_without_identity(tmp_path / "repo")
    hook = folder / ".git" / "hooks" / "pre-commit"
    # It also tries what a hook outside a sandbox could: the agent's own environment (its
    # parent's /proc entry and every other one it can see) and a file outside the repository.
    hook.write_text(
        "#!/bin/sh\n"
        "env > .git/hook_env.txt\n"
        "cat /proc/[0-9]*/environ > .git/procs.txt 2>/dev/null\n"
        f"echo escaped > {tmp_path / 'outside.txt'}\n"
        "exit 0\n"
    )
    hook.chmod(0o755)
    proc = code(folder, tmp_path, "-n", "-y")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = (folder / ".git" / "hook_env.txt").read_text()
    assert "PATH=" in seen  # the hook ran, with an environment
    assert "sk-hook-must-not-see-this" not in seen
    assert "OPENAI_API_KEY" not in seen
    assert "sk-hook-must-not-see-this" not in (folder / ".git" / "procs.txt").read_text()
    assert not (tmp_path / "outside.txt").exists()  # git and its hooks run in the sandbox


@pytest.mark.parametrize(("flag", "escapes"), [((), False), (("--sandbox", "off"), True)])
def test_the_sandbox_option_reaches_the_code_agents_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: tuple[str, ...], escapes: bool
) -> None:
    # The hook runs in the commit git makes for the agent: sandboxed unless the user said off.
    monkeypatch.setenv("JARVIS_GIT_NAME", "Fallback")
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "fallback@example.invalid")
    folder = repo_without_identity(tmp_path / "repo")
    hook = folder / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch .git/hook_ran\necho x > {tmp_path / 'outside.txt'}\n")
    hook.chmod(0o755)
    proc = code(folder, tmp_path, "-n", "-y", *flag)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (folder / ".git" / "hook_ran").exists()
    assert (tmp_path / "outside.txt").exists() is escapes
