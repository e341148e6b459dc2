"""Integrity: one run per thread across processes, and no script left running by kill -9.

Every scenario drives the CLI as real processes (scripted platform) on a real SQLite
session store, and checks what a user would see: exit codes, the printed text, the files
the scripts wrote, the rows in the session DB and the processes still alive.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import jarvis_cmd, run_process, write_script

HOST = socket.gethostname()
SCRIPTED = ["--platform", "scripted", "-n", "--yes"]
# A step that blocks the first time (until killed) and finishes quickly when run again.
SLOW = (
    "if [ -f started ]; then echo resumed >> log.txt; sleep 2; "
    "else touch started; sleep 60; echo not-killed >> log.txt; fi"
)
# The first copy ticks into a file until it is ended; the copy a resumed run starts checks
# whether the first is still ticking (two copies alive at once) and says so in log.txt.
TICKING = (
    "if [ -f first.pgid ]; then a=$(wc -l < ticks); sleep 0.6; b=$(wc -l < ticks); "
    'if [ "$a" = "$b" ]; then echo old-gone >> log.txt; else echo old-alive >> log.txt; fi; '
    "else echo $$ > first.pgid; while true; do echo tick >> ticks; sleep 0.1; done; fi"
)


_RUNS: list[Run] = []


class Run:
    """A ``jarvis`` process whose output is collected line by line as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*jarvis_cmd(), *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        _RUNS.append(self)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.output)
            if found:
                return found
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        pytest.fail(f"{pattern!r} never appeared in the output:\n{self.output}")

    def session(self) -> str:
        return self.wait_for(r"session (\S+) · workspace").group(1)

    def finish(self, timeout: float = 120) -> int:
        if self.proc.stdin:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        if self.proc.stdout:
            self.proc.stdout.close()
        return code

    def close(self) -> None:
        """Stop the process if a failed scenario left it, and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.finish(30)

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)  # the agent only: its scripts have own groups
        assert self.finish(30) == -signal.SIGKILL


def _processes_in(folder: Path) -> list[int]:
    """Live (not zombie) processes whose working directory is inside ``folder``."""
    found = []
    with os.scandir("/proc") as entries:
        names = [entry.name for entry in entries if entry.name.isdigit()]
    for name in names:
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and Path(cwd).is_relative_to(folder):
            found.append(int(name))
    return found


def _group_alive(pgid: int) -> bool:
    with os.scandir("/proc") as entries:
        names = [entry.name for entry in entries if entry.name.isdigit()]
    for name in names:
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


@pytest.fixture(autouse=True)
def no_process_left(tmp_path: Path) -> Iterator[None]:
    """Whatever a scenario leaves running in its folders is killed afterwards."""
    yield
    while _RUNS:
        _RUNS.pop().close()
    for pid in _processes_in(tmp_path):
        try:
            group = os.getpgid(pid)
            if group == os.getpgrp():  # a jarvis process of this test: not pytest's group
                os.kill(pid, signal.SIGKILL)
            else:  # a script's own group
                os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _script(tmp_path: Path, steps: list[str], name: str = "steps.yaml") -> Path:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "execute_script", "args": {"script": s}}]} for s in steps
    ]
    return write_script(tmp_path / name, [*turns, {"text": "all steps done !!!COMPLETE!!!"}])


def _run(script: Path, *extra: str) -> list[str]:
    return ["run", *SCRIPTED, "--script", str(script), *extra, "work through the steps"]


def _resume(thread: str) -> list[str]:
    return ["sessions", "resume", thread, "-n", "--yes"]


def _rows(ws: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(ws / ".jarvis" / "sessions.sqlite")
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        conn.close()


def _locks(ws: Path, thread: str) -> list[tuple[Any, ...]]:
    return _rows(ws, "SELECT pid, host FROM thread_locks WHERE thread_id = ?", thread)


def _tool_messages(ws: Path, thread: str) -> list[Any]:
    from jarvis_graph.checkpointing import open_checkpointer

    with open_checkpointer(ws) as saver:
        tup = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    assert tup is not None
    return [m for m in tup.checkpoint["channel_values"]["messages"] if m.type == "tool"]


def _log(ws: Path, name: str = "log.txt") -> list[str]:
    path = ws / name
    return path.read_text().splitlines() if path.exists() else []


def _wait_file(path: Path, run: Run, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if run.proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{path.name} never appeared:\n{run.output}")
        time.sleep(0.05)


def _new_thread(ws: Path, tmp_path: Path) -> str:
    """A finished session whose next runs use turns 2.. of ``held.yaml``."""
    script = write_script(tmp_path / "ready.yaml", [{"text": "ready !!!COMPLETE!!!"}])
    done = run_process(["run", *SCRIPTED, "--script", str(script), "get ready"], cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"session (\S+) · workspace", done.stdout)
    assert found, done.stdout
    return found.group(1)


def _held_script(tmp_path: Path, step: str) -> Path:
    """Turn 1 answered the creating run; turn 2 runs ``step``; turn 3 ends."""
    return write_script(
        tmp_path / "held.yaml",
        [
            {"text": "ready !!!COMPLETE!!!"},
            {"tool_calls": [{"name": "execute_script", "args": {"script": step}}]},
            {"text": "done !!!COMPLETE!!!"},
        ],
    )


# Waits (up to 2 minutes) until the test creates the file ``release``: no timing guesses.
WAIT_RELEASE = "for i in $(seq 1200); do [ -f release ] && break; sleep 0.1; done"
HOLD = f"echo A >> steps.txt; touch holding; {WAIT_RELEASE}; echo A-done >> steps.txt"
# SLOW, with the re-run holding its thread until released.
SLOW_HELD = (
    f"if [ -f started ]; then echo resumed >> log.txt; touch holding; {WAIT_RELEASE}; "
    "else touch started; sleep 60; echo not-killed >> log.txt; fi"
)


def test_two_runs_on_one_thread_the_second_fails_naming_the_holder(
    workspace: Path, tmp_path: Path
) -> None:
    thread = _new_thread(workspace, tmp_path)
    script = _held_script(tmp_path, HOLD)
    first = Run(_run(script, "--thread", thread), workspace)
    _wait_file(workspace / "holding", first)
    checkpoints = _rows(workspace, "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", thread)

    second = run_process(_run(script, "--thread", thread), cwd=workspace)

    out = second.stdout + second.stderr
    assert second.returncode == 1, out
    assert f"session {thread} is in use by another run (pid {first.pid} on host {HOST} since" in out
    assert "⚙" not in out  # no step ran
    assert "A-done" not in _log(workspace, "steps.txt")  # the first still held the thread
    assert (
        _rows(workspace, "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", thread)
        == checkpoints
    )
    (workspace / "release").touch()
    assert first.finish() == 0, first.output
    assert _log(workspace, "steps.txt") == ["A", "A-done"]
    assert len(_tool_messages(workspace, thread)) == 1


def test_two_resumes_of_a_killed_thread_only_one_runs(workspace: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, ["echo one >> log.txt", SLOW_HELD, "echo three >> log.txt"])
    killed = Run(_run(script), workspace)
    thread = killed.session()
    _wait_file(workspace / "started", killed)
    killed.kill9()

    runs = [Run(_resume(thread), workspace), Run(_resume(thread), workspace)]
    deadline = time.monotonic() + 120  # the loser ends while the winner waits for release
    while all(run.proc.poll() is None for run in runs) and time.monotonic() < deadline:
        time.sleep(0.1)
    (workspace / "release").touch()
    codes = [run.finish() for run in runs]

    assert sorted(codes) == [0, 1], [r.output for r in runs]
    winner, loser = (runs[0], runs[1]) if codes[0] == 0 else (runs[1], runs[0])
    assert f"in use by another run (pid {winner.pid} on host {HOST}" in loser.output
    assert "⚙" not in loser.output
    assert _log(workspace) == ["one", "resumed", "three"]


def test_stale_lock_of_a_run_killed_with_kill_9_is_taken_over(
    workspace: Path, tmp_path: Path
) -> None:
    script = _script(tmp_path, ["echo one >> log.txt", SLOW, "echo three >> log.txt"])
    killed = Run(_run(script), workspace)
    thread = killed.session()
    _wait_file(workspace / "started", killed)
    killed.kill9()
    assert _locks(workspace, thread) == [(killed.pid, HOST)]  # left behind by kill -9

    resumed = run_process(_resume(thread), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    lines = [line for line in resumed.stdout.splitlines() if "took over" in line]
    assert lines == [
        f"took over session {thread} from pid {killed.pid} on host {HOST} since "
        f"{lines[0].split(' since ')[1].split(',')[0]}, which is no longer running"
    ]
    assert _log(workspace) == ["one", "resumed", "three"]
    assert _locks(workspace, thread) == []


def test_lock_of_a_reused_pid_is_stale(workspace: Path, tmp_path: Path) -> None:
    thread = _new_thread(workspace, tmp_path)
    # The pid is alive (this test), but the process that took the lock started at another time.
    conn = sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite")
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO thread_locks VALUES (?, ?, ?, ?, ?)",
            (thread, os.getpid(), HOST, "1", time.time() - 3600),
        )
    conn.close()

    done = run_process(
        _run(_held_script(tmp_path, "echo ran >> log.txt"), "--thread", thread), cwd=workspace
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"took over session {thread} from pid {os.getpid()} on host {HOST}" in done.stdout
    assert _log(workspace) == ["ran"]


def test_lock_of_a_live_process_is_respected(workspace: Path, tmp_path: Path) -> None:
    thread = _new_thread(workspace, tmp_path)
    holder = subprocess.Popen(["sleep", "60"], cwd=workspace)
    start = Path(f"/proc/{holder.pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]
    conn = sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite")
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO thread_locks VALUES (?, ?, ?, ?, ?)",
            (thread, holder.pid, HOST, start, time.time()),
        )
    conn.close()
    try:
        refused = run_process(
            _run(_held_script(tmp_path, "echo ran >> log.txt"), "--thread", thread), cwd=workspace
        )
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 1, refused.stdout
    assert f"pid {holder.pid} on host {HOST}" in refused.stdout
    assert f"kill {holder.pid}" in refused.stdout
    assert _log(workspace) == []


def test_lock_of_another_host_is_respected_until_unlocked(workspace: Path, tmp_path: Path) -> None:
    thread = _new_thread(workspace, tmp_path)
    conn = sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite")
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO thread_locks VALUES (?, ?, ?, ?, ?)",
            (thread, 4242, "build-host-7", "", time.time()),
        )
    conn.close()
    args = _run(_held_script(tmp_path, "echo ran >> log.txt"), "--thread", thread)

    refused = run_process(args, cwd=workspace)
    assert refused.returncode == 1, refused.stdout
    assert "pid 4242 on host build-host-7" in refused.stdout
    assert f"jarvis sessions unlock {thread}" in refused.stdout

    unlocked = run_process(["sessions", "unlock", thread], cwd=workspace)
    assert unlocked.returncode == 0, unlocked.stdout + unlocked.stderr
    assert "held by pid 4242 on host build-host-7" in unlocked.stdout
    done = run_process(args, cwd=workspace)
    assert done.returncode == 0, done.stdout
    assert _log(workspace) == ["ran"]


def test_lock_is_released_after_a_normal_end(workspace: Path, tmp_path: Path) -> None:
    thread = _new_thread(workspace, tmp_path)
    assert _locks(workspace, thread) == []
    again = run_process(
        _run(_held_script(tmp_path, "echo ran >> log.txt"), "--thread", thread), cwd=workspace
    )
    assert again.returncode == 0, again.stdout
    assert "took over" not in again.stdout
    assert _locks(workspace, thread) == []


def test_lock_is_released_after_a_provider_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.fake_openai import FakeOpenAI, ToolCall

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.setenv("JARVIS_API_KEY_ENV", "FAKE_KEY")
    with FakeOpenAI() as server:
        server.reply(tool_calls=[ToolCall("execute_script", {"script": "echo x >> log.txt"})])
        server.fail(401, "invalid api key", times=5)
        args = ["--platform", "openai", "--base-url", server.base_url, "--model", "fake-model"]
        failed = Run(["run", "-n", "--yes", *args, "do it"], workspace)
        thread = failed.session()
        assert failed.finish() == 1, failed.output
        assert _locks(workspace, thread) == []
        while server.pending:  # the error replies the retries did not use
            server._turns.popleft()
        server.reply("finished !!!COMPLETE!!!")
        resumed = run_process(_resume(thread), cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "took over" not in resumed.stdout
    assert _log(workspace) == ["x"]


def test_lock_is_released_after_ctrl_c(workspace: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, ["echo one >> log.txt", SLOW, "echo three >> log.txt"])
    run = Run(_run(script), workspace)
    thread = run.session()
    _wait_file(workspace / "started", run)
    run.proc.send_signal(signal.SIGINT)
    assert run.finish(30) == 130, run.output
    assert _locks(workspace, thread) == []

    resumed = run_process(_resume(thread), cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "took over" not in resumed.stdout
    assert _log(workspace) == ["one", "resumed", "three"]


def test_different_threads_run_at_the_same_time(workspace: Path, tmp_path: Path) -> None:
    # Each run's script waits for the other's to start: run one after the other, they
    # would each wait in vain and write "alone".
    def meet(me: str, other: str) -> str:
        return (
            f"touch {me}-in; for i in $(seq 1200); do [ -f {other}-in ] && break; sleep 0.1; "
            f"done; [ -f {other}-in ] && echo {me}-met >> log-{me} || echo {me}-alone >> log-{me}"
        )

    a = Run(_run(_script(tmp_path, [meet("a", "b")], "a.yaml")), workspace)
    b = Run(_run(_script(tmp_path, [meet("b", "a")], "b.yaml")), workspace)
    assert a.finish() == 0, a.output
    assert b.finish() == 0, b.output
    assert _log(workspace, "log-a") == ["a-met"]
    assert _log(workspace, "log-b") == ["b-met"]


def test_kill_9_during_a_script_then_resume_ends_the_old_copy_first(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unsandboxed, nothing ends the script with the agent (a sandboxed one ends with it,
    # see test_boundary_processes.py); the resumed run ends the old copy before it starts
    # the call again.
    monkeypatch.setenv("JARVIS_SANDBOX", "off")
    script = _script(tmp_path, ["echo one >> log.txt", TICKING])
    killed = Run(_run(script), workspace)
    thread = killed.session()
    _wait_file(workspace / "ticks", killed)
    killed.kill9()
    pgid = int((workspace / "first.pgid").read_text())
    assert _group_alive(pgid)  # kill -9 of the agent leaves its script running

    resumed = run_process(_resume(thread), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert re.search(
        rf"ended a script the stopped run left running: tool call \S+, process group {pgid}",
        resumed.stdout,
    )
    assert _log(workspace) == ["one", "old-gone"]  # never two copies at once
    assert not _group_alive(pgid)
    notes = [m.content for m in _tool_messages(workspace, thread) if "note:" in m.content]
    assert len(notes) == 1
    assert f"was still running (process group {pgid}); it was ended (SIGTERM)" in notes[0]
    assert _processes_in(workspace) == []


def test_a_script_that_ends_normally_leaves_no_record(workspace: Path, tmp_path: Path) -> None:
    step = f"touch holding; {WAIT_RELEASE}; echo done >> log.txt"
    run = Run(_run(_script(tmp_path, [step])), workspace)
    thread = run.session()
    _wait_file(workspace / "holding", run)
    sql = "SELECT tool_call_id, pgid FROM running_scripts WHERE thread_id = ?"
    deadline = time.monotonic() + 30  # the record is written just after the script starts
    while not (rows := _rows(workspace, sql, thread)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(rows) == 1 and _group_alive(rows[0][1])  # recorded while it runs
    (workspace / "release").touch()
    assert run.finish() == 0, run.output
    assert _rows(workspace, "SELECT * FROM running_scripts WHERE thread_id = ?", thread) == []
    assert _log(workspace) == ["done"]


def test_resume_does_not_rerun_a_recorded_call(workspace: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, ["echo one >> log.txt", TICKING, "echo three >> log.txt"])
    killed = Run(_run(script), workspace)
    thread = killed.session()
    _wait_file(workspace / "ticks", killed)
    killed.kill9()

    resumed = run_process(_resume(thread), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _log(workspace) == ["one", "old-gone", "three"]
    messages = _tool_messages(workspace, thread)
    assert [m.tool_call_id for m in messages] == ["call_0_0", "call_1_0", "call_2_0"]
    assert "note:" not in messages[0].content and "note:" not in messages[2].content


def test_chat_holds_its_session_while_waiting_for_input(workspace: Path, tmp_path: Path) -> None:
    thread = _new_thread(workspace, tmp_path)
    script = _held_script(tmp_path, "echo ran >> log.txt")
    chat = Run(
        ["chat", "--platform", "scripted", "--script", str(script), "--thread", thread], workspace
    )
    chat.wait_for(rf"session {re.escape(thread)} · workspace")

    refused = run_process(_run(script, "--thread", thread), cwd=workspace)
    assert refused.returncode == 1, refused.stdout
    assert f"in use by another run (pid {chat.pid} on host {HOST}" in refused.stdout

    assert chat.finish(30) == 0, chat.output  # end of input leaves the REPL
    done = run_process(_run(script, "--thread", thread), cwd=workspace)
    assert done.returncode == 0, done.stdout
    assert _log(workspace) == ["ran"]


def test_a_script_not_yet_recorded_at_the_kill_is_still_ended(
    workspace: Path, tmp_path: Path
) -> None:
    # kill -9 can land between the script's start and its record: the script carries
    # its thread's mark in its environment, and the next run finds it by that.
    from jarvis_graph.script_groups import ScriptCall, script_env

    thread = _new_thread(workspace, tmp_path)
    db = workspace / ".jarvis" / "sessions.sqlite"
    mark = script_env(ScriptCall(db, thread, "", "call_9_0"))
    orphan = subprocess.Popen(
        ["bash", "-c", "sleep 60; echo orphan-finished >> log.txt"],
        cwd=workspace,
        start_new_session=True,
        env={**os.environ, **mark},
    )
    assert _rows(workspace, "SELECT * FROM running_scripts WHERE thread_id = ?", thread) == []

    done = run_process(
        _run(_held_script(tmp_path, "echo ran >> log.txt"), "--thread", thread), cwd=workspace
    )

    assert done.returncode == 0, done.stdout
    assert f"ended a script the stopped run left running: process group {orphan.pid}" in (
        done.stdout
    )
    assert orphan.wait(timeout=10) == -signal.SIGTERM
    assert _log(workspace) == ["ran"]


# Starts the CLI with a session store that dies (SIGKILL) at the moment a tool's result
# has been saved (LangGraph writes a finished task's output first) and the checkpoint
# that follows has not: the narrowest point a kill -9 can land in.
KILL_BEFORE_CHECKPOINT = """
import os, signal, sys
from langgraph.checkpoint.sqlite import SqliteSaver

