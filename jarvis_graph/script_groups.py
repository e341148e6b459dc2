"""Scripts a run has started, recorded where a resumed run in another process can find them.

``execute_script`` runs each script in a process group of its own (so a timeout or Ctrl-C
ends the whole tree). A run killed with ``kill -9`` cannot end it: the script goes on, and
a resumed run would start the same call again beside it. So each running script is
recorded in a ``running_scripts`` table of the session store's SQLite file (for other
stores, ``<workspace>/.jarvis/running_scripts.sqlite``), keyed by thread, checkpoint
namespace and tool call id, with its process group, the leader's start time (a pid is
reused after its process ends) and host. The record is removed when the script ends.

A run that takes a thread over ends every group still alive from its records
(:func:`end_orphans`: SIGTERM, then SIGKILL); before a call runs again,
:func:`before_run` does the same for that call and tells the model what happened.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from jarvis_graph.checkpointing import sqlite_path
from jarvis_graph.owned_paths import owned_file, split_owned
from jarvis_graph.thread_lock import process_start, process_stat

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS running_scripts (thread_id TEXT NOT NULL, "
    "checkpoint_ns TEXT NOT NULL, tool_call_id TEXT NOT NULL, pgid INTEGER NOT NULL, "
    "start TEXT NOT NULL, host TEXT NOT NULL, since REAL NOT NULL, ended TEXT NOT NULL, "
    "PRIMARY KEY (thread_id, checkpoint_ns, tool_call_id))"
)
logger = logging.getLogger(__name__)
ENV_VAR = "JARVIS_SCRIPT_THREAD"
TERM_WAIT = 2.0  # seconds a group gets to end after SIGTERM before SIGKILL


def scripts_db(workspace: Path, checkpoint_url: str | None) -> Path:
    """The SQLite file that holds the records for a workspace's session store."""
    return sqlite_path(checkpoint_url, workspace) or (
        workspace / ".jarvis" / "running_scripts.sqlite"
    )


@dataclass(frozen=True)
class ScriptCall:
    """Where one tool call's script is recorded."""

    db: Path
    thread_id: str
    checkpoint_ns: str
    tool_call_id: str


def current_call(workspace: Path, checkpoint_url: str | None) -> ScriptCall | None:
    """The tool call running now in a graph run on a thread, or ``None`` outside one."""
    from langgraph.config import get_config

    try:
        config = get_config()
    except RuntimeError:
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    call_id = (config.get("metadata") or {}).get("jarvis_tool_call_id")
    if not thread or not call_id:
        return None
    ns = str((config.get("configurable") or {}).get("checkpoint_ns") or "")
    return ScriptCall(scripts_db(workspace, checkpoint_url), str(thread), ns, str(call_id))


def script_env(call: ScriptCall) -> dict[str, str]:
    """The variable that marks a script, and every process it starts, as its thread's.

    A kill -9 can land after the script started and before its record was written; the
    next run still finds it by this mark (see :func:`end_orphans`).
    """
    return {ENV_VAR: _thread_token(call.db, call.thread_id)}


def _thread_token(db: Path, thread_id: str) -> str:
    return hashlib.sha256(f"{db.resolve()}\0{thread_id}".encode()).hexdigest()[:16]


def _marked_groups(token: str) -> set[int]:
    """Process groups of the live processes that carry ``token`` in their environment."""
    needle = f"{ENV_VAR}={token}".encode()
    if not Path("/proc/self/environ").exists():
        return set()
    with os.scandir("/proc") as entries:
        names = [entry.name for entry in entries if entry.name.isdigit()]
    groups = set()
    for name in names:
        try:
            if needle not in Path(f"/proc/{name}/environ").read_bytes().split(b"\0"):
                continue
        except OSError:  # gone, or another user's process
            continue
        fields = process_stat(name)
        if len(fields) > 2 and fields[0] not in ("Z", "X"):
            groups.add(int(fields[2]))
    return groups


def _connect(db: Path) -> sqlite3.Connection:
    owned_file(*split_owned(db))  # Jarvis' own (under .jarvis): private, through no link
    conn = sqlite3.connect(str(db), timeout=30, isolation_level=None)
    conn.execute(_SCHEMA)
    return conn


def _write(db: Path, sql: str, params: tuple[object, ...]) -> None:
    # A record that cannot be written must not fail the tool call it describes.
    try:
        with contextlib.closing(_connect(db)) as conn:
            conn.execute(sql, params)
    except (sqlite3.Error, OSError):
        logger.warning("could not update the running-script records in %s", db, exc_info=True)


def group_alive(pgid: int, start: str) -> bool:
    """Whether the process group ``pgid`` whose leader started at ``start`` still runs."""
    leader = process_start(pgid)
    if leader and start and leader != start:
        return False  # the number now names another process: the old group is gone
    if not Path("/proc/self/stat").exists():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    with os.scandir("/proc") as entries:
        return any(_live_member(entry.name, pgid) for entry in entries)


