"""Jarvis' own files in a workspace: private, and never written through a link.

Boundary: the folders and files Jarvis creates for itself under a workspace it was given
(``.jarvis/`` with ``sessions.sqlite``, ``tool_outputs/``, ``memory/``, and the line in
``.git/info/exclude``). A cloned repository can ship any of these folders as a symbolic
link to a place outside the workspace. Guaranteed: Jarvis refuses to write through such a
link (a clear one-line error, or a note to the model for a tool output) and nothing is
written where the link points; what Jarvis creates is private (folders 0700, files 0600,
the SQLite stores' ``-wal``/``-shm`` included).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from jarvis_graph.gitflow.repo import GitError, ensure_excluded
from jarvis_graph.owned_paths import OwnedPathError, owned_dir, write_owned
from tests.support.cli import run_process, write_script
from tests.support.git import make_repo, set_identity

MARKER = "!!!COMPLETE!!!"
BIG = "python3 -c \"print('x' * 60000)\""
"""A script whose output is over the tool output limit: saved to ``.jarvis/tool_outputs``."""


def run(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], task: str = "go") -> Any:
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), task]
    return run_process(args, cwd=ws)


def big_output_turns() -> list[dict[str, Any]]:
    call = {"name": "execute_script", "args": {"script": BIG}}
    return [{"tool_calls": [call]}, {"text": f"done {MARKER}"}]


def tool_messages(ws: Path) -> str:
    """The tool messages of every session of ``ws``, as the session store holds them."""
    from jarvis_graph.checkpointing import list_threads
    from jarvis_graph.cli.driver import open_agent, thread_config

    texts = []
    with open_agent({"workspace": str(ws)}) as graph:
        for row in list_threads(graph.checkpointer):
            state = graph.get_state(thread_config(row.thread_id))
            texts += [str(m.content) for m in state.values["messages"] if m.type == "tool"]
    return "\n".join(texts)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def outside_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def test_a_tool_outputs_link_to_outside_is_not_written_through(
    workspace: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "tool_outputs").symlink_to(outside)
    proc = run(workspace, tmp_path, big_output_turns())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(outside.iterdir()) == []
    told = tool_messages(workspace)  # what the model was told instead of a file's path
    assert "was not saved" in told and "is a symbolic link" in told


def test_a_jarvis_folder_link_to_outside_is_refused_with_nothing_written(
    workspace: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (workspace / ".jarvis").symlink_to(outside)
    proc = run(workspace, tmp_path, big_output_turns())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert list(outside.iterdir()) == []
    assert "is a symbolic link" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_blobs_folder_link_to_outside_is_refused_before_the_run(
    workspace: Path, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "blobs").symlink_to(outside)
    proc = run(workspace, tmp_path, big_output_turns())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert list(outside.iterdir()) == []
    assert "is a symbolic link" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_memory_folder_link_to_outside_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "memory").symlink_to(outside)
    proc = run_process(["memory", "save", "a fact", "-w", str(workspace)], cwd=workspace)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert list(outside.iterdir()) == []
    assert "is a symbolic link" in proc.stdout + proc.stderr


def test_a_git_info_link_to_outside_gets_no_exclude_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    outside = outside_folder(tmp_path)
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    info = repo / ".git" / "info"
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    info.symlink_to(outside)
    with pytest.raises(GitError, match="is a symbolic link"):
        ensure_excluded(repo)
    assert list(outside.iterdir()) == []


def test_the_exclude_line_is_still_added_to_a_real_exclude_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")  # no newline at the end
    assert ensure_excluded(repo) == exclude
    assert exclude.read_text() == "*.log\n.jarvis/\n"


def test_a_file_link_in_place_of_an_owned_file_is_refused(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    target = outside / "victim.txt"
    target.write_text("keep me")
    owned_dir(tmp_path, ".jarvis/tool_outputs")
    (tmp_path / ".jarvis" / "tool_outputs" / "out.txt").symlink_to(target)
    with pytest.raises(OwnedPathError, match="is a symbolic link"):
        write_owned(tmp_path, ".jarvis/tool_outputs/out.txt", "overwritten")
    assert target.read_text() == "keep me"


def test_what_jarvis_creates_is_private(workspace: Path, tmp_path: Path) -> None:
    turns = big_output_turns()
    turns[-1] = {"tool_calls": [{"name": "save_memory", "args": {"content": "a fact"}}]}
    turns.append({"text": f"done {MARKER}"})
    proc = run(workspace, tmp_path, turns)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jarvis = workspace / ".jarvis"
    folders = [jarvis, jarvis / "tool_outputs", jarvis / "memory", jarvis / "blobs"]
    files = [*jarvis.glob("sessions.sqlite*"), *(jarvis / "tool_outputs").iterdir()]
    files += list((jarvis / "blobs").glob("parts.sqlite*"))
    files += list((jarvis / "memory").glob("store.sqlite*"))
    assert len(files) >= 4, files
    assert {p.name: oct(mode(p)) for p in folders} == {p.name: "0o700" for p in folders}
    assert {p.name: oct(mode(p)) for p in files} == {p.name: "0o600" for p in files}


def test_a_store_left_readable_by_others_is_made_private(workspace: Path, tmp_path: Path) -> None:
    jarvis = workspace / ".jarvis"
    jarvis.mkdir()
    (jarvis / "sessions.sqlite").touch(mode=0o644)
    os.chmod(jarvis / "sessions.sqlite", 0o644)  # as an older Jarvis (or the umask) left it
    proc = run(workspace, tmp_path, [{"text": f"done {MARKER}"}])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert oct(mode(jarvis / "sessions.sqlite")) == "0o600"


def test_checking_a_store_another_connection_holds_keeps_its_locks(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops this process's POSIX locks on it (SQLite's)."""
    import sqlite3
    import subprocess
    import sys

    from jarvis_graph.owned_paths import owned_file

    db = owned_file(tmp_path, ".jarvis/sessions.sqlite")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN IMMEDIATE")  # a write lock, as a session being saved holds
    conn.execute("INSERT INTO t VALUES (1)")
    owned_file(tmp_path, ".jarvis/sessions.sqlite")  # a second opener in the same process
    other = (
        "import sqlite3, sys; sqlite3.connect(sys.argv[1], timeout=0).execute('BEGIN IMMEDIATE')"
    )
    writer = subprocess.run([sys.executable, "-c", other, str(db)], capture_output=True, text=True)
    conn.execute("COMMIT")
    assert writer.returncode != 0 and "database is locked" in writer.stderr


