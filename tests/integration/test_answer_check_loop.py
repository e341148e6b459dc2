"""The run loop's answer check, repeat guard and file tools, end to end with a scripted model.

``answer_check: rules`` turns the check on for the scripted platform (``auto`` turns it on
for the local model only). The CLI runs as a real process: what is asserted is the text a
user reads and the exit code a script sees.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_process, write_script


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
    _config(workspace, "answer_check: rules\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"text": "The port is 8080."},  # from imagination: nothing was read
            {"tool_calls": [{"name": "read_code", "args": {"path": "config.json"}}]},
            {"text": "The port is 8123."},
        ],
    )
    code, out = _run(workspace, script, "What port does config.json set?")
    assert code == 0, out
    assert "■ completed ·" in out and "unverified" not in out
    assert "The port is 8123." in out


def test_an_answer_that_stays_unsupported_ends_unverified_with_exit_code_4(
    workspace: Path, tmp_path: Path
) -> None:
    _config(workspace, "answer_check: rules\nanswer_check_retries: 1\n")
    script = write_script(
        tmp_path / "s.yaml",
        [{"text": "I fixed greet.py; it prints 42."}, {"text": "Fixed. It prints 42."}],
    )
    code, out = _run(workspace, script, "Fix the typo in greet.py, then run it.")
    assert code == 4, out
    assert "■ completed (unverified)" in out
    assert "unverified: the number 42 appears in no tool result" in out
    assert "unverified: the task asks to run something, but no tool ran anything" in out


def test_without_the_check_the_same_answer_completes(workspace: Path, tmp_path: Path) -> None:
    _config(workspace, "answer_check: off\n")
    script = write_script(tmp_path / "s.yaml", [{"text": "I fixed greet.py; it prints 42."}])
    code, out = _run(workspace, script, "Fix the typo in greet.py, then run it.")
    assert code == 0, out
    assert "■ completed ·" in out


def test_run_writes_and_edits_files_and_the_answer_passes(workspace: Path, tmp_path: Path) -> None:
    (workspace / "greet.py").write_text("prnt('hello')\n")
    _config(workspace, "answer_check: rules\n")
    edit = {"files": [{"path": "greet.py", "diffs": [{"search": "prnt", "replace": "print"}]}]}
    script = write_script(
        tmp_path / "s.yaml",
        [
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


def test_a_model_stuck_on_repeats_gets_its_answer_written_from_the_results(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "config.json").write_text('{"port": 8123}\n')
    _config(workspace, "answer_check: rules\nfocused_answers: on\n")
    read = {"name": "read_code", "args": {"path": "config.json"}}
    script = write_script(
        tmp_path / "s.yaml",
        [
            # the focused answer's own prompt
            {"when": "Answer the question using the facts", "text": "8123"},
            {"tool_calls": [read]},
            {"tool_calls": [read]},  # refused as a repeat: the model is stuck
            {"text": "It is 9999."},  # what a further turn of the model would say
        ],
    )
    code, out = _run(workspace, script, "What port does config.json set?")
    assert code == 0, out
    assert out.count("Not run again") == 1, out
    assert "■ completed ·" in out and "8123" in out
    assert "9999" not in out, out  # no answer-only turn of the model before the focused answer


def test_a_focused_answer_that_fails_the_check_gives_way_to_the_models_own(
    workspace: Path, tmp_path: Path
) -> None:
    """Written again from the facts, "the log does not exist" became an invented address."""
    (workspace / "logs").mkdir()
    (workspace / "logs" / "app.log").write_text("app started\n")
    _config(workspace, "answer_check: rules\nfocused_answers: on\n")
    read = {"name": "read_code", "args": {"path": "logs/nginx.log"}}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "Answer the question using the facts", "text": "10.0.0.1"},
            {"tool_calls": [read]},
            {"text": "There is no logs/nginx.log: the file does not exist."},
        ],
    )
    code, out = _run(workspace, script, "Which IP address shows up most in logs/nginx.log?")
    assert code == 0, out
    assert "■ completed ·" in out and "unverified" not in out
    lines = out.rstrip().splitlines()
    assert lines[-2] == "There is no logs/nginx.log: the file does not exist.", out
    assert "10.0.0.1" not in out


def test_a_focused_answer_that_passes_replaces_an_unsupported_one(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "config.json").write_text('{"port": 8123}\n')
    _config(workspace, "answer_check: rules\nfocused_answers: on\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "Answer the question using the facts", "text": "8123"},
            {"tool_calls": [{"name": "read_code", "args": {"path": "config.json"}}]},
            {"text": "It is 9999."},
        ],
    )
    code, out = _run(workspace, script, "What port does config.json set?")
    assert code == 0, out
    assert "■ completed ·" in out and "unverified" not in out
    assert out.rstrip().splitlines()[-2] == "8123", out


def test_a_models_own_answer_that_holds_nothing_is_not_preferred(
    workspace: Path, tmp_path: Path
) -> None:
    """An apology passes every rule; it is no reason to drop the focused answer's notice."""
    (workspace / "config.json").write_text('{"port": 8123}\n')
    _config(workspace, "answer_check: rules\nfocused_answers: on\nanswer_check_retries: 1\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "Answer the question using the facts", "text": "9999"},
            {"tool_calls": [{"name": "read_code", "args": {"path": "config.json"}}]},
            {"text": "I apologize for the confusion. The answer is the one above."},
            {"text": "I apologize for the confusion. The answer is the one above."},
        ],
    )
    code, out = _run(workspace, script, "What port does config.json set?")
    assert code == 4, out
    assert "■ completed (unverified)" in out and "9999 appears in no tool result" in out
