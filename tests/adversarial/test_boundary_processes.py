"""Processes and output of ``execute_script``: nothing a call starts outlives it.

Boundary: a script the model writes (or a cloned repository's script it runs) against the
agent process and the machine. Guaranteed:

- every process the script starts, in the background, with ``nohup`` or in a session of
  its own (``setsid``), is ended when the call returns: after a normal end, on the
  timeout and when the user presses Ctrl-C; the result names the ones it ended;
- the call returns when the script's main process exits, even when a background child
  still holds its output pipe;
- output is streamed: the agent holds a bounded head and tail whatever the script
  prints, the whole output goes to a file under ``.jarvis/tool_outputs/`` up to a byte
  cap, and a script that passes the cap is stopped; configured secrets are masked in
  the stream, also when one is split between two reads;
- the user's ``execute_timeout`` is the ceiling: the model may ask for less, never more,
  and an absurd value is a readable answer, not a traceback.

Real bash, real processes (checked by pid in /proc), a real ``jarvis run`` process for
Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jarvis_graph.config import Settings
from jarvis_graph.tools import builtin
from jarvis_graph.tools.base import ToolEnv, ToolInputError
from jarvis_graph.tools.builtin import execute_script_impl
from tests.support.cli import jarvis_cmd, write_script

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

MARKER = "!!!COMPLETE!!!"
PID_FILES = ("bg.pid", "sid.pid")
"""Where the children a scenario starts write their pids."""


def _children(redirect: str) -> str:
    """Bash that starts a background child and a ``setsid`` child, each writing its pid."""
    return (
        f"sh -c 'echo $$ > bg.pid; exec sleep 300' {redirect} &\n"
        f"setsid sh -c 'echo $$ > sid.pid; exec sleep 300' {redirect} &\n"
        "while [ ! -s bg.pid ] || [ ! -s sid.pid ]; do sleep 0.02; done\n"
    )


DETACHED = _children(">/dev/null 2>&1")
HOLDING_STDOUT = _children("")


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _pids(ws: Path) -> list[int]:
    return [int((ws / name).read_text()) for name in PID_FILES]


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    """The pids still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.fixture(autouse=True)
def nothing_left(workspace: Path) -> Iterator[None]:
    """What a failed scenario leaves working in the workspace is killed afterwards."""
    yield
    for entry in Path("/proc").iterdir():
        try:
            inside = Path(os.readlink(entry / "cwd")).is_relative_to(workspace)
        except (OSError, ValueError):
            continue
        if inside and entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def _env(ws: Path, **settings: object) -> ToolEnv:
    return ToolEnv(ws.resolve(), Settings(**settings))  # type: ignore[arg-type]


@pytest.fixture(params=["off", "landlock"])
def level(request: pytest.FixtureRequest) -> str:
    """Sandbox levels whose processes keep the machine's pids (the tests read them in /proc).

    Under bwrap the script has a PID namespace of its own, which ends whole with its first
    process; tests/adversarial/test_sandbox_escapes.py covers that level.
    """
    return str(request.param)


# --- nothing outlives the call --------------------------------------------------------------


def test_background_and_setsid_children_end_with_a_normal_end(workspace: Path, level: str) -> None:
    env = _env(workspace, execute_timeout=30, sandbox=level)
    out = execute_script_impl(env, DETACHED + "echo main done")
    bg, sid = _pids(workspace)
    assert not _alive(bg) and not _alive(sid), out
    assert out.startswith("exit code: 0\nmain done\n"), out
    assert "ended 2 background processes the script left running:" in out
    assert f"sleep (pid {bg})" in out and f"sleep (pid {sid})" in out


def test_a_child_holding_the_output_does_not_hold_the_call(workspace: Path, level: str) -> None:
    started = time.monotonic()
    env = _env(workspace, execute_timeout=30, sandbox=level)
    out = execute_script_impl(env, HOLDING_STDOUT + "echo hi")
    took = time.monotonic() - started
    assert took < 10, f"the call waited {took:.1f} s for children holding its output"
    assert out.startswith("exit code: 0\nhi\n"), out
    assert not any(_alive(p) for p in _pids(workspace))


