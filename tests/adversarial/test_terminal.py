"""The ``jarvis`` CLI in a real pseudo-terminal: what the user sees and can type.

Each test starts ``python -m jarvis_graph.cli`` under ``pexpect`` (a pty, so rich renders
as on a terminal), strips the ANSI escapes from what was printed and asserts on that text,
then on the files the run left on disk and on what the session recorded.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.support.cli import invoke, write_script
from tests.support.fake_openai import FakeOpenAI, ToolCall
from tests.support.terminal import TIMEOUT, Terminal

CONFIRM = "[a]pprove, [e]dit arguments, [r]eject? [a]"


def scripted(script: Path, *extra: str) -> list[str]:
    return ["run", "--platform", "scripted", "--script", str(script), *extra]


def session_of(screen: str) -> str:
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", screen)
    assert match, screen
    return match.group(1)


def shown_session(ws: Path, thread: str) -> str:
    result = invoke(["sessions", "show", thread, "-w", str(ws)])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_confirm_prompt_shows_its_choices_and_edit_runs_the_edited_script(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "touch model.txt"}}]},
            {"text": "made the file !!!COMPLETE!!!"},
        ],
    )
    term = Terminal(scripted(script, "--confirm", "risky", "make a file"), workspace)
    term.expect("confirm execute_script")
    term.expect(CONFIRM)  # rich must not take [a], [e], [r] for markup
    term.type("e")
    term.expect("new arguments as JSON:")
    term.type('{"script": "touch edited.txt"}')
    term.expect("made the file")
    assert term.exit_code() == 0, term.screen
    assert (workspace / "edited.txt").exists()
    assert not (workspace / "model.txt").exists()


def test_confirm_reject_with_a_reason_runs_nothing_and_tells_the_model(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "touch model.txt"}}]},
            {"text": "understood, nothing created !!!COMPLETE!!!"},
        ],
    )
    term = Terminal(scripted(script, "--confirm", "risky", "make a file"), workspace)
    term.expect(CONFIRM)
    term.type("r")
    term.expect("reason (optional):")
    term.type("not in [this] repo")
    term.expect("understood, nothing created")
    assert term.exit_code() == 0, term.screen
    assert not (workspace / "model.txt").exists()
    told = shown_session(workspace, session_of(term.screen))
    assert "The user declined this call to execute_script (not in [this] repo)" in told


def test_markup_in_tool_calls_and_results_is_shown_literally(
    workspace: Path, tmp_path: Path
) -> None:
    """Text from the model and from tools reaches the screen as typed, brackets included."""
    line = "echo '[bold]x[/] [red]y' > out.txt; cat out.txt"
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": line}}]},
            {"text": "wrote [bold]x[/] [red]y !!!COMPLETE!!!"},
        ],
    )
    term = Terminal(scripted(script, "--confirm", "always", "write brackets"), workspace)
    term.expect("⚙ execute_script")
    term.expect("'[bold]x[/] [red]y' > out.txt")  # the call as the model wrote it
    term.expect("confirm execute_script")
    term.expect("[bold]x[/] [red]y")
    term.expect(CONFIRM)
    term.type("")  # Enter approves
    term.expect("↳ execute_script")
    term.expect("[bold]x[/] [red]y")  # the script's output
    term.expect("wrote [bold]x[/] [red]y")
    assert term.exit_code() == 0, term.screen
    assert (workspace / "out.txt").read_text() == "[bold]x[/] [red]y\n"


SLOW = "echo $$ > script.pid; touch started; sleep 60; touch not_killed"


def slow_script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "slow.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": SLOW}}]},
            {"text": "continuing without the slow step !!!COMPLETE!!!"},
        ],
    )


def wait_for_file(path: Path, term: Terminal) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        if not term._read(0.1) or time.monotonic() > deadline:
            pytest.fail(f"{path.name} never appeared:\n{term.screen}")


def group_alive(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are still running (zombies excluded)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def test_ctrl_c_then_enter_stops_with_the_resume_hint_and_no_script_left(
    workspace: Path, tmp_path: Path
) -> None:
    term = Terminal(scripted(slow_script(tmp_path), "--yes", "run the slow step"), workspace)
    wait_for_file(workspace / "started", term)
    pgid = int((workspace / "script.pid").read_text())
    term.child.sendintr()  # Ctrl-C typed at the terminal
    term.expect("interrupted")
    term.expect("instruction to continue (Enter to stop):")
    term.type("")
    hint = term.expect(r"resume later with: jarvis sessions resume \S+", regex=True)
    assert term.exit_code() == 130, term.screen
    assert hint.endswith(session_of(term.screen))
    deadline = time.monotonic() + 10
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_alive(pgid) == []
    assert not (workspace / "not_killed").exists()


def test_ctrl_c_then_an_instruction_continues_the_run(workspace: Path, tmp_path: Path) -> None:
    term = Terminal(scripted(slow_script(tmp_path), "--yes", "run the slow step"), workspace)
    wait_for_file(workspace / "started", term)
    term.child.sendintr()
    term.expect("instruction to continue (Enter to stop):")
    term.type("skip the slow step")
    term.expect("continuing without the slow step")
    assert term.exit_code() == 0, term.screen
    told = shown_session(workspace, session_of(term.screen))
    assert "skip the slow step" in told
    assert "Not run: the user interrupted" in told
    assert not (workspace / "not_killed").exists()


PROGRESS = r"step (\d+) · (\d+(?:\.\d)?)s · (\d+) tokens · \d+(?:\.\d)? tok/s"
SUMMARY = r"■ completed · 2 model calls · (\d+) tokens · \d+(?:\.\d)?s · session \S+"


def test_progress_line_shows_step_elapsed_time_and_tokens_while_the_model_works(
    workspace: Path,
) -> None:
    long_script = "echo " + " ".join(f"word{i}" for i in range(60)) + " > words.txt"
    with FakeOpenAI() as server:
        server.reply(
            tool_calls=[ToolCall("execute_script", {"script": long_script})], chunk_delay=0.08
        )
        server.reply("all words written !!!COMPLETE!!!", delay=2.5)
        args = ["--platform", "openai", "--base-url", server.base_url, "--model", "fake-model"]
        env = {"JARVIS_API_KEY_ENV": "FAKE_KEY", "FAKE_KEY": "sk-test"}
        term = Terminal(["run", "--yes", *args, "write the words"], workspace, env)
        first = re.search(PROGRESS, term.expect(PROGRESS, regex=True))
        assert first and first.group(1) == "1"
        # Tokens grow while the tool call streams in.
        later = term.expect(r"step 1 · [\d.]+s · ([1-9]\d+) tokens", regex=True)
        assert int(re.findall(r"(\d+) tokens", later)[0]) >= 10
        term.expect("↳ execute_script")
        step2 = term.expect(r"step 2 · [1-9](?:\.\d)?s", regex=True)  # the slow second call
        assert step2
        term.expect("all words written")
        summary = term.expect(SUMMARY, regex=True)
        assert term.exit_code() == 0, term.screen
    tokens = int(re.search(SUMMARY, summary).group(1))  # type: ignore[union-attr]
    assert tokens >= 10
    assert (workspace / "words.txt").read_text().startswith("word0 word1")


def test_piped_output_has_no_progress_line_but_the_summary(workspace: Path, tmp_path: Path) -> None:
    from tests.support.cli import run_process

    script = write_script(tmp_path / "s.yaml", [{"text": "done !!!COMPLETE!!!", "delay": 0.5}])
    proc = run_process(
        ["run", "-n", "--platform", "scripted", "--script", str(script), "go"], cwd=workspace
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tok/s" not in proc.stdout and "\x1b[" not in proc.stdout
    assert re.search(r"■ completed · 1 model calls · \d+ tokens · [\d.]+s · session", proc.stdout)
