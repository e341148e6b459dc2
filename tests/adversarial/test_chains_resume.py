"""A tool chain killed with kill -9 resumes at the step that did not finish.

Real processes on a real SQLite session store: the steps before the kill are not run
again, the killed step runs again (its script left running is ended), the rest follow.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.test_integrity import Run
from tests.support.cli import run_process, write_script

# The second step blocks the first time (until killed) and is quick when run again.
SLOW = """\
description: Three steps, the second slow the first time it runs.
steps:
  - id: one
    tool: execute_script
    args: {script: "echo one >> log.txt"}
  - id: two
    tool: execute_script
    args:
      script: >-
        if [ -f started ]; then echo resumed >> log.txt;
        else touch started; sleep 60; echo not-killed >> log.txt; fi
  - id: three
    tool: execute_script
    args: {script: "echo three >> log.txt"}
"""


@pytest.fixture
def chain_ws(workspace: Path) -> Path:
    folder = workspace / ".jarvis" / "chains"
    folder.mkdir(parents=True)
    (folder / "slow.yaml").write_text(SLOW)
    return workspace


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    started: list[Run] = []
    yield started
    for run in started:
        run.close()


def _killed_at_step_two(run: Run, ws: Path) -> None:
    deadline = time.monotonic() + 90
    while not (ws / "started").exists():
        assert run.proc.poll() is None, run.output
        assert time.monotonic() < deadline, run.output
        time.sleep(0.05)
    run.kill9()
    assert _log(ws) == ["one"]


def _log(ws: Path) -> list[str]:
    path = ws / "log.txt"
    return path.read_text().split() if path.exists() else []


def test_a_chain_called_by_the_model_resumes_with_its_run(
    chain_ws: Path, tmp_path: Path, runs: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_SANDBOX", "off")  # the killed run's script outlives it
    script = write_script(
        tmp_path / "s.yaml",
        [{"tool_calls": [{"name": "slow", "args": {}}]}, {"text": "Done. !!!COMPLETE!!!"}],
    )
    run = Run(
        ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), "go"], chain_ws
    )
    runs.append(run)
    thread = run.session()
    _killed_at_step_two(run, chain_ws)

    resumed = run_process(["sessions", "resume", thread, "-n", "--yes"], cwd=chain_ws)

    out = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, out
    assert _log(chain_ws) == ["one", "resumed", "three"]  # step one was not run again
    assert "ended a script the stopped run left running: tool call chain-slow-two-" in out
    assert "Chain slow completed: one succeeded, two succeeded, three succeeded." in out
    tree = run_process(["sessions", "show", thread, "--tree"], cwd=chain_ws)
    assert "└ chain slow · completed · one succeeded, two succeeded, three succeeded" in tree.stdout


@pytest.mark.parametrize("command", [["chains", "resume"], ["sessions", "resume"]])
def test_a_chain_run_by_hand_resumes_at_the_step_that_did_not_finish(
    chain_ws: Path, runs: list[Run], command: list[str]
) -> None:
    run = Run(["chains", "run", "slow", "--yes"], chain_ws)
    runs.append(run)
    thread = run.wait_for(r"chain slow · session (\S+)").group(1)
    _killed_at_step_two(run, chain_ws)

    resumed = run_process([*command, thread, "--yes"], cwd=chain_ws)

    out = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, out
    assert _log(chain_ws) == ["one", "resumed", "three"]
    assert "✓ one" not in out  # done before the kill: not run, not printed again
    assert "✓ two (execute_script) succeeded\n✓ three (execute_script) succeeded" in out
    assert "Chain slow completed" in out


def test_resuming_something_that_is_not_a_chain_run_is_refused(chain_ws: Path) -> None:
    done = run_process(["chains", "resume", "no-such-session"], cwd=chain_ws)

    assert done.returncode == 2
    assert "error: no-such-session is not a chain run of this project" in done.stderr
