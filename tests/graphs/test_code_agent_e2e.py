"""End to end: the code agent edits two files through a scripted model, with real git."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from jarvis_graph.gitflow.stats import CodeStats
from jarvis_graph.graphs.code_agent import build_code_agent_graph
from tests.support.cli import run_process, write_script
from tests.support.git import git, log, make_repo, set_identity

MARKER = "!!!COMPLETE!!!"
CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
README = "# calc\n\nTODO: usage\n"


def edit(path: str, search: str, replace: str) -> dict[str, Any]:
    diffs = [{"SEARCH": search, "REPLACE": replace}]
    return {
        "tool_calls": [{"name": "edit_file", "args": {"files": [{"path": path, "diffs": diffs}]}}]
    }


TURNS = [
    # ambiguous: "return a - b" is in both functions; the model is told where
    edit("calc.py", "return a - b", "return a + b"),
    edit("calc.py", "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"),
    # not found, with the most similar line shown
    edit("README.md", "TODO: usige", "x"),
    edit("README.md", "TODO: usage", "`add(1, 2)` returns 3."),
    {"text": f"add is fixed and documented. {MARKER}"},
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    set_identity(monkeypatch)
    root = make_repo(tmp_path / "calc", {"calc.py": CALC, "README.md": README})
    (root / ".jarvis").mkdir()
    (root / ".jarvis" / "config.yaml").write_text(
        yaml.safe_dump({"code_commit_prefix": "[code]", "code_commit_suffix": "#42"})
    )
    return root


def tool_answers(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m.status, str(m.content)) for m in out["messages"] if isinstance(m, ToolMessage)]


def test_graph_run_commits_each_edit_and_explains_failures(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = write_script(tmp_path / "script.yaml", TURNS)
    context = {
        "platform": "scripted",
        "script": str(script),
        "workspace": str(repo),
        "non_interactive": True,
        "confirm": "never",
    }  # no toolset: the graph's context schema selects the code tools
    graph = build_code_agent_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    with caplog.at_level(logging.INFO, logger="jarvis_graph.gitflow"):
        with caplog.at_level(logging.INFO, logger="jarvis_graph.nodes.prepare_repo"):
            out = graph.invoke({"task": "fix add, document it"}, config, context=context)
    assert out["status"] == "completed"
    answers = tool_answers(out)
    assert [status for status, _ in answers] == ["error", "success", "error", "success"]
    assert "matches 2 places in calc.py (starting at lines 2, 6)" in answers[0][1]
    assert "Did you mean these lines (line 3)?\n3 | TODO: usage" in answers[2][1]
    assert log(repo) == [
        "[code] edit_file: README.md (+1 -1) #42",
        "[code] edit_file: calc.py (+1 -1) #42",
        "init",  # .jarvis/ is kept out through .git/info/exclude: no commit of its own
    ]
    assert (repo / "calc.py").read_text() == CALC.replace("return a - b", "return a + b", 1)
    assert git(repo, "status", "--porcelain") == ""
    assert CodeStats.load(repo).commits == 2
    assert "+    return a + b" in caplog.text  # the diff preview


def test_graph_run_checkpoints_a_dirty_tree_but_not_its_secret_files(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A run outside the CLI (Studio, a server) commits the user's changes first, without
    the untracked files that look like secrets, and never sweeps them in later."""
    (repo / "notes.txt").write_text("plans\n")
    (repo / ".env").write_text("API_TOKEN=t0ken-value\n")
    script = write_script(tmp_path / "script.yaml", TURNS)
    context = {"platform": "scripted", "script": str(script), "workspace": str(repo)}
    graph = build_code_agent_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
    with caplog.at_level(logging.INFO, logger="jarvis_graph.nodes.prepare_repo"):
        graph.invoke({"task": "fix add"}, config, context={**context, "non_interactive": True})
    assert log(repo)[-2:] == ["[code] checkpoint before the code agent's edits", "init"]
    assert "left out of the commit, as their names look like secrets: .env" in caplog.text
    assert "t0ken-value" not in git(repo, "log", "-p", "--all")
    assert git(repo, "status", "--porcelain").strip() == "?? .env"


