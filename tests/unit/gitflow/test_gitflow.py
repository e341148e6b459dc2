"""The git workflow against real repositories: set-up, previews, commits, statistics, lock."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from filelock import Timeout

from jarvis_graph.events import Event, EventBus
from jarvis_graph.gitflow.repo import (
    changed_paths,
    commit_all,
    ensure_excluded,
    find_repo_root,
    left_out,
    repo_lock,
    untracked_secrets,
)
from jarvis_graph.gitflow.stats import CodeStats
from jarvis_graph.gitflow.workflow import (
    FULL_DIFF_LIMIT,
    GitWorkflow,
    attach_workflow,
    workflow_for,
)
from tests.support.git import git, log, make_repo, set_identity


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    set_identity(monkeypatch)
    return make_repo(
        tmp_path / "repo",
        {
            ".gitignore": ".jarvis/\n",
            "a.py": "x = 1\n",
            "docs/b.md": "# B\n",
            "old.txt": "1\n2\n3\n",
        },
    )


def edit_event(path: str, status: str = "success") -> dict[str, Any]:
    return {
        "name": "edit_file",
        "args": {"files": [{"path": path, "diffs": [{"search": "x", "replace": "y"}]}]},
        "status": status,
        "output": "",
    }


def workflow(repo: Path, **kwargs: Any) -> tuple[GitWorkflow, list[str]]:
    shown: list[str] = []
    kwargs.setdefault("prefix", "[bot]")
    return GitWorkflow(repo, repo, show=shown.append, **kwargs), shown


def test_repo_root_gitignore_and_changes(repo: Path, tmp_path: Path) -> None:
    assert find_repo_root(repo / "docs") == repo.resolve()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert find_repo_root(outside) is None
    assert ensure_excluded(repo) is None  # the .gitignore has the line already
    (repo / ".gitignore").write_text("*.log")  # no final newline
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.tmp")
    assert ensure_excluded(repo) == exclude
    assert ensure_excluded(repo) is None
    assert exclude.read_text() == "*.tmp\n.jarvis/\n"
    assert (repo / ".gitignore").read_text() == "*.log"  # the user's file is left alone
    (repo / "new dir").mkdir()
    (repo / "new dir" / "n.txt").write_text("n")
    git(repo, "mv", "old.txt", "renamed.txt")
    assert set(changed_paths(repo)) == {".gitignore", "new dir/n.txt", "renamed.txt"}
    assert commit_all(repo, "checkpoint") is not None
    assert changed_paths(repo) == [] and commit_all(repo, "again") is None


def test_a_checkpoint_commit_leaves_untracked_secret_files_out(repo: Path) -> None:
    (repo / ".env").write_text("OPENAI_API_KEY=sk-live\n")
    (repo / "config").mkdir()
    (repo / "config" / "credentials.json").write_text("{}")
    (repo / "notes.txt").write_text("plans")
    (repo / "token[1].txt").write_text("t")  # a name that would be a glob to git
    (repo / "token1.txt").write_text("u")
    secrets = untracked_secrets(repo)
    assert sorted(secrets) == [".env", "config/credentials.json", "token1.txt", "token[1].txt"]
    assert commit_all(repo, "checkpoint", leave=secrets) is not None
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["notes.txt"]
    assert sorted(changed_paths(repo)) == sorted(secrets)  # untouched
    assert commit_all(repo, "again", leave=untracked_secrets(repo)) is None  # nothing else
    assert ".env" in left_out(secrets) and "look like secrets" in left_out(secrets)


def test_an_edit_is_previewed_and_committed_with_prefix_and_suffix(repo: Path) -> None:
    flow, shown = workflow(repo, suffix="(auto)")
    bus = EventBus()
    attach_workflow(bus, flow)
    (repo / "a.py").write_text("x = 2\n")
    bus.emit(Event.AFTER_TOOL_CALL, edit_event("a.py"))
    assert log(repo)[0] == "[bot] edit_file: a.py (+1 -1) (auto)"
    assert "-x = 1\n+x = 2" in shown[0]
    assert shown[1].startswith("committed ")
    assert changed_paths(repo) == []
    assert CodeStats.load(repo) == CodeStats(edits=1, commits=1, lines_added=1, lines_removed=1)


def test_failed_calls_and_other_tools_do_not_commit(repo: Path) -> None:
    flow, shown = workflow(repo)
    (repo / "a.py").write_text("x = 2\n")
    flow(Event.AFTER_TOOL_CALL, edit_event("a.py", status="error"))
    flow(
        Event.AFTER_TOOL_CALL, {"name": "read_code", "args": {"path": "a.py"}, "status": "success"}
    )
    assert log(repo) == ["init"] and shown == []


def test_a_deleted_file_is_a_note(repo: Path) -> None:
    flow, shown = workflow(repo)
    (repo / "old.txt").unlink()
    flow(
        Event.AFTER_TOOL_CALL,
        {"name": "execute_script", "args": {"script": "rm old.txt"}, "status": "success"},
    )
    assert shown[0] == "deleted old.txt (3 lines)"
    assert log(repo)[0] == "[bot] execute_script: old.txt (+0 -3)"


def test_a_big_change_is_shown_as_statistics(repo: Path) -> None:
    flow, shown = workflow(repo)
    (repo / "a.py").write_text("".join(f"v{i} = {i}\n" for i in range(FULL_DIFF_LIMIT + 5)))
    flow(
        Event.AFTER_TOOL_CALL,
        {"name": "rewrite_file", "args": {"path": "a.py"}, "status": "success"},
    )
    assert shown[0].startswith(f"{FULL_DIFF_LIMIT + 6} changed lines (more than {FULL_DIFF_LIMIT})")
    assert "a.py | " in shown[0] and "@@" not in shown[0]
    assert log(repo)[0].startswith("[bot] rewrite_file: a.py")


def test_new_files_in_a_subfolder_of_the_workspace(repo: Path) -> None:
    shown: list[str] = []
    flow = GitWorkflow(repo, repo / "docs", prefix="p", show=shown.append)
    (repo / "docs" / "c.md").write_text("# C\n")
    flow(Event.AFTER_TOOL_CALL, edit_event("c.md"))
    assert log(repo)[0] == "p edit_file: docs/c.md (+1 -0)"
    assert "new file mode" in shown[0]


def test_paths_dirty_before_the_run_are_never_swept_in(repo: Path) -> None:
    (repo / "docs" / "b.md").write_text("# user's work\n")
    flow, _ = workflow(repo, baseline={"docs/b.md"})
    (repo / "a.py").write_text("x = 3\n")
    flow(Event.AFTER_TOOL_CALL, {"name": "execute_script", "args": {}, "status": "success"})
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["a.py"]
    assert changed_paths(repo) == ["docs/b.md"]


def test_declining_the_commit_leaves_the_change_unstaged(repo: Path) -> None:
    questions: list[str] = []
    flow, shown = workflow(repo, confirm=lambda q: questions.append(q) or False)
    (repo / "a.py").write_text("x = 5\n")
    flow(Event.AFTER_TOOL_CALL, edit_event("a.py"))
    assert questions == ["commit as '[bot] edit_file: a.py (+1 -1)'?"]
    assert log(repo) == ["init"]
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert (repo / "a.py").read_text() == "x = 5\n"
    assert shown[-1] == "not committed: the change stays in the work tree"
    assert CodeStats.load(repo).commits == 0 and CodeStats.load(repo).edits == 1


def test_declining_in_a_repository_without_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "n.py").write_text("n = 1\n")
    ensure_excluded(root)
    flow = GitWorkflow(root, root, show=lambda _: None, confirm=lambda _: False)
    flow(Event.AFTER_TOOL_CALL, edit_event("n.py"))
    assert git(root, "status", "--porcelain") == "?? n.py\n"


def test_git_errors_are_shown_not_raised(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flow, shown = workflow(repo)
    (repo / "a.py").write_text("x = 9\n")
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho refused >&2\nexit 1\n")
    (repo / ".git" / "hooks" / "pre-commit").chmod(0o755)
    flow(Event.AFTER_TOOL_CALL, edit_event("a.py"))
    assert shown[-1].startswith("git: `git commit") and "refused" in shown[-1]


def test_statistics_add_up_over_runs(repo: Path) -> None:
    for value in (2, 3):
        flow, _ = workflow(repo)
        (repo / "a.py").write_text(f"x = {value}\n\n")
        flow(Event.AFTER_TOOL_CALL, edit_event("a.py"))
    stats = CodeStats.load(repo)
    assert (stats.edits, stats.commits) == (2, 2)
    assert stats.summary() == "2 edits, 2 commits, +3 -2 lines"
    CodeStats.path(repo).write_text("not json")
    assert CodeStats.load(repo) == CodeStats()


def test_one_workflow_per_repository_and_bus(repo: Path) -> None:
    bus = EventBus()
    first, _ = workflow(repo)
    second, _ = workflow(repo)
    attach_workflow(bus, first)
    detach = attach_workflow(bus, second)
    assert workflow_for(bus, repo) is second
    (repo / "a.py").write_text("x = 4\n")
    bus.emit(Event.AFTER_TOOL_CALL, edit_event("a.py"))
    assert len(log(repo)) == 2 and first.commits == [] and len(second.commits) == 1
    detach()
    assert workflow_for(bus, repo) is None


def test_the_repository_lock_keeps_one_agent(repo: Path) -> None:
    lock_file = repo_lock(repo).lock_file
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import filelock, sys, time\n"
            f"lock = filelock.FileLock({lock_file!r})\n"
            "lock.acquire()\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(Timeout):
            repo_lock(repo).acquire(timeout=0)
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    deadline = time.monotonic() + 10
    while True:
        try:
            repo_lock(repo).acquire(timeout=0)
            break
        except Timeout:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_paths_are_literal_not_globs(repo: Path) -> None:
    (repo / "a*.py").write_text("star\n")
    (repo / "a.py").write_text("x = 7\n")  # dirty too, and matched by the glob a*.py
    flow, _ = workflow(repo)
    flow(Event.AFTER_TOOL_CALL, edit_event("a*.py"))
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["a*.py"]
    assert changed_paths(repo) == ["a.py"]
