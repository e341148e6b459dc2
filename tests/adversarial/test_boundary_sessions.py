"""Boundary: the session store and its files are data, never code.

What crosses it: an export file given to ``jarvis sessions import``, a
``.jarvis/sessions.sqlite`` (and its ``blobs/parts.sqlite``) that came with a cloned
repository, the tables of a shared PostgreSQL store. Guaranteed here, on real stores and
real ``jarvis`` processes:

- a value that names a callable (``os.system``, ``subprocess.Popen``, a module lying in the
  project, a method call, a pickle) is never imported, called or unpickled: the command
  says which type it refused, on one line, and exits 1 (``sessions list`` marks the
  session unreadable and lists the others);
- an import writes each session whole or not at all: a bad record imports nothing, a
  ``kill -9`` in the middle of a session leaves that session out, and a retry imports it;
- imported session ids follow the rule of ``--new-thread``;
- ``sessions unlock`` does not release the lock of a run that is alive on this host.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import ormsgpack
import pytest

from tests.adversarial.test_integrity import (
    HOLD,
    HOST,
    Run,
    _held_script,
    _locks,
    _log,
    _new_thread,
    _run,
    _script,
    _wait_file,
    no_process_left,  # noqa: F401 (an autouse fixture: whatever a scenario leaves is killed)
)
from tests.support.cli import jarvis_cmd, run_process

HEADER = {"format": "jarvis-graph-sessions", "version": 1}
EXT_SINGLE, EXT_POSITIONAL, EXT_KEYWORDS, EXT_METHOD = 0, 1, 2, 3


def _ext(code: int, *fields: Any) -> ormsgpack.Ext:
    """A msgpack extension of LangGraph's serializer: ``(module, name, args…)``."""
    return ormsgpack.Ext(code, ormsgpack.packb(list(fields)))


def _poisons(marker: Path) -> dict[str, ormsgpack.Ext]:
    """Values that, decoded by a serializer that trusts them, create ``marker``."""
    touch = f"touch {marker}"
    return {
        "os.system": _ext(EXT_SINGLE, "os", "system", touch),
        "subprocess.Popen": _ext(EXT_POSITIONAL, "subprocess", "Popen", [["sh", "-c", touch]]),
        # a module lying in the project folder (the CLI's working directory is importable)
        "jarvis_planted.Thing": _ext(EXT_KEYWORDS, "jarvis_planted", "Thing", {}),
        "os.system.__call__": _ext(EXT_METHOD, "os", "system", touch, "__call__"),
    }


def _plant_module(folder: Path, marker: Path) -> None:
    (folder / "jarvis_planted.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\nThing = dict\n"
    )