original = SqliteSaver.put_writes

def put_writes(self, config, writes, task_id, task_path=""):
    original(self, config, writes, task_id, task_path)
    if any(channel == "messages" and "exit code" in str(value) for channel, value in writes):
        os.kill(os.getpid(), signal.SIGKILL)  # the tool's result is saved, nothing after

SqliteSaver.put_writes = put_writes
from jarvis_graph.cli.app import main

sys.argv = ["jarvis", *sys.argv[1:]]
main()
"""


def test_kill_after_a_result_is_saved_but_before_its_checkpoint_resumes(
    workspace: Path, tmp_path: Path
) -> None:
    launcher = tmp_path / "dying_store.py"
    launcher.write_text(KILL_BEFORE_CHECKPOINT)
    script = _script(tmp_path, ["echo one >> log.txt", "echo two >> log.txt"])
    killed = subprocess.run(
        [sys.executable, str(launcher), *_run(script)],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    found = re.search(r"session (\S+) · workspace", killed.stdout)
    assert found, killed.stdout
    assert _log(workspace) == ["one"]

    resumed = run_process(_resume(found.group(1)), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "all steps done" in resumed.stdout
    assert _log(workspace) == ["one", "two"]  # the saved result is used, not run again


def test_resume_of_a_finished_session_runs_nothing(workspace: Path, tmp_path: Path) -> None:
    done = Run(_run(_script(tmp_path, ["echo one >> log.txt"])), workspace)
    thread = done.session()
    assert done.finish() == 0, done.output

    resumed = run_process(_resume(thread), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"session {thread} is completed; give it a new task" in resumed.stdout
    assert _log(workspace) == ["one"]
