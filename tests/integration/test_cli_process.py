"""The CLI as a real process: kill -9 and Ctrl-C mid-run, then resume from the checkpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import jarvis_cmd, run_process, write_script

# The second call blocks the first time (until killed) and finishes on the re-run.
SLOW_STEP = (
    "if [ -f started ]; then echo resumed >> log.txt; "
    "else touch started; sleep 60; echo not-killed >> log.txt; fi"
)


def _script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "kill.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "echo one >> log.txt"}}]},
            {"tool_calls": [{"name": "execute_script", "args": {"script": SLOW_STEP}}]},
            {
                "tool_calls": [
                    {"name": "execute_script", "args": {"script": "echo three >> log.txt"}}
                ]
            },
            {"text": "all steps done !!!COMPLETE!!!"},
        ],
    )


def _start(workspace: Path, script: Path, thread: str, *extra: str) -> subprocess.Popen[str]:
    args = ["run", "--platform", "scripted", "--script", str(script), "--new-thread", thread]
    return subprocess.Popen(
        [*jarvis_cmd(), *args, *extra, "work through the steps"],
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def _wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None:
            out, _ = proc.communicate()
            pytest.fail(f"jarvis exited early:\n{out}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            pytest.fail(f"{path.name} never appeared:\n{out}")
        time.sleep(0.05)


def test_kill_9_mid_run_then_resume_reruns_no_recorded_tool_call(
    workspace: Path, tmp_path: Path
) -> None:
    proc = _start(workspace, _script(tmp_path), "killed", "-n", "--yes")
    _wait_for(workspace / "started", proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the agent and its running script, no cleanup
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert (workspace / "log.txt").read_text().splitlines() == ["one"]

    resumed = run_process(["sessions", "resume", "killed", "-n", "--yes"], cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "all steps done" in resumed.stdout
    # "one" was recorded before the kill and is not run again; the killed step re-runs.
    assert (workspace / "log.txt").read_text().splitlines() == ["one", "resumed", "three"]


def test_ctrl_c_stops_cleanly_and_resume_continues(workspace: Path, tmp_path: Path) -> None:
    proc = _start(workspace, _script(tmp_path), "ctrl-c", "-n", "--yes")
    _wait_for(workspace / "started", proc)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C delivers to the agent process
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130, out
    assert "interrupted" in out and "jarvis sessions resume ctrl-c" in out
    # The script was stopped with the agent, not left running in the background.
    time.sleep(0.5)
    assert "not-killed" not in (workspace / "log.txt").read_text()

    resumed = run_process(["sessions", "resume", "ctrl-c", "--yes", "-n"], cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (workspace / "log.txt").read_text().splitlines() == ["one", "resumed", "three"]


def test_ctrl_c_in_interactive_run_takes_a_new_instruction(workspace: Path, tmp_path: Path) -> None:
    proc = _start(workspace, _script(tmp_path), "steer", "--yes")
    _wait_for(workspace / "started", proc)
    proc.send_signal(signal.SIGINT)
    # The instruction goes to the model; the interrupted call is answered as not run.
    out, _ = proc.communicate("skip the slow step\n\n", timeout=60)
    assert proc.returncode == 0, out
    assert "instruction to continue" in out
    shown = run_process(["sessions", "show", "steer"], cwd=workspace).stdout
    assert "skip the slow step" in shown
    assert "Not run: the user interrupted" in shown


def test_ctrl_c_during_a_slow_model_call_stops_without_waiting_for_it(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.fake_openai import FakeOpenAI

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAI() as server:
        server.reply("too late !!!COMPLETE!!!", delay=120)  # the provider hangs
        server.reply("answered after resume !!!COMPLETE!!!")
        args = ["--platform", "openai", "--base-url", server.base_url, "--model", "m"]
        proc = subprocess.Popen(
            [*jarvis_cmd(), "run", "-n", *args, "--new-thread", "slow", "hello"],
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "JARVIS_API_KEY_ENV": "FAKE_KEY"},
        )
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)  # well before the provider would answer
        assert proc.returncode == 130, out
        assert "jarvis sessions resume slow" in out
        resumed = subprocess.run(
            [*jarvis_cmd(), "sessions", "resume", "slow", "-n"],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "JARVIS_API_KEY_ENV": "FAKE_KEY"},
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "answered after resume" in resumed.stdout