class _RunsOnUnpickle:
    """Unpickling this runs ``touch`` (what a hostile ``"pickle"`` record would hold)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def _typed(value: Any) -> list[str]:
    return ["msgpack", base64.b64encode(ormsgpack.packb(value)).decode("ascii")]


def _checkpoint(checkpoint_id: str, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "v": 4,
        "id": checkpoint_id,
        "ts": "2026-11-28T10:00:00+00:00",
        "channel_values": values,
        "channel_versions": {name: 1 for name in values},
        "versions_seen": {},
        "updated_channels": list(values),
    }


def _record(thread: Any, number: int, values: dict[str, Any]) -> dict[str, Any]:
    cid = f"1f0cd000-0000-6000-8000-{number:012d}"
    parent = f"1f0cd000-0000-6000-8000-{number - 1:012d}" if number else None
    return {
        "thread_id": thread,
        "checkpoint_ns": "",
        "checkpoint_id": cid,
        "parent_checkpoint_id": parent,
        "checkpoint": _typed(_checkpoint(cid, values)),
        "metadata": _typed({"source": "loop", "step": number}),
        "writes": [],
    }


def _export_file(path: Path, records: list[dict[str, Any]]) -> Path:
    lines = [HEADER, *records]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _import(workspace: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return run_process(["sessions", "import", str(path)], cwd=workspace)


def _session_ids(workspace: Path) -> list[str]:
    db = workspace / ".jarvis" / "sessions.sqlite"
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    except sqlite3.OperationalError:  # no table: nothing was ever written
        return []
    finally:
        conn.close()


def _one_error_line(result: subprocess.CompletedProcess[str], *names: str) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "Traceback" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    for name in names:
        assert name in errors[0], out


# -- finding: an import file cannot run code ---------------------------------------------


@pytest.mark.parametrize("name", list(_poisons(Path("m"))))
def test_an_import_file_naming_a_callable_runs_nothing(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "marker"
    _plant_module(workspace, marker)
    poison = _poisons(marker)[name]
    good = _record("fine", 0, {"task": "a plain task"})
    bad = _record("bad", 0, {"task": poison})
    path = _export_file(tmp_path / "crafted.jsonl", [good, bad])

    result = _import(workspace, path)

    _one_error_line(result, name.removesuffix(".__call__"), "'bad'")
    assert not marker.exists()
    assert _session_ids(workspace) == []  # the file is checked whole before anything is written


def test_a_pending_write_naming_a_callable_runs_nothing(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    record = _record("bad", 0, {"task": "a task"})
    record["writes"] = [["task-1", "messages", _typed(_poisons(marker)["os.system"])]]

    result = _import(workspace, _export_file(tmp_path / "crafted.jsonl", [record]))

    _one_error_line(result, "os.system")
    assert not marker.exists()


def test_a_pickle_record_is_never_unpickled(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    record = _record("pickled", 0, {"task": "a task"})
    data = pickle.dumps(_RunsOnUnpickle(marker))
    record["checkpoint"] = ["pickle", base64.b64encode(data).decode("ascii")]

    result = _import(workspace, _export_file(tmp_path / "crafted.jsonl", [record]))

    _one_error_line(result, "'pickle'", "'pickled'")
    assert not marker.exists()
    assert _session_ids(workspace) == []


# -- finding: a poisoned session store cannot run code -------------------------------------


def _raw(blob: bytes) -> Any:
    """msgpack decoded with its extensions left as they are (nothing rebuilt)."""
    return ormsgpack.unpackb(blob, ext_hook=lambda code, data: ormsgpack.Ext(code, data))


def _poison_checkpoint(workspace: Path, thread: str, poison: ormsgpack.Ext) -> None:
    """The session's latest checkpoint gets ``poison`` as its task."""
    conn = sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite")
    with conn:
        cid, blob = conn.execute(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
        checkpoint = _raw(blob)
        checkpoint["channel_values"]["task"] = poison
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?",
            (ormsgpack.packb(checkpoint), thread, cid),
        )
    conn.close()


def _poison_message(workspace: Path, poison: ormsgpack.Ext) -> None:
    """Every stored message of ``blobs/parts.sqlite`` becomes ``poison``."""
    conn = sqlite3.connect(workspace / ".jarvis" / "blobs" / "parts.sqlite")
    with conn:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] > 0
        conn.execute(
            "UPDATE messages SET kind = 'serde:msgpack', data = ?", (ormsgpack.packb(poison),)
        )
        conn.execute("UPDATE lists SET packed = NULL")  # read row by row
    conn.close()