def _live_member(name: str, pgid: int) -> bool:
    """Whether /proc entry ``name`` is a process of group ``pgid`` (zombies are ended)."""
    if not name.isdigit():
        return False
    fields = process_stat(name)
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")


def end_group(pgid: int, start: str) -> str:
    """End the group (SIGTERM, then SIGKILL); the signal that did, ``""`` if none was needed."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not group_alive(pgid, start):
            return "" if sig == signal.SIGTERM else "SIGTERM"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + TERM_WAIT
        while group_alive(pgid, start) and time.monotonic() < deadline:
            time.sleep(0.05)
    return "SIGKILL" if not group_alive(pgid, start) else "SIGKILL (still running)"


def before_run(call: ScriptCall) -> str:
    """End what an earlier, killed run of this call left running; a note for the model.

    Returns:
        ``""`` when no earlier copy ran, else one line saying what was done.
    """
    try:
        with contextlib.closing(_connect(call.db)) as conn:
            row = conn.execute(
                "SELECT pgid, start, host, since, ended FROM running_scripts WHERE thread_id = ? "
                "AND checkpoint_ns = ? AND tool_call_id = ?",
                (call.thread_id, call.checkpoint_ns, call.tool_call_id),
            ).fetchone()
    except (sqlite3.Error, OSError):
        logger.warning("could not read the running-script records in %s", call.db, exc_info=True)
        return ""
    if row is None:
        return ""
    pgid, start, host, since, ended = int(row[0]), str(row[1]), str(row[2]), row[3], str(row[4])
    when = time.strftime("%H:%M:%S", time.localtime(since))
    if host != socket.gethostname():
        return (
            f"note: a copy of this call started at {when} by a run on host {host} may still "
            "be running there (it cannot be ended from here); this run starts it again."
        )
    if not ended and group_alive(pgid, start):
        ended = end_group(pgid, start)
    if not ended:
        return ""  # it ended with its run (Ctrl-C) before any result was recorded
    return (
        f"note: a copy of this call started at {when} by an earlier run that was stopped "
        f"was still running (process group {pgid}); it was ended ({ended}) before this run "
        "started the script again, so its effects may be partly done."
    )


def started(call: ScriptCall, pid: int) -> None:
    """Record the running script (its group is ``pid``: it leads a session of its own)."""
    _write(
        call.db,
        "INSERT OR REPLACE INTO running_scripts VALUES (?, ?, ?, ?, ?, ?, ?, '')",
        (
            call.thread_id,
            call.checkpoint_ns,
            call.tool_call_id,
            pid,
            process_start(pid),
            socket.gethostname(),
            time.time(),
        ),
    )


def finished(call: ScriptCall, pid: int) -> None:
    """The script has ended: drop its record."""
    _write(
        call.db,
        "DELETE FROM running_scripts WHERE thread_id = ? AND checkpoint_ns = ? "
        "AND tool_call_id = ? AND pgid = ?",
        (call.thread_id, call.checkpoint_ns, call.tool_call_id, pid),
    )


def end_orphans(db: Path, thread_id: str) -> list[str]:
    """End every group of ``thread_id``'s scripts still alive on this host.

    Call it holding the thread: no live run can then own them, so a live group is left
    over from a run that was killed. The recorded ones keep their record, marked, so that
    the call's next run tells the model; a script killed before its record was written is
    found by the mark in its environment (:func:`script_env`).

    Returns:
        One line per group ended.
    """
    if not db.exists():
        return []
    with contextlib.closing(_connect(db)) as conn:
        lines = _end_recorded(conn, thread_id)
    for pgid in sorted(_marked_groups(_thread_token(db, thread_id))):
        how = end_group(pgid, "")
        lines.append(
            f"ended a script the stopped run left running: process group {pgid}, started "
            f"just before the run was stopped ({how})"
        )
    return lines


def _end_recorded(conn: sqlite3.Connection, thread_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT checkpoint_ns, tool_call_id, pgid, start, since FROM running_scripts "
        "WHERE thread_id = ? AND host = ? AND ended = ''",
        (thread_id, socket.gethostname()),
    ).fetchall()
    lines = []
    where = "WHERE thread_id = ? AND checkpoint_ns = ? AND tool_call_id = ?"
    for ns, call_id, pgid, start, since in rows:
        if not group_alive(int(pgid), str(start)):  # ended with its run: nothing to say
            conn.execute(f"DELETE FROM running_scripts {where}", (thread_id, ns, call_id))
            continue
        how = end_group(int(pgid), str(start))
        conn.execute(f"UPDATE running_scripts SET ended = ? {where}", (how, thread_id, ns, call_id))
        when = time.strftime("%H:%M:%S", time.localtime(since))
        lines.append(
            f"ended a script the stopped run left running: tool call {call_id}, "
            f"process group {pgid}, running since {when} ({how})"
        )
    return lines
