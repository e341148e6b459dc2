"""MCP servers that hang, die or are missing; names with periods and odd characters; models pull.

Real MCP servers (the FastMCP fixture and PyPI's ``mcp-server-time``) in real processes,
real session files and memory stores, and a real terminal for the progress display.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
import yaml

from tests.support.cli import invoke, run_process, write_script
from tests.support.mcp_servers import REPO, fixture_stdio
from tests.support.trust import trust

MARKER = "!!!COMPLETE!!!"


def configure(workspace: Path, *servers: dict[str, Any]) -> Path:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    config = {"mcp": list(servers), "confirm": "never"}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    return trust(workspace)


def tool_messages(workspace: Path, thread: str | None = None) -> list[str]:
    """What the tools answered in a session (the newest one without ``thread``)."""
    from langchain_core.messages import ToolMessage

    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    with open_checkpointer(workspace) as saver:  # the CLI's session store, as it reads it
        if thread is None:
            row = saver.conn.execute(  # type: ignore[attr-defined]
                "SELECT thread_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
            ).fetchone()
            thread = row[0]
        graph = build_agent_graph().compile(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": thread}}).values
        return [str(m.content) for m in values["messages"] if isinstance(m, ToolMessage)]


def scripted_run(workspace: Path, tmp_path: Path, turns: list[dict[str, Any]], *more: str) -> Any:
    script = write_script(tmp_path / "script.yaml", [*turns, {"text": f"done {MARKER}"}])
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), *more]
    return run_process([*args, "do the task"], cwd=workspace)


# --- MCP ---------------------------------------------------------------------------------


def test_a_hung_mcp_tool_is_reported_as_timed_out_not_as_stopped(workspace: Path) -> None:
    configure(workspace, fixture_stdio(timeout=1))
    proc = run_process(["mcp", "call", "fixture", "hang"], cwd=workspace)
    assert proc.returncode == 1
    err = proc.stderr
    assert "MCP tool 'hang' on server 'fixture' timed out after 1 s" in err, err
    assert "did not answer a ping either" in err and "started again on the next call" in err
    assert "stopped while running" not in err


def test_in_a_run_the_model_reads_the_timeout_and_the_next_call_works(
    workspace: Path, tmp_path: Path
) -> None:
    configure(workspace, fixture_stdio(timeout=1))
    turns = [
        {"tool_calls": [{"name": "fixture__hang", "args": {}}]},
        {"tool_calls": [{"name": "fixture__echo", "args": {"message": "after the hang"}}]},
    ]
    proc = scripted_run(workspace, tmp_path, turns)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hang, echo = tool_messages(workspace)
    assert "MCP tool 'hang' on server 'fixture' timed out after 1 s" in hang
    assert echo == "after the hang"  # a fresh server process answered


def test_a_slow_but_answering_server_keeps_its_session(workspace: Path, tmp_path: Path) -> None:
    configure(workspace, fixture_stdio(timeout=1))
    turns = [
        {"tool_calls": [{"name": "fixture__counter", "args": {}}]},
        {"tool_calls": [{"name": "fixture__sleep", "args": {"seconds": 30}}]},
        {"tool_calls": [{"name": "fixture__counter", "args": {}}]},
    ]
    proc = scripted_run(workspace, tmp_path, turns)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, slow, second = tool_messages(workspace)
    assert "MCP tool 'sleep' on server 'fixture' timed out after 1 s" in slow
    assert "still answers and keeps its session" in slow
    assert (first, second) == ("1", "2")  # same session, state kept


def test_an_mcp_server_dying_mid_call_is_named_and_restarted(
    workspace: Path, tmp_path: Path
) -> None:
    configure(workspace, fixture_stdio())
    turns = [
        {"tool_calls": [{"name": "fixture__counter", "args": {}}]},
        {"tool_calls": [{"name": "fixture__crash", "args": {}}]},
        {"tool_calls": [{"name": "fixture__counter", "args": {}}]},
    ]
    proc = scripted_run(workspace, tmp_path, turns)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, crash, after = tool_messages(workspace)
    assert "MCP server 'fixture' stopped while running tool 'crash'" in crash
    assert "It will be restarted on the next call" in crash
    assert "timed out" not in crash
    assert (first, after) == ("1", "1")  # a new server process, a new counter


def test_a_missing_mcp_command_says_what_was_not_found_where(workspace: Path) -> None:
    configure(workspace, {"name": "time", "type": "stdio", "command": "uvx-not-installed"})
    proc = run_process(["mcp", "call", "time", "get_current_time"], cwd=workspace)
    assert proc.returncode == 1
    here = Path(sys.executable).parent
    expected = (
        f"MCP server 'time': command 'uvx-not-installed' was not found on PATH nor in {here}; "
        "install it, or give its full path in `command`"
    )
    assert expected in proc.stderr, proc.stderr


def test_mcp_list_exits_1_naming_the_server_that_failed(workspace: Path) -> None:
    broken = {"name": "broken", "type": "stdio", "command": str(workspace / "no-such-server")}
    configure(workspace, fixture_stdio(), broken)
    proc = run_process(["mcp", "list"], cwd=workspace)
    assert proc.returncode == 1, proc.stdout
    assert "tools (" in proc.stdout and "counter" in proc.stdout  # the good one is listed
    assert "no-such-server' is not an executable file" in proc.stdout
    assert "error: 1 of 2 MCP servers failed to start (broken)" in proc.stderr


def readme_mcp_example() -> tuple[str, list[str]]:
    """The config block and the commands of the README's MCP example, as written."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### Tools & MCP", 1)[1].split("\n### ", 1)[0]
    config = re.search(r"```yaml\n(.*?)```", section, re.S)
    shell = re.search(r"```console\n(.*?)```", section, re.S)
    assert config and shell, "the README's MCP section has no yaml or console block"
    commands = [line[2:] for line in shell.group(1).splitlines() if line.startswith("$ ")]
    return config.group(1), commands