def _user_mcp_server(name: str, code: str) -> None:
    """A stdio MCP server in the user's own mcp.json (trusted in every workspace)."""
    home = Path(os.environ["JARVIS_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": ["-c", code]}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {name: server}}), encoding="utf-8")


def test_a_planted_mcp_log_link_is_never_read_back_into_an_error(
    workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = TOPSECRET-4711\n", encoding="utf-8")
    (workspace / ".jarvis" / "mcp_logs").mkdir(parents=True)
    (workspace / ".jarvis" / "mcp_logs" / "srv.log").symlink_to(secret)
    _user_mcp_server("srv", "print(1)")
    proc = run_process(["mcp", "list", "-w", str(workspace)], workspace)
    seen = proc.stdout + proc.stderr
    assert "symbolic link" in seen, seen
    assert "TOPSECRET-4711" not in seen


def test_a_failed_mcp_server_still_shows_the_end_of_its_own_log(workspace: Path) -> None:
    code = "import sys; sys.stderr.write('x' * 200000 + '\\nlast words\\n'); sys.exit(3)"
    _user_mcp_server("srv", code)
    proc = run_process(["mcp", "list", "-w", str(workspace)], workspace)
    seen = " ".join((proc.stdout + proc.stderr).split())
    assert "its last output:" in seen and "| last words; full log:" in seen, seen
    assert "x" * 5000 not in seen.replace(" ", "")  # the tail only, not 200 kB of log


def test_a_planted_fifo_in_place_of_an_owned_file_is_refused_not_waited_on(
    workspace: Path,
) -> None:
    (workspace / ".jarvis" / "mcp_logs").mkdir(parents=True)
    os.mkfifo(workspace / ".jarvis" / "mcp_logs" / "srv.log")  # no one ever reads it
    _user_mcp_server("srv", "print(1)")
    proc = run_process(["mcp", "list", "-w", str(workspace)], workspace, timeout=60)
    seen = " ".join((proc.stdout + proc.stderr).split())
    assert "srv.log is not a regular file" in seen, seen