def _finished_session(workspace: Path, tmp_path: Path, thread: str) -> str:
    """A finished session ``thread`` of five messages (a list of the compact store)."""
    script = _script(tmp_path, ["echo hi"], name=f"{thread}.yaml")
    done = run_process(_run(script, "--new-thread", thread), cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    return thread


@pytest.mark.parametrize("where", ["checkpoint", "parts"])
def test_a_poisoned_session_store_runs_nothing(workspace: Path, tmp_path: Path, where: str) -> None:
    thread = _finished_session(workspace, tmp_path, "poisoned")
    other = _finished_session(workspace, tmp_path, "other")
    marker = tmp_path / "marker"
    poison = _poisons(marker)["os.system"]
    if where == "checkpoint":
        _poison_checkpoint(workspace, thread, poison)
    else:
        _poison_message(workspace, poison)

    listed = run_process(["sessions", "list"], cwd=workspace)
    shown = run_process(["sessions", "show", thread], cwd=workspace)
    exported = run_process(["sessions", "export", str(tmp_path / "out.jsonl")], cwd=workspace)

    assert not marker.exists()
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "Traceback" not in listed.stdout + listed.stderr
    rows = {line.split("\t")[0]: line for line in listed.stdout.splitlines() if "\t" in line}
    assert "\tunreadable\t" in rows[thread], listed.stdout
    if where == "checkpoint":  # the other session is untouched and listed as ever
        assert "\tcompleted\t" in rows[other], listed.stdout
    _one_error_line(shown, "os.system")
    _one_error_line(exported, "os.system")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_poisoned_postgres_store_runs_nothing(
    workspace: Path, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", pg_url)
    thread = _finished_session(workspace, tmp_path, "poisoned")
    marker = tmp_path / "marker"
    with psycopg.connect(pg_url) as conn:
        changed = conn.execute(
            "UPDATE checkpoint_blobs SET type = 'msgpack', blob = %s "
            "WHERE thread_id = %s AND channel = 'messages'",
            (ormsgpack.packb(_poisons(marker)["os.system"]), thread),
        ).rowcount
    assert changed > 0

    shown = run_process(["sessions", "show", thread], cwd=workspace)
    crafted = _record("bad", 0, {"task": _poisons(marker)["subprocess.Popen"]})
    imported = _import(workspace, _export_file(tmp_path / "crafted.jsonl", [crafted]))

    _one_error_line(shown, "os.system")
    _one_error_line(imported, "subprocess.Popen")
    assert not marker.exists()


# -- finding: an import is whole per session; its ids follow --new-thread's rule ------------


@pytest.mark.parametrize("thread", ["../../etc", "two words", "", "-dash-first", "x" * 101, 42])
def test_imported_session_ids_follow_the_new_thread_rule(
    workspace: Path, tmp_path: Path, thread: Any
) -> None:
    records = [_record("fine", 0, {"task": "ok"}), _record(thread, 0, {"task": "a task"})]

    result = _import(workspace, _export_file(tmp_path / "ids.jsonl", records))

    _one_error_line(result, repr(thread))
    assert "not a usable session id" in result.stdout
    assert _session_ids(workspace) == []


def test_a_bad_record_in_a_later_session_imports_nothing(workspace: Path, tmp_path: Path) -> None:
    records = [_record("first", n, {"task": f"step {n}"}) for n in range(3)]
    records += [_record("second", n, {"task": f"step {n}"}) for n in range(3)]
    broken = _raw(base64.b64decode(records[4]["checkpoint"][1]))
    del broken["channel_versions"]
    records[4]["checkpoint"] = _typed(broken)

    result = _import(workspace, _export_file(tmp_path / "broken.jsonl", records))

    _one_error_line(result, "'second'", records[4]["checkpoint_id"])
    assert _session_ids(workspace) == []


BIG_TEXT = 3000  # over the compact store's threshold: each text is a row of parts.sqlite
PER_SESSION = 300


def _big_export(tmp_path: Path) -> Path:
    """Three sessions of ``PER_SESSION`` checkpoints, each with a text of its own."""
    records = []
    for session in ("s1", "s2", "s3"):
        for n in range(PER_SESSION):
            text = f"{session}-{n:04d} " + "x" * BIG_TEXT
            message = {
                "content": text,
                "type": "human",
                "id": f"{session}-{n}",
            }
            human = _ext(5, "langchain_core.messages.human", "HumanMessage", message, "")
            records.append(_record(session, n, {"messages": [human], "task": session}))
    return _export_file(tmp_path / "big.jsonl", records)


class _Store:
    """What a test reads of the store ``sessions import`` writes: SQLite files or PostgreSQL."""

    def __init__(self, workspace: Path, url: str | None) -> None:
        self.workspace, self.url = workspace, url

    def _rows(self, sqlite_file: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        if self.url:
            import psycopg

            query = sql.replace("FROM texts", "FROM jarvis_texts").replace("?", "%s")
            with psycopg.connect(self.url) as conn:
                try:
                    return [tuple(r) for r in conn.execute(query, params).fetchall()]
                except psycopg.errors.UndefinedTable:  # not set up yet
                    return []
        path = self.workspace / ".jarvis" / sqlite_file
        if not path.exists():
            return []
        conn = sqlite3.connect(path, timeout=30)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:  # no table yet
            return []
        finally:
            conn.close()

    def stored_texts(self, prefix: str) -> int:
        """Texts of the compact store's parts that start with ``prefix``."""
        pattern: Any = f"{prefix}%".encode() if self.url else f"{prefix}%"
        rows = self._rows(
            "blobs/parts.sqlite", "SELECT COUNT(*) FROM texts WHERE body LIKE ?", pattern
        )
        return int(rows[0][0]) if rows else 0

    def checkpoints(self) -> dict[str, int]:
        """Checkpoints per session."""
        sql = "SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id"
        return {str(t): int(n) for t, n in self._rows("sessions.sqlite", sql)}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_kill_9_during_an_import_leaves_whole_sessions_and_a_retry_completes(
    workspace: Path,
    tmp_path: Path,
    kind: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = request.getfixturevalue("pg_url") if kind == "postgres" else None
    if url:
        monkeypatch.setenv("JARVIS_CHECKPOINT_URL", url)
    store = _Store(workspace, url)
    path = _big_export(tmp_path)
    proc = subprocess.Popen(
        [*jarvis_cmd(), "sessions", "import", str(path)],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        # the texts of a checkpoint are stored (and committed) just before it: once some
        # of s2's are there, s2 is being written
        while store.stored_texts("s2-") < 10:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the import never reached the second session"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
    assert store.stored_texts("s2-") < PER_SESSION  # killed in the middle of s2

    assert store.checkpoints() == {"s1": PER_SESSION}

    retried = _import(workspace, path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert f"imported 2 sessions ({2 * PER_SESSION} checkpoints)" in retried.stdout
    assert "skipped 1 sessions this store already has: s1" in retried.stdout
    assert store.checkpoints() == {s: PER_SESSION for s in ("s1", "s2", "s3")}


# -- finding: unlock does not free the lock of a live run here -----------------------------


def test_unlock_refuses_the_lock_of_a_live_run_on_this_host(
    workspace: Path, tmp_path: Path
) -> None:
    thread = _new_thread(workspace, tmp_path)
    holder = Run(_run(_held_script(tmp_path, HOLD), "--thread", thread), workspace)
    _wait_file(workspace / "holding", holder)

    refused = run_process(["sessions", "unlock", thread], cwd=workspace)

    _one_error_line(refused, f"pid {holder.pid} on host {HOST}", thread)
    assert _locks(workspace, thread) == [(holder.pid, HOST)]
    (workspace / "release").touch()
    assert holder.finish() == 0, holder.output
    assert _log(workspace, "steps.txt") == ["A", "A-done"]
    assert _locks(workspace, thread) == []


def test_unlock_on_a_store_with_a_broken_lock_table_is_one_clear_error(
    workspace: Path, tmp_path: Path
) -> None:
    thread = _new_thread(workspace, tmp_path)
    with sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite") as db:
        db.executescript("DROP TABLE thread_locks; CREATE TABLE thread_locks (x);")

    refused = run_process(["sessions", "unlock", thread], cwd=workspace)

    _one_error_line(refused, f"cannot unlock session {thread}", "no such column")


def test_an_import_does_not_replace_a_session_a_live_run_holds(
    workspace: Path, tmp_path: Path
) -> None:
    thread = _new_thread(workspace, tmp_path)
    path = tmp_path / "export.jsonl"
    exported = run_process(["sessions", "export", str(path)], cwd=workspace)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    holder = Run(_run(_held_script(tmp_path, HOLD), "--thread", thread), workspace)
    _wait_file(workspace / "holding", holder)
    before = _Store(workspace, None).checkpoints()

    replaced = run_process(["sessions", "import", "--replace", str(path)], cwd=workspace)

    _one_error_line(replaced, f"pid {holder.pid} on host {HOST}", repr(thread))
    assert _Store(workspace, None).checkpoints() == before
    (workspace / "release").touch()
    assert holder.finish() == 0, holder.output
    assert _log(workspace, "steps.txt") == ["A", "A-done"]
