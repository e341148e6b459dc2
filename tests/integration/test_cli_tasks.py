"""`jarvis tasks list` and `jarvis run --task NAME --set k=v`, as separate processes."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_process, write_script

TASKS = """\
tasks:
  - name: count
    description: Count the lines of a file
    task: How many lines does {file} have?
"""


def _project(workspace: Path) -> Path:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "tasks.yaml").write_text(TASKS)
    (workspace / "notes.txt").write_text("a\nb\nc\n")
    return workspace


def test_tasks_list_shows_name_placeholders_and_description(workspace: Path) -> None:
    done = run_process(["tasks", "list"], cwd=_project(workspace))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\t")[:3] == ["count", "{file}", "Count the lines of a file"]


def test_run_task_fills_the_placeholders_and_runs_the_filled_text(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "wc -l < notes.txt"}}]},
            {"text": "notes.txt has 3 lines. !!!COMPLETE!!!"},
        ],
    )
    args = ["run", "--task", "count", "--set", "file=notes.txt", "-n", "--yes"]
    done = run_process(
        [*args, "--platform", "scripted", "--script", str(script)], cwd=_project(workspace)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "notes.txt has 3 lines." in done.stdout and "■ completed ·" in done.stdout
    listed = run_process(["sessions", "list"], cwd=workspace)
    assert "How many lines does notes.txt have?" in listed.stdout


def test_run_task_refusals_are_one_error_line_and_exit_2(workspace: Path) -> None:
    _project(workspace)
    cases = {
        ("run", "--task", "cont"): "error: no predefined task 'cont'; there are: count",
        ("run", "--task", "count"): "error: task 'count' needs a value for file",
        ("run", "--task", "count", "--set", "fil=x"): "has no placeholder fil (it has: file)",
        ("run", "x", "--task", "count"): "error: give either a TASK or --task count, not both",
        ("run",): "error: give a TASK, or --task NAME for a predefined one",
        ("run", "x", "--set", "a=b"): "error: --set fills the placeholders of a --task",
    }
    for args, message in cases.items():
        done = run_process(list(args), cwd=workspace)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, args