def test_background_and_setsid_children_end_on_the_timeout(workspace: Path, level: str) -> None:
    env = _env(workspace, execute_timeout=30, sandbox=level)
    out = execute_script_impl(env, HOLDING_STDOUT + "echo waiting; sleep 300", timeout=1)
    assert out.startswith("timed out after 1 s (process killed)\noutput so far:\nwaiting\n"), out
    assert not any(_alive(p) for p in _pids(workspace)), out
    assert "sleep (pid" in out


def _jarvis(ws: Path, log: Path, *args: str, level: str = "off") -> subprocess.Popen[bytes]:
    """A real ``jarvis`` process in ``ws`` at sandbox ``level``, its output going to ``log``."""
    env = {**os.environ, "JARVIS_SANDBOX": level}
    with log.open("ab") as out:
        return subprocess.Popen(
            [*jarvis_cmd(), *args],
            cwd=ws,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
        )


def _run_step(ws: Path, tmp_path: Path, step: str, level: str = "off") -> subprocess.Popen[bytes]:
    """``jarvis run`` with a scripted model whose one call runs ``step``; waits until
    ``step`` has created the file ``started``."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "execute_script", "args": {"script": step}}]},
        {"text": f"done {MARKER}"},
    ]
    script = write_script(tmp_path / "steps.yaml", turns)
    args = ["run", "--platform", "scripted", "-n", "--yes", "--script", str(script), "go"]
    proc = _jarvis(ws, tmp_path / "out.log", *args, level=level)
    deadline = time.monotonic() + 60
    while not (ws / "started").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail((tmp_path / "out.log").read_text())
        time.sleep(0.05)
    return proc


def test_ctrl_c_of_jarvis_run_ends_background_and_setsid_children(
    workspace: Path, tmp_path: Path, level: str
) -> None:
    proc = _run_step(workspace, tmp_path, DETACHED + "touch started; sleep 300", level)
    pids = _pids(workspace)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130, (tmp_path / "out.log").read_text()
    assert _gone_within(pids, 5) == []


def test_kill_9_of_jarvis_then_resume_ends_setsid_children_too(
    workspace: Path, tmp_path: Path
) -> None:
    # The first copy starts the children and blocks; the copy the resumed run starts ends.
    step = f"if [ -f started ]; then echo again; else {DETACHED}touch started; sleep 300; fi"
    proc = _run_step(workspace, tmp_path, step)
    pids = _pids(workspace)
    thread = re.search(r"session (\S+) · workspace", (tmp_path / "out.log").read_text())
    assert thread, (tmp_path / "out.log").read_text()
    proc.kill()  # kill -9: the agent cannot end its script
    proc.wait()
    assert all(_alive(p) for p in pids)  # unsandboxed, nothing tells the reaper

    resumed = _jarvis(
        workspace, tmp_path / "out.log", "sessions", "resume", thread[1], "-n", "--yes"
    )
    assert resumed.wait(120) == 0, (tmp_path / "out.log").read_text()
    assert _gone_within(pids, 5) == []


def test_kill_9_of_a_sandboxed_jarvis_ends_its_scripts_children_at_once(
    workspace: Path, tmp_path: Path
) -> None:
    # A sandboxed launcher gets a signal when its parent dies and ends what it started.
    proc = _run_step(workspace, tmp_path, DETACHED + "touch started; sleep 300", "landlock")
    pids = _pids(workspace)
    proc.kill()
    proc.wait()
    assert _gone_within(pids, 5) == []


# --- output is streamed and bounded ---------------------------------------------------------

_MEASURE = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from jarvis_graph.config import Settings
    from jarvis_graph.tools.base import ToolEnv
    from jarvis_graph.tools.builtin import execute_script_impl

    env = ToolEnv(Path(sys.argv[1]), Settings(execute_timeout=120))
    execute_script_impl(env, "echo warm up")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = execute_script_impl(env, "yes | head -c 50000000")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(after - before, len(out))
    """
)


