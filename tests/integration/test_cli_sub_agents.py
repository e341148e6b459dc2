"""`sub_agent` and `sub_code_agent` in `jarvis run`: a fresh child run, seen in the session tree."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_process, write_script

CHILD_TASK = "SUBTASK: count the lines of notes.txt and answer with the number"


def _session(stdout: str) -> str:
    found = re.search(r"session (\S+)", stdout)
    assert found, stdout
    return found.group(1)


def test_a_sub_agent_runs_the_task_and_its_answer_comes_back(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("a\nb\nc\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "SUBTASK: count", "tool_calls": [
                {"name": "execute_script", "args": {"script": "wc -l < notes.txt"}}]},
            {"when": "SUBTASK: count", "text": "notes.txt has 3 lines. !!!COMPLETE!!!"},
            {"tool_calls": [{"name": "sub_agent", "args": {
                "task": CHILD_TASK, "tools": ["execute_script", "read_code"]}}]},
            {"text": "The sub-agent counted 3 lines. !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    args = ["run", "how many lines has notes.txt?", "-n", "--yes"]
    done = run_process([*args, "--platform", "scripted", "--script", str(script)], cwd=workspace)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "Sub-agent (level 1) completed after 2 model calls; it called execute_script x1." in out
    assert "notes.txt has 3 lines." in out and "The sub-agent counted 3 lines." in out
    tree = run_process(["sessions", "show", _session(out), "--tree"], cwd=workspace)
    assert tree.returncode == 0, tree.stdout + tree.stderr
    assert "  └ sub-agent · completed · SUBTASK: count the lines" in tree.stdout
    assert "→ notes.txt has 3 lines." in tree.stdout


def test_a_sub_agent_gets_only_the_tools_it_was_given(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "SUBTASK", "tool_calls": [
                {"name": "execute_script", "args": {"script": "echo hi"}}]},
            {"when": "SUBTASK", "text": "I could not run it. !!!COMPLETE!!!"},
            {"tool_calls": [{"name": "sub_agent", "args": {"task": "SUBTASK: run echo hi",
                                                           "tools": ["read_code"]}}]},
            {"tool_calls": [{"name": "sub_agent", "args": {"task": "SUBTASK: x",
                                                           "tools": ["rm_rf"]}}]},
            {"text": "done !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    args = ["run", "delegate", "-n", "--yes", "--platform", "scripted", "--script", str(script)]
    done = run_process(args, cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "it called execute_script x1 (1 failed). Its answer: I could not run it." in done.stdout
    assert "no tool named rm_rf; the tools are:" in done.stdout


def _fix_typo_script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "s.yaml",
        [
            {"when": "SUBTASK: fix", "tool_calls": [{"name": "edit_file", "args": {"files": [
                {"path": "app.py", "diffs": [{"search": "helo", "replace": "hello"}]}]}}]},
            {"when": "SUBTASK: fix", "text": "Fixed the typo in app.py. !!!COMPLETE!!!"},
            {"tool_calls": [{"name": "sub_code_agent", "args": {
                "task": "SUBTASK: fix the typo helo in app.py"}}]},
            {"text": "Done. !!!COMPLETE!!!"},
        ],
    )  # fmt: skip


def test_a_sub_code_agent_never_turns_the_folder_into_a_repository(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a model's tool call must not git-init the user's folder and commit every file in it
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[user]\n\tname = t\n\temail = t@e\n")
    (workspace / "app.py").write_text("print('helo')\n")
    (workspace / ".env").write_text("API_KEY=sk-not-for-git\n")
    args = ["run", "fix the typo", "-n", "--yes", "--platform", "scripted"]
    done = run_process([*args, "--script", str(_fix_typo_script(tmp_path))], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = run_process(["sessions", "show", _session(done.stdout)], cwd=workspace).stdout
    assert "is not in a git repository and the code agent commits every edit" in shown
    assert "run `git init` first, or hand the task to sub_agent" in " ".join(shown.split())
    assert not (workspace / ".git").exists()
    assert (workspace / "app.py").read_text() == "print('helo')\n"


def test_a_sub_code_agent_edits_and_commits_only_its_edit(workspace: Path, tmp_path: Path) -> None:
    for command in (["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@e"]):
        subprocess.run(["git", *command], cwd=workspace, check=True)
    (workspace / "app.py").write_text("print('helo')\n")
    (workspace / "draft.md").write_text("first\n")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=workspace, check=True)
    (workspace / "draft.md").write_text("first\nhalf-written, not for a commit\n")
    args = ["run", "fix the typo", "-n", "--yes", "--platform", "scripted"]
    done = run_process([*args, "--script", str(_fix_typo_script(tmp_path))], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "it called edit_file x1." in done.stdout
    # the sub-run's own tokens and tool calls are summed up by its result, not streamed
    assert not any(line.startswith("Fixed the typo") for line in done.stdout.splitlines())
    assert "⚙ edit_file" not in done.stdout
    assert (workspace / "app.py").read_text() == "print('hello')\n"

    def git(*command: str) -> str:
        run = subprocess.run(["git", *command], cwd=workspace, capture_output=True, text=True)
        return run.stdout

    log = git("log", "--format=%s").splitlines()
    assert log[0].startswith("jarvis:") and log[1:] == ["start"]  # one commit, the edit's
    assert git("show", "--name-only", "--format=", "HEAD").split() == ["app.py"]
    assert git("status", "--porcelain").split() == ["M", "draft.md"]


def test_the_readme_example_delegates_and_shows_the_tree(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    ws = tmp_path / "workspace"
    shutil.copytree(examples / "workspace", ws, ignore=shutil.ignore_patterns(".jarvis"))
    script = str(examples / "sub_agent_script.yaml")
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", script]
    done = run_process([*args, "How many rows has data.csv?"], cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "it called read_code x1. Its answer: data.csv has 4 data rows" in done.stdout
    tree = run_process(["sessions", "show", _session(done.stdout), "--tree"], cwd=ws)
    assert tree.stdout.splitlines() == [
        "completed · How many rows has data.csv?",
        "sub-runs",
        "  └ sub-agent · completed · SUB-TASK: count the data rows of data.csv… → data.csv "
        "has 4 data rows below its header.",
    ]


def test_a_sub_agent_at_work_shows_a_live_line_in_a_terminal(
    workspace: Path, tmp_path: Path
) -> None:
    from tests.adversarial.test_integrity import WAIT_RELEASE
    from tests.support.terminal import Terminal

    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "SUBTASK: wait", "tool_calls": [{"name": "execute_script", "args": {
                "script": f"touch holding; {WAIT_RELEASE}"}}]},
            {"when": "SUBTASK: wait", "text": "Waited. !!!COMPLETE!!!"},
            {"tool_calls": [{"name": "sub_agent", "args": {
                "task": "SUBTASK: wait for the release file", "tools": ["execute_script"]}}]},
            {"text": "The sub-agent waited. !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), "delegate"]

    term = Terminal(args, workspace)
    term.expect(r"running sub_agent · \d+\.\ds", regex=True)
    (workspace / "release").touch()  # the child ends once the live line was seen
    term.expect("The sub-agent waited.")

    assert term.exit_code() == 0