def test_the_readme_mcp_example_works_as_written(tmp_path: Path) -> None:
    config, commands = readme_mcp_example()
    clone = tmp_path / "clone"  # stands for the clone: its .venv is the one running the tests
    (clone / ".jarvis").mkdir(parents=True)
    (clone / ".jarvis" / "config.yaml").write_text(config)
    (clone / ".venv").symlink_to(Path(sys.executable).parent.parent)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # the virtualenv is not activated
    outputs = []
    for command in commands:
        proc = subprocess.run(
            shlex.split(command), cwd=clone, capture_output=True, text=True, env=env, timeout=120
        )
        assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
        outputs.append(proc.stdout)
    assert "trusted" in outputs[0]  # the README trusts the clone first
    assert "get_current_time" in outputs[-2]
    assert '"timezone": "UTC"' in outputs[-1]


# --- names: workspace folders and thread ids ---------------------------------------------


def test_a_workspace_named_my_project_gets_an_episodic_archive(tmp_path: Path) -> None:
    ws = tmp_path / "my.project"
    ws.mkdir()
    turns = [{"tool_calls": [{"name": "list_files", "args": {}}]}]
    proc = scripted_run(ws, tmp_path, turns)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Invalid namespace label" not in proc.stdout + proc.stderr
    found = invoke(["memory", "episodes", "search", "--kind", "user", "-w", str(ws)])
    assert found.exit_code == 0, found.output
    assert "do the task" in found.output


