"""The run loop's answer check, repeat guard and file tools, end to end with a scripted model.

``answer_check: on`` turns the check on for the scripted platform (``auto`` turns it on
for the local model only): each task starts with the model's ``state_task`` declaration.
The CLI runs as a real process: what is asserted is the text a user reads and the exit
code a script sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.cli import run_process, write_script


def declare(answer: str = "value", **needs: bool) -> dict[str, Any]:
    """The ``state_task`` turn a task starts with when answers are checked."""
    args = {
        "answer": answer,
        "asks_to_run_a_program": False,
        "asks_to_change_files": False,
        "asks_to_remember": False,
        **needs,
    }
    return {"tool_calls": [{"name": "state_task", "args": args}]}


def _config(ws: Path, text: str) -> None:
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(text)


def _run(ws: Path, script: Path, task: str) -> tuple[int, str]:
    args = ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script), "-n"]
    done = run_process([*args, "--confirm", "never", task], cwd=ws)
    return done.returncode, done.stdout + done.stderr


def test_an_unsupported_answer_is_sent_back_and_the_corrected_one_completes(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "config.json").write_text('{"port": 8123}\n')
    _config(workspace, "answer_check: on\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            declare(),
            {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
            {"text": "The port is 8080."},  # from imagination: nothing was read
            {"tool_calls": [{"name": "read_code", "args": {"path": "config.json"}}]},
            {"text": "The port is 8123."},
        ],
    )
    code, out = _run(workspace, script, "What port does config.json set?")
    assert code == 0, out
    assert "■ completed ·" in out and "unverified" not in out
    assert "The port is 8123." in out
    assert "draft rejected: 8080 appears in no result of this task" in out
    assert """↳ from read_code: '{"port": 8123}'""" in out  # its source, below it


def test_an_answer_that_stays_unsupported_ends_unverified_with_exit_code_4(
    workspace: Path, tmp_path: Path
) -> None:
    _config(workspace, "answer_check: on\nanswer_check_retries: 1\n")
    needs = {"asks_to_run_a_program": True, "asks_to_change_files": True}
    script = write_script(
        tmp_path / "s.yaml",
        [
            declare("text", **needs),
            {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
            {"text": "I fixed greet.py; it prints 42."},
            {"text": "Fixed. It prints 42."},
        ],
    )
    code, out = _run(workspace, script, "Fix the typo in greet.py, then run it.")
    assert code == 4, out
    assert "■ completed (unverified)" in out
    assert "unverified: The task asks you to run it, and no call did that yet" in out
    assert "unverified: 42 appears in no result of this task" in out


def test_without_the_check_the_same_answer_completes(workspace: Path, tmp_path: Path) -> None:
    _config(workspace, "answer_check: off\n")
    script = write_script(tmp_path / "s.yaml", [{"text": "I fixed greet.py; it prints 42."}])
    code, out = _run(workspace, script, "Fix the typo in greet.py, then run it.")
    assert code == 0, out
    assert "■ completed ·" in out


def test_run_writes_and_edits_files_and_the_answer_passes(workspace: Path, tmp_path: Path) -> None:
    (workspace / "greet.py").write_text("prnt('hello')\n")
    _config(workspace, "answer_check: on\n")
    edit = {"files": [{"path": "greet.py", "diffs": [{"search": "prnt", "replace": "print"}]}]}
    script = write_script(
        tmp_path / "s.yaml",
        [
            declare("text", asks_to_run_a_program=True, asks_to_change_files=True),
            {"tool_calls": [{"name": "edit_file", "args": edit}]},
            {"tool_calls": [{"name": "execute_script", "args": {"script": "python3 greet.py"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "notes.md", "content": "fixed\n"}}
                ]
            },
            {"text": "Fixed the typo; greet.py prints hello. I wrote notes.md."},
        ],
    )
    code, out = _run(workspace, script, "Fix the typo in greet.py, then run it.")
    assert code == 0, out
    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    assert (workspace / "notes.md").read_text() == "fixed\n"
    assert "■ completed ·" in out


def test_a_repeated_call_with_nothing_changed_is_not_run_again(
    workspace: Path, tmp_path: Path
) -> None:
    log = {"name": "execute_script", "args": {"script": "echo x >> log.txt"}}
    read = {"name": "read_code", "args": {"path": "log.txt"}}
    rewrite = {"name": "write_file", "args": {"path": "log.txt", "content": "y\n"}}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [log]},
            {"tool_calls": [read]},
            {"tool_calls": [read]},  # nothing changed: not run
            {"tool_calls": [log]},  # nothing changed since the same call: not run
            {"tool_calls": [rewrite]},
            {"tool_calls": [read]},  # the file changed since: runs
            {"text": "done"},
        ],
    )
    code, out = _run(workspace, script, "Append x to log.txt and show it.")
    assert code == 0, out
    assert out.count("Not run again") == 2, out
    assert out.rstrip().splitlines()[-3].endswith("1 | y")  # the last read ran
    assert (workspace / "log.txt").read_text() == "y\n"
