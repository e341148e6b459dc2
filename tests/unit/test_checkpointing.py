"""Opening the session store: several processes creating it at the same moment."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from jarvis_graph.checkpointing import CheckpointError, _setup_sqlite, open_checkpointer


def _open(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        with open_checkpointer(Path(path).parent, f"sqlite:///{path}"):
            pass
        results.put("ok")
    except Exception as exc:  # reported to the test, which shows it
        results.put(repr(exc))


def test_processes_creating_the_store_at_once_all_open_it(tmp_path: Path) -> None:
    # Two `jarvis run`s started together in a new project both create sessions.sqlite;
    # SQLite refused one of them at once ("database is locked") about one time in seven.
    ctx = multiprocessing.get_context("fork")
    failures = []
    for trial in range(40):
        path = tmp_path / f"t{trial}" / "sessions.sqlite"
        path.parent.mkdir()
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(str(path), barrier, results)) for _ in range(4)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        failures += [r for r in (results.get(timeout=5) for _ in procs) if r != "ok"]
    assert failures == []


class _Saver:
    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        self.calls = 0

    def setup(self) -> None:
        self.calls += 1
        if self.errors:
            raise sqlite3.OperationalError(self.errors.pop(0))


def test_setup_is_tried_again_while_the_database_is_locked(tmp_path: Path) -> None:
    saver = _Saver(["database is locked", "database is locked"])
    _setup_sqlite(saver, tmp_path / "s.sqlite")
    assert saver.calls == 3


def test_other_errors_and_a_lock_past_the_wait_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="s.sqlite: file is not a database"):
        _setup_sqlite(_Saver(["file is not a database"]), tmp_path / "s.sqlite")
    with pytest.raises(CheckpointError, match="database is locked"):
        _setup_sqlite(_Saver(["database is locked"] * 1000), tmp_path / "s.sqlite", wait=0.2)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://u:pw@h:5432/db?sslmode=require&password=pw&host=/tmp#x",
            "postgresql://h:5432/db?host=/tmp",
        ),
        ("postgresql://u:pw@[bad/db?options=-c%20pw&port=1", "postgresql://[bad/db?port=1"),
    ],
)
def test_a_store_url_is_shown_with_its_host_and_port_only(url: str, shown: str) -> None:
    from jarvis_graph.checkpointing import redact_url

    assert redact_url(url) == shown


def test_a_malformed_postgres_url_is_a_clear_error_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError) as caught:
        with open_checkpointer(tmp_path, "postgresql://jarvis:s3cret@[bad/db?password=s3cret"):
            pass
    assert "postgresql://[bad/db" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_transactions_of_two_threads_on_one_postgres_store_stay_apart(
    pg_url: str, tmp_path: Path
) -> None:
    import threading

    from langgraph.checkpoint.base import empty_checkpoint

    def put(saver: Any, thread: str) -> None:
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        saver.put(config, empty_checkpoint(), {}, {})

    with open_checkpointer(tmp_path, pg_url) as saver:
        first_in, second_in, first_done = threading.Event(), threading.Event(), threading.Event()

        def second() -> None:
            first_in.wait(10)
            with saver.transaction():
                second_in.set()
                first_done.wait(10)
                put(saver, "kept")

        other = threading.Thread(target=second)
        other.start()
        with pytest.raises(RuntimeError), saver.transaction():
            first_in.set()
            second_in.wait(10)
            put(saver, "rolled-back")
            first_done.set()
            raise RuntimeError  # this block's writes are undone, whatever the other does
        other.join(10)
        assert [t.config["configurable"]["thread_id"] for t in saver.list(None)] == ["kept"]
