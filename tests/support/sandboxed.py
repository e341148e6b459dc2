"""Real ``jarvis run`` processes whose scripted model runs one script: the sandbox's tests.

A test picks the sandbox level with :func:`use_level` (``auto``: whatever the machine
offers, ``landlock`` forced, ``off`` for comparison), writes the user's own settings with
:func:`user_config` and starts a run with :func:`run_script`. The run's
:class:`ScriptRun` holds what the user and the model saw: the CLI's exit code and output
and the tool result as the session store keeps it.
"""

from __future__ import annotations

import base64
import binascii
import re
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_process, write_script

MARKER = "!!!COMPLETE!!!"


@dataclass
class ScriptRun:
    """One ``jarvis run`` whose model called ``execute_script`` once."""

    done: subprocess.CompletedProcess[str]
    result: str
    """The tool result the model got, read back from the session store."""
    seconds: float

    @property
    def output(self) -> str:
        """What the CLI printed (stdout and stderr)."""
        return self.done.stdout + self.done.stderr


def use_level(monkeypatch: pytest.MonkeyPatch, level: str) -> str:
    """Run the next runs at ``level``; the level ``auto`` resolves to here.

    ``landlock`` is forced through ``JARVIS_SANDBOX``; a level this machine lacks skips
    the test with the probe's reason.
    """
    from jarvis_graph.sandbox.probe import choose

    choice = choose(level)
    if choice.level == "none":
        pytest.skip(f"sandbox level {level!r} does not work here: {choice.reason}")
    if level != "auto":
        monkeypatch.setenv("JARVIS_SANDBOX", level)
    return choice.level


def user_config(home: Path, **settings: Any) -> Path:
    """Add ``settings`` to the user's own ``~/.jarvis/config.yaml`` (no trust needed)."""
    path = home / ".jarvis" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    current = yaml.safe_load(path.read_text()) if path.exists() else {}
    path.write_text(yaml.safe_dump({**(current or {}), **settings}), encoding="utf-8")
    return path


def run_script(
    ws: Path, tmp_path: Path, script: str, task: str = "run the script", timeout: float = 120
) -> ScriptRun:
    """``jarvis run -n --yes`` in ``ws`` whose model runs ``script`` with execute_script."""
    call = {"name": "execute_script", "args": {"script": script}}
    turns: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": f"Ran it. {MARKER}"}]
    path = write_script(tmp_path / f"model-{time.monotonic_ns()}.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(ws), "--platform", "scripted", "--script", str(path)]
    started = time.monotonic()
    done = run_process([*args, task], cwd=ws, timeout=timeout)
    seconds = time.monotonic() - started
    results = tool_results(ws) if (ws / ".jarvis" / "sessions.sqlite").exists() else []
    return ScriptRun(done, results[-1] if results else "", seconds)


def tool_results(ws: Path) -> list[str]:
    """What the tools answered in the newest session of ``ws``, as the store keeps it."""
    from langchain_core.messages import ToolMessage

    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    with open_checkpointer(ws) as saver:  # the CLI's session store, as it reads it
        row = saver.conn.execute(  # type: ignore[attr-defined]
            "SELECT thread_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return []
        graph = build_agent_graph().compile(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": row[0]}}).values
        return [str(m.content) for m in values["messages"] if isinstance(m, ToolMessage)]


def workspace_files(ws: Path) -> dict[str, bytes]:
    """Every file under the workspace (the session store's blobs unpacked), by path."""
    found = {}
    for path in sorted(ws.rglob("*")):
        if path.is_file() and not path.is_symlink():
            raw = path.read_bytes()
            found[str(path.relative_to(ws))] = zlib.decompress(raw) if path.suffix == ".z" else raw
    return found


def readable_forms(text: bytes) -> bytes:
    """``text`` with every base64 and hex run in it decoded too, at every alignment.

    Line breaks (raw or escaped in JSON) and the spaces between hex bytes are dropped
    first, so wrapped output is read whole, as a person reading it would.
    """
    flat = re.sub(rb"\\[rn]|[\r\n]", b"", text)
    found = [flat]
    for run in re.findall(rb"[A-Za-z0-9+/_-]{8,}={0,2}", flat):
        run = run.replace(b"-", b"+").replace(b"_", b"/").rstrip(b"=")
        for shift in range(4):  # the secret may start at any character of a group
            part = run[shift:]
            found.append(base64.b64decode(part[: len(part) // 4 * 4]))
    for run in re.findall(rb"(?:[0-9A-Fa-f]{2} ?){4,}", flat):
        digits = run.replace(b" ", b"")
        found += [binascii.unhexlify(digits), binascii.unhexlify(digits[1:][: len(digits) - 2])]
    return b"\n".join(found)


def seen_anywhere(secret: str, run: ScriptRun, ws: Path) -> list[str]:
    """Where ``secret`` (plain, base64 or hex) can be read after ``run``: [] if nowhere.

    The places: the tool result, the CLI's output and each file under the workspace
    (what the script wrote there, the session store, the saved tool outputs).
    """
    places = {"the tool result": run.result.encode(), "the CLI output": run.output.encode()}
    places |= {f"workspace file {name}": data for name, data in workspace_files(ws).items()}
    return [name for name, data in places.items() if secret.encode() in readable_forms(data)]