def test_fifty_megabytes_of_output_keep_the_agent_small(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(workspace.resolve())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    grown_kb, chars = map(int, done.stdout.split())
    assert grown_kb < 16_000, f"the agent's peak memory grew by {grown_kb} KB for 50 MB"
    assert chars <= Settings().tool_output_limit
    (saved,) = (workspace / ".jarvis" / "tool_outputs").iterdir()
    assert saved.stat().st_size == 50_000_000


def test_output_past_the_cap_stops_the_script(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jarvis_graph.tools import script_run

    monkeypatch.setattr(script_run, "OUTPUT_CAP_BYTES", 1_000_000)
    env = _env(workspace, execute_timeout=30, tool_output_limit=2000)
    out = execute_script_impl(env, "yes | head -c 3000000; echo not-stopped > after.txt")
    assert "stopped: its output passed the cap of 1000000 bytes" in out, out[:500]
    assert not (workspace / "after.txt").exists()
    (saved,) = (workspace / ".jarvis" / "tool_outputs").iterdir()
    assert saved.stat().st_size == 1_000_000
    assert str(saved.relative_to(workspace)) in out
    assert len(out) <= 2000


def test_a_secret_split_between_reads_is_masked(workspace: Path) -> None:
    from jarvis_graph.tools.script_output import StreamMasker

    secrets = ["sk-live-0123456789", "abc", "abcdef"]
    text = "xx sk-live-0123456789 yy abcdef zz abc sk-live-0123456789"
    for cut in range(1, len(text)):
        for second in range(cut, len(text)):
            masker = StreamMasker(secrets)
            parts = (text[:cut], text[cut:second], text[second:])
            masked = "".join(masker.feed(p) for p in parts) + masker.flush()
            assert masked == "xx *** yy *** zz *** ***", (cut, second, masked)


def test_secrets_in_streamed_output_are_masked_inline_and_in_the_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "acme-key-5566-unique"
    monkeypatch.setenv("ACME_LLM", secret)
    spec = {"platform": "openai", "model": "acme-1", "api_key_env": "ACME_LLM"}
    groups = {"default": {"normal": {}, "cheap": {}}, "acme": {"normal": spec, "cheap": spec}}
    config = {"tool_output_limit": 2000, "model_groups": groups}
    user_config = Path(os.environ["JARVIS_HOME"]) / "config.yaml"  # the test's home
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(yaml.safe_dump(config))
    # Lines of 7 to 13 filler characters: the secrets fall at every offset of a read.
    lines = "".join(f"{'f' * (7 + n % 7)} {secret}\n" for n in range(20_000))
    (workspace / "big.txt").write_text(f"first {secret}\n{lines}last {secret}\n")

    from jarvis_graph.config import load_settings

    out = execute_script_impl(ToolEnv(workspace.resolve(), load_settings(workspace)), "cat big.txt")
    assert secret not in out and "first ***" in out and "last ***" in out
    (saved,) = (workspace / ".jarvis" / "tool_outputs").iterdir()
    whole = saved.read_text()
    assert secret not in whole
    assert whole.count("***") == 20_002


# --- the user's timeout is the ceiling ------------------------------------------------------


def test_a_timeout_above_the_users_is_not_honoured(workspace: Path) -> None:
    env = _env(workspace, execute_timeout=1)
    started = time.monotonic()
    out = execute_script_impl(env, "sleep 20; echo finished", timeout=30)
    assert time.monotonic() - started < 10
    assert "timed out after 1 s (process killed)" in out
    assert "you asked for, 30 s, is more than the configured limit of 1 s (execute_timeout)" in out
    assert "finished" not in out


def test_a_shorter_timeout_from_the_model_is_used(workspace: Path) -> None:
    out = execute_script_impl(_env(workspace, execute_timeout=30), "sleep 20", timeout=0.5)
    assert out.startswith("timed out after 0.5 s (process killed)")


def test_an_enormous_timeout_gives_a_readable_result(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)  # outside a run, the tool works in the current folder
    out = builtin.execute_script.invoke({"script": "echo hi", "timeout": 1e308}, {})
    assert "exit code: 0\nhi\n" in out and "configured limit" in out


@pytest.mark.parametrize("value", [float("nan"), -5.0, 0.0, float("-inf")])
def test_a_nonsense_timeout_is_a_tool_error(workspace: Path, value: float) -> None:
    with pytest.raises(ToolInputError, match=r"timeout must be a number of seconds above 0"):
        execute_script_impl(_env(workspace), "echo hi", timeout=value)