def test_jarvis_code_cli_prints_previews_and_commits_each_edit(repo: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.yaml", TURNS)
    proc = run_process(
        [
            "code",
            "-n",
            "--yes",
            "-r",
            "fix add, document it",
            "--prefix",
            "[jc]",
            "--suffix",
            "(bot)",
            "--platform",
            "scripted",
            "--script",
            str(script),
        ],
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "excluded .jarvis/ from git in .git/info/exclude (nothing committed)" in out
    assert "diff --git a/calc.py b/calc.py" in out and "+    return a + b" in out
    assert "diff --git a/README.md b/README.md" in out
    assert "matches 2 places" in out  # the failed edit, as the model saw it
    assert log(repo) == [
        "[jc] edit_file: README.md (+1 -1) (bot)",
        "[jc] edit_file: calc.py (+1 -1) (bot)",
        "init",
    ]
    assert git(repo, "status", "--porcelain") == ""
    assert "2 commit(s) this run · repository totals: 2 edits, 2 commits, +2 -2 lines" in out


def code_rewrite(tmp_path: Path, ws: Path, path: str, content: str) -> Any:
    """``jarvis code -n -y`` in ``ws``, its scripted model rewriting ``path`` once."""
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "rewrite_file", "args": {"path": path, "content": content}}]},
            {"text": f"done {MARKER}"},
        ],
    )
    return run_process(
        ["code", "-n", "-y", "-r", "change", "--platform", "scripted", "--script", str(script)],
        cwd=ws,
    )


def test_jarvis_code_without_a_repository_initialises_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    ws = tmp_path / "plain"
    ws.mkdir()
    proc = code_rewrite(tmp_path, ws, "hello.py", "print('hi')\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "initialised a git repository" in proc.stdout
    assert log(ws) == ["jarvis: rewrite_file: hello.py (+1 -0)"]


def test_jarvis_code_never_commits_a_folders_secret_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder made a repository by ``jarvis code -n``: its files are committed as a
    checkpoint, but not ``.env`` and the like, neither then nor with the agent's edits."""
    set_identity(monkeypatch)
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "app.py").write_text("print('app')\n")
    (ws / ".env").write_text("OPENAI_API_KEY=sk-live-123\n")
    proc = code_rewrite(tmp_path, ws, "app.py", "x")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "left out of the commit, as their names look like secrets: .env" in proc.stdout
    assert git(ws, "ls-files").split() == ["app.py"]
    assert "sk-live-123" not in git(ws, "log", "-p", "--all")
    assert git(ws, "status", "--porcelain").strip() == "?? .env"


def test_jarvis_code_refuses_a_second_agent_in_the_same_repository(
    repo: Path, tmp_path: Path
) -> None:
    from jarvis_graph.gitflow.repo import repo_lock

    script = write_script(tmp_path / "s.yaml", [{"text": f"nothing {MARKER}"}])
    lock = repo_lock(repo)
    lock.acquire()
    try:
        proc = run_process(
            ["code", "-n", "-r", "x", "--platform", "scripted", "--script", str(script)], cwd=repo
        )
    finally:
        lock.release()
    assert proc.returncode == 1
    assert "another jarvis code run is working in" in proc.stdout


def test_jarvis_code_needs_a_requirement_when_non_interactive(repo: Path) -> None:
    script = write_script(repo.parent / "x.yaml", [{"text": "done"}])  # a model that can start
    proc = run_process(["code", "-n", "--platform", "scripted", "--script", str(script)], cwd=repo)
    assert proc.returncode == 1
    assert "no requirement given: pass it with -r/--requirement" in proc.stdout
