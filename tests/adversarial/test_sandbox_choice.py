"""The sandbox level a run uses is the user's to choose, and the user sees it.

Boundary: the choice of the sandbox (the ``sandbox`` setting, ``--sandbox``, the context
of a run started through the API) and what the user is told about it. Guaranteed:

- ``jarvis doctor`` names the level a run would use here (``auto`` takes ``bwrap`` where it
  works), what each level needs and why it fails; it exits 1 when no level works and the
  sandbox is not off, saying how to proceed;
- ``jarvis run`` shows the level once at its start; with ``--sandbox off`` it warns on
  every run, and a script then runs with the user's rights, as before the sandbox;
- where no level works and the sandbox is not off, a script the model writes is not run:
  the model gets the one-line reason, and nothing the script would do happens;
- a bad ``--sandbox`` value is a usage error (exit 2) before anything runs;
- a run started through the API cannot choose the sandbox (its context may not set it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from jarvis_graph.sandbox import OFF_WARNING
from jarvis_graph.sandbox.probe import check_bwrap, check_landlock
from tests.support import no_landlock
from tests.support.cli import jarvis_cmd, run_limited, run_process, write_script
from tests.support.store import stored_text

MARKER = "!!!COMPLETE!!!"
needs_bwrap = pytest.mark.skipif(not check_bwrap().works, reason=check_bwrap().detail)
needs_landlock = pytest.mark.skipif(not check_landlock().works, reason=check_landlock().detail)


def _script_run(tmp_path: Path, ws: Path, script: str, *options: str) -> str:
    """A real ``jarvis run`` whose model runs ``script``; its output (exit code checked)."""
    call = {"name": "execute_script", "args": {"script": script}}
    turns = [{"tool_calls": [call]}, {"text": f"Done. {MARKER}"}]
    path = write_script(tmp_path / "model.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(ws), "--platform", "scripted", "--script", str(path)]
    done = run_process([*args, *options, "run the script"], cwd=ws)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    return out


@pytest.mark.parametrize(
    ("mode", "level"),
    [
        pytest.param("", "bwrap", marks=needs_bwrap),
        pytest.param("landlock", "landlock", marks=needs_landlock),
        pytest.param("off", "off"),
    ],
)
def test_doctor_names_the_level_in_use(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, mode: str, level: str
) -> None:
    if mode:
        monkeypatch.setenv("JARVIS_SANDBOX", mode)
    done = run_process(["doctor"], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"sandbox: {mode or 'auto'}" in done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("level in use:")]
    assert line.startswith(f"level in use: {level}"), done.stdout
    assert ("bubblewrap" in line) == (level == "bwrap")
    assert (OFF_WARNING in done.stdout + done.stderr) == (level == "off")


@needs_bwrap
def test_doctor_reports_each_level_and_the_kernel(workspace: Path) -> None:
    done = run_process(["doctor"], cwd=workspace)
    out = done.stdout
    assert f"bwrap: works: {check_bwrap().detail}" in out
    assert "user namespaces:" in out and "process limit:" in out
    if check_landlock().works:
        assert "Landlock ABI" in out and "TCP rules" in out


@needs_bwrap
def test_a_run_shows_the_level_once_at_its_start(workspace: Path, tmp_path: Path) -> None:
    out = _script_run(tmp_path, workspace, "echo hello")
    assert out.count("sandbox: bwrap (") == 1, out
    assert OFF_WARNING not in out


def test_sandbox_off_warns_and_runs_the_script_unconfined(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    out = _script_run(tmp_path, workspace, f"echo written > {outside}", "--sandbox", "off")
    assert OFF_WARNING in out
    assert outside.read_text() == "written\n"  # the user's rights, as before the sandbox
    assert "Done." in out


@pytest.mark.parametrize("command", ["run", "chat", "code"])
def test_each_command_warns_once_with_the_sandbox_off(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("JARVIS_GIT_NAME", "Test")  # jarvis code commits with an identity
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "test@example.com")
    path = write_script(tmp_path / "model.yaml", [{"text": f"hi {MARKER}"}])
    args = {"run": ["run", "-n", "hello"], "chat": ["chat"], "code": ["code", "-n", "-r", "hi"]}
    model = ["--platform", "scripted", "--script", str(path), "--sandbox", "off"]
    done = run_process([*args[command], *model], cwd=workspace, input="hello\n/exit\n")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert out.count(OFF_WARNING) == 1, out


@pytest.mark.parametrize("command", ["run", "chat", "code"])
def test_a_bad_sandbox_value_is_a_usage_error(workspace: Path, command: str) -> None:
    args = [command, "-n", "x"] if command == "run" else [command]
    done = run_process([*args, "--sandbox", "bogus"], cwd=workspace, input="")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--sandbox must be auto, bwrap, landlock or off, not 'bogus'" in done.stderr
    assert not (workspace / ".jarvis").exists()  # nothing ran, nothing was written


@pytest.fixture
def no_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``PATH`` without bubblewrap; the commands started with ``no_landlock`` see no Landlock."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "git", "env"):
        found = next(Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).exists())
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_with_no_sandbox_a_script_is_not_run_and_doctor_says_why(
    workspace: Path, tmp_path: Path, no_sandbox: Path
) -> None:
    marker = workspace / "ran.txt"
    call = {"name": "execute_script", "args": {"script": f"touch {marker}"}}
    path = write_script(tmp_path / "model.yaml", [{"tool_calls": [call]}, {"text": MARKER}])
    run = [*jarvis_cmd(), "run", "-n", "--yes", "--platform", "scripted", "--script", str(path)]
    done = run_limited(no_landlock.command([*run, "-v", "touch a file"]), workspace)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "sandbox: none works here" in out  # the start line says so
    assert "execute_script Error: the script was not run: no sandbox works" in out
    (result,) = re.findall(rb"the script was not run: [^\"]*", stored_text(workspace))
    assert b"bwrap not found" in result and b"no Landlock" in result  # the reason, whole
    assert b"`jarvis doctor` shows why" in result and b"--sandbox off" in result  # what to do
    assert not marker.exists()

    doctor = run_limited(no_landlock.command([*jarvis_cmd(), "doctor"]), workspace)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "bwrap: does not work: bwrap not found" in doctor.stdout
    assert "landlock: does not work:" in doctor.stdout and "no Landlock" in doctor.stdout
    assert "level in use: none" in doctor.stdout
    assert "--sandbox off" in doctor.stdout


def test_doctor_with_the_sandbox_off_needs_no_level(
    workspace: Path, no_sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_SANDBOX", "off")
    doctor = run_limited(no_landlock.command([*jarvis_cmd(), "doctor"]), workspace)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "level in use: off" in doctor.stdout


@needs_landlock
def test_the_launcher_hides_landlock(tmp_path: Path) -> None:
    probe = [
        sys.executable,
        "-c",
        "from jarvis_graph.sandbox import confine as c; print(c.landlock_abi())",
    ]
    assert run_limited(probe, tmp_path).stdout.strip() != "0"  # the control
    hidden = run_limited(no_landlock.command(probe), tmp_path)
    assert hidden.stdout.strip() == "0", hidden.stderr


def test_a_remote_context_may_not_choose_the_sandbox() -> None:
    from jarvis_graph.api_auth import REMOTE_CONTEXT_FIELDS, ContextRefused, check_remote_context
    from jarvis_graph.context import JarvisContext

    assert "sandbox" in JarvisContext.__dataclass_fields__  # a run setting ...
    assert "sandbox" not in REMOTE_CONTEXT_FIELDS  # ... the API may not set
    for value in ("off", "landlock", "auto"):
        with pytest.raises(ContextRefused, match="sets sandbox, which a run started"):
            check_remote_context({"workspace": "/w", "sandbox": value})


def test_the_context_s_sandbox_overrides_the_settings(workspace: Path) -> None:
    from jarvis_graph.context import JarvisContext, resolve_settings

    assert resolve_settings(JarvisContext(workspace=str(workspace))).sandbox == "auto"
    chosen = JarvisContext(workspace=str(workspace), sandbox="off")
    assert resolve_settings(chosen).sandbox == "off"


def test_doctor_starts_without_langgraph(workspace: Path) -> None:
    code = (
        "import sys\nfrom jarvis_graph.cli.app import app\n"
        "try:\n    app(['doctor'])\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'langgraph', 'langchain_openai', 'openai')))\n"
    )
    done = run_limited([sys.executable, "-c", code], workspace)
    assert "level in use:" in done.stdout and "HEAVY []" in done.stdout, done.stderr


def test_a_resumed_session_takes_the_sandbox_from_the_settings() -> None:
    """A session store is a file in the workspace: what it holds cannot turn the sandbox off."""
    from types import SimpleNamespace

    from jarvis_graph.cli.driver import saved_context

    stored = '{"sandbox": "off", "workspace": "/w", "max_iterations": 5}'
    ctx = saved_context(SimpleNamespace(metadata={"jarvis_context": stored}))
    assert ctx == {"workspace": "/w", "max_iterations": 5}
