"""Another process of the same user cannot read a Jarvis process's environment or memory.

Boundary: the keys in a running Jarvis process (its environment, its memory). Every Jarvis
entry point that holds keys (the ``jarvis`` command, and a server process that loads the
project's graphs, as ``langgraph dev`` does) makes its process non-dumpable at start, so
``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` are refused to any process without
``CAP_SYS_PTRACE``, including one of the same user (a script the model started that
escaped its sandbox, or any other program the user runs).

The tests run the target and the reader with no capabilities (their bounding set
dropped before exec): for root that is what a plain user's processes are, so the kernel
applies the same check; a non-root suite needs no dropping. A plain Python process in
the same set-up is readable, which shows the check would see a dumpable Jarvis.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import jarvis_cmd, write_script

KEY = "sk-dump-0123456789abcdef"
PR_CAPBSET_DROP = 24
CAP_SETPCAP, CAP_SYS_PTRACE = 8, 19


def _effective_capabilities() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


_CAPS = _effective_capabilities() if Path("/proc/self/status").exists() else 0
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's"),
    pytest.mark.skipif(
        bool(_CAPS >> CAP_SYS_PTRACE & 1) and not _CAPS >> CAP_SETPCAP & 1,
        reason="CAP_SYS_PTRACE reads any process, and without CAP_SETPCAP it cannot be dropped",
    ),
]


def drop_capabilities() -> None:
    """Run the next exec with no capabilities (a no-op for a process that has none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # fails past the last capability
        cap += 1


def start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """``args`` as a process of the same user, no capabilities, with the key in its environment."""
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=drop_capabilities,
    )


READER = """
import sys
for name in ("environ", "mem"):
    try:
        with open(f"/proc/{sys.argv[1]}/{name}", "rb") as f:
            f.read(1 << 16) if name == "environ" else None
            print(name, "read")
    except PermissionError:
        print(name, "refused")
"""


def read_as_peer(pid: int) -> str:
    """What another process of the same user, without capabilities, can open of ``pid``."""
    done = subprocess.run(
        [sys.executable, "-c", READER, str(pid)],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=drop_capabilities,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait(timeout=30)
    if proc.stdout is not None:
        proc.stdout.close()


def test_a_plain_process_of_the_user_is_readable(tmp_path: Path) -> None:
    """The control: without hardening the reader gets the key, so the checks below can fail."""
    ready = tmp_path / "ready"
    code = f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(60)"
    proc = start([sys.executable, "-c", code], tmp_path)
    try:
        wait_for(ready, proc)
        assert read_as_peer(proc.pid) == "environ read\nmem read\n"
    finally:
        stop(proc)


def test_a_running_jarvis_process_is_not_readable(workspace: Path, tmp_path: Path) -> None:
    """A ``jarvis run`` waiting on its model: its environment and memory are refused."""
    turns = [{"text": "thinking", "delay": 60}]
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(workspace), "--platform", "scripted"]
    proc = start([*jarvis_cmd(), *args, "--script", str(script), "wait"], workspace)
    try:
        wait_for(workspace / ".jarvis" / "sessions.sqlite", proc)  # the run is under way
        assert read_as_peer(proc.pid) == "environ refused\nmem refused\n"
    finally:
        stop(proc)


def test_a_server_process_loading_the_graphs_is_not_readable(tmp_path: Path) -> None:
    """``langgraph dev`` (and ``jarvis ui``'s server) import the graphs: that hardens them."""
    ready = tmp_path / "ready"
    code = (
        "import pathlib, time, jarvis_graph.graphs; "
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(60)"
    )
    proc = start([sys.executable, "-c", code], tmp_path)
    try:
        wait_for(ready, proc)
        assert read_as_peer(proc.pid) == "environ refused\nmem refused\n"
    finally:
        stop(proc)