def test_a_thread_id_with_a_period_gets_its_archive_and_short_term_memory(
    workspace: Path, tmp_path: Path
) -> None:
    save = {
        "name": "save_memory",
        "args": {"memories": [{"memory_type": "short_term", "content": "the warm-up note"}]},
    }
    turns = [
        {"tool_calls": [save]},
        {"tool_calls": [{"name": "retrieve_memory", "args": {"memory_types": ["short_term"]}}]},
    ]
    proc = scripted_run(workspace, tmp_path, turns, "--new-thread", "warmup-0.5b")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved, found = tool_messages(workspace, "warmup-0.5b")
    assert saved.startswith("saved 1 memor"), saved
    assert "the warm-up note" in found
    search = invoke(
        ["memory", "episodes", "search", "--thread", "warmup-0.5b", "-w", str(workspace)]
    )
    assert search.exit_code == 0, search.output
    assert "warmup-0.5b:" in search.output and "do the task" in search.output


@pytest.mark.parametrize("thread", ["two words", "a/b", "ünïcödé.x", "100%.done", "tab\there"])
def test_an_odd_thread_id_works_everywhere_or_is_refused_up_front(
    workspace: Path, tmp_path: Path, thread: str
) -> None:
    save = {
        "name": "save_memory",
        "args": {"memories": [{"memory_type": "short_term", "content": "odd note"}]},
    }
    turns = [
        {"tool_calls": [save]},
        {"tool_calls": [{"name": "retrieve_memory", "args": {"memory_types": ["short_term"]}}]},
    ]
    proc = scripted_run(workspace, tmp_path, turns, "--new-thread", thread)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "Invalid namespace label" not in out
    if proc.returncode != 0:  # refused: before anything was stored, saying why
        assert proc.returncode == 2, out
        assert f"--new-thread {thread!r} is not a usable session id" in out
        sessions = workspace / ".jarvis" / "sessions.sqlite"
        assert not sessions.exists() or thread not in sessions.read_bytes().decode(errors="replace")
        return
    saved, found = tool_messages(workspace, thread)
    assert saved.startswith("saved 1 memor") and "odd note" in found
    search = invoke(["memory", "episodes", "search", "--thread", thread, "-w", str(workspace)])
    assert search.exit_code == 0 and "do the task" in search.output, search.output


# --- models pull -------------------------------------------------------------------------

PULL = """
import sys
from jarvis_graph.platforms import local_models as lm

name, size, digest = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# the recipe table is where the code takes a model's size and digest from
default = lm.DEFAULT_RECIPE
lm.RECIPES[default] = lm.ModelRecipe(default, name, size, digest, ("not-installed-part1",), "local")
from jarvis_graph.cli.app import app

app(["models", "pull", "local"], prog_name="jarvis")
"""


def pull_in_a_terminal(tmp_path: Path, model: Path) -> str:
    """``jarvis models pull local`` in a pseudo-terminal; everything it drew."""
    runner = tmp_path / "pull.py"
    runner.write_text(PULL)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    args = [str(runner), model.name, str(model.stat().st_size), digest]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "160"}
    child = pexpect.spawn(
        sys.executable, args, cwd=str(REPO), env=env, dimensions=(40, 160), encoding="utf-8"
    )
    child.expect(pexpect.EOF, timeout=120)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


def test_models_pull_on_an_existing_file_says_checking_not_a_download(tmp_path: Path) -> None:
    models = Path(os.environ["JARVIS_MODELS_DIR"])
    models.mkdir(parents=True, exist_ok=True)
    model = models / "fake-default.gguf"
    model.write_bytes(b"GGUF" + os.urandom(3 * 1024 * 1024))

    first = pull_in_a_terminal(tmp_path, model)  # not verified yet: every byte is hashed
    assert f"checking {model} (sha256 of every byte)" in first, first
    assert "assembling" not in first
    assert "local: already assembled and verified" in first

    again = pull_in_a_terminal(tmp_path, model)  # the sidecar vouches: nothing to read
    assert f"checking {model}: unchanged since its last full check" in again, again
    assert "0.0/" not in again and "MB" not in again


# --- resource warnings -------------------------------------------------------------------


def test_a_process_that_imported_llama_cpp_ends_without_unclosed_files() -> None:
    code = "import jarvis_graph.platforms.local, llama_cpp"
    proc = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ResourceWarning" not in proc.stderr, proc.stderr
