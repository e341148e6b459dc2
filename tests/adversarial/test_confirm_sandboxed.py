"""``confirm: sandboxed``: a script confined to the workspace runs unasked; more asks.

Boundary: the approval policy against what a call can reach. A script that runs at a
level keeping it inside the workspace with no network (bwrap: ``.git/hooks`` and
``.jarvis/`` pinned too) cannot harm anything outside, so it runs without a question. A
call asking for the network, a machine where only Landlock works (a script there can
write ``.git/hooks``, which the user's git runs later), or a setting opening the network
still needs the user's yes. Without a terminal (``-n``) a call that needs it is declined.

Real ``jarvis run`` processes with a scripted model; the evidence is a file the script
writes into the workspace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_process, write_script

MARKER = "!!!COMPLETE!!!"
DONE = {"text": f"done {MARKER}"}


def _run(workspace: Path, tmp_path: Path, args: dict[str, Any], **env: str) -> Any:
    call = {"name": "execute_script", "args": args}
    script = write_script(tmp_path / "script.yaml", [{"tool_calls": [call]}, DONE])
    cmd = ["run", "--platform", "scripted", "--script", str(script), "-n"]
    cmd += ["--confirm", "sandboxed", "do the task"]
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return run_process(cmd, cwd=workspace)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_a_confined_script_runs_without_asking(workspace: Path, tmp_path: Path) -> None:
    done = _run(workspace, tmp_path, {"script": "echo built > out.txt"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (workspace / "out.txt").read_text() == "built\n"


def test_a_script_asking_for_the_network_is_asked(workspace: Path, tmp_path: Path) -> None:
    done = _run(workspace, tmp_path, {"script": "echo built > out.txt", "network": True})
    assert not (workspace / "out.txt").exists(), done.stdout
    assert "declined" in done.stdout.lower() or "not run" in done.stdout.lower(), done.stdout


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("JARVIS_SANDBOX", "landlock"),
        ("JARVIS_SANDBOX", "off"),
        ("JARVIS_SANDBOX_NETWORK", "allow"),
    ],
)
def test_a_script_is_asked_where_the_sandbox_does_not_contain_it(
    workspace: Path, tmp_path: Path, variable: str, value: str
) -> None:
    done = _run(workspace, tmp_path, {"script": "echo built > out.txt"}, **{variable: value})
    assert not (workspace / "out.txt").exists(), done.stdout
