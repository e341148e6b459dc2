"""Integrity on a PostgreSQL session store: one run per thread across processes, kill -9.

The scenarios of ``test_integrity`` that concern the store, with ``JARVIS_CHECKPOINT_URL``
naming a database of a real server on loopback. The lock is an advisory lock on a
connection of the holder's own: the server frees it when a holder killed with -9 is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adversarial import test_integrity as integrity
from tests.adversarial.test_integrity import (
    HOLD,
    HOST,
    SLOW,
    Run,
    _held_script,
    _log,
    _new_thread,
    _resume,
    _run,
    _script,
    _wait_file,
    no_process_left,  # noqa: F401 (an autouse fixture: whatever a scenario leaves is killed)
)
from tests.support.cli import run_process


@pytest.fixture(autouse=True)
def on_postgres(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", pg_url)
    return pg_url


def _rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]


def _locks(url: str, thread: str) -> list[tuple[Any, ...]]:
    return _rows(url, "SELECT pid, host FROM jarvis_thread_locks WHERE thread_id = %s", thread)


def _checkpoints(url: str, thread: str) -> int:
    return int(_rows(url, "SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", thread)[0][0])


def test_two_runs_on_one_thread_the_second_fails_naming_the_holder(
    workspace: Path, tmp_path: Path, on_postgres: str
) -> None:
    thread = _new_thread(workspace, tmp_path)
    script = _held_script(tmp_path, HOLD)
    first = Run(_run(script, "--thread", thread), workspace)
    _wait_file(workspace / "holding", first)
    checkpoints = _checkpoints(on_postgres, thread)

    second = run_process(_run(script, "--thread", thread), cwd=workspace)

    out = second.stdout + second.stderr
    assert second.returncode == 1, out
    assert f"session {thread} is in use by another run (pid {first.pid} on host {HOST} since" in out
    assert "⚙" not in out  # no step ran
    assert _checkpoints(on_postgres, thread) == checkpoints
    (workspace / "release").touch()
    assert first.finish() == 0, first.output
    assert _log(workspace, "steps.txt") == ["A", "A-done"]
    assert _locks(on_postgres, thread) == []  # released at the end
    assert not (workspace / ".jarvis" / "sessions.sqlite").exists()


# The same scenario as on SQLite (it reads nothing of the store): here on PostgreSQL.
test_two_resumes_of_a_killed_thread_only_one_runs = (
    integrity.test_two_resumes_of_a_killed_thread_only_one_runs
)


def test_the_lock_of_a_run_killed_with_kill_9_is_gone_with_its_connection(
    workspace: Path, tmp_path: Path, on_postgres: str
) -> None:
    script = _script(tmp_path, ["echo one >> log.txt", SLOW, "echo three >> log.txt"])
    killed = Run(_run(script), workspace)
    thread = killed.session()
    _wait_file(workspace / "started", killed)
    killed.kill9()
    assert _locks(on_postgres, thread) == [(killed.pid, HOST)]  # its row is left behind

    resumed = run_process(_resume(thread), cwd=workspace)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"took over session {thread} from pid {killed.pid} on host {HOST}" in resumed.stdout
    assert _log(workspace) == ["one", "resumed", "three"]
    assert _locks(on_postgres, thread) == []


def test_a_server_that_cannot_be_reached_is_a_clear_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(
        "JARVIS_CHECKPOINT_URL", f"postgresql://annuser7:s3cret-pw@127.0.0.1:{port}/x"
    )
    done = run_process(["sessions", "list"], cwd=workspace)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"cannot open the session store postgresql://127.0.0.1:{port}/x" in out
    assert "s3cret-pw" not in out and "annuser7" not in out
    assert "Traceback" not in out
