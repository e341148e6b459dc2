"""The ``jarvis`` CLI end to end with the scripted platform and a real session store.

The session tests run on both stores: the project's SQLite file and a PostgreSQL server
(``JARVIS_CHECKPOINT_URL``, a server on loopback started for the test session).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import invoke, write_script

ANSWER = "The script prints 42."


@pytest.fixture(params=["sqlite", "postgres"])
def session_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which store the sessions live in (PostgreSQL: through ``JARVIS_CHECKPOINT_URL``)."""
    if request.param == "postgres":
        monkeypatch.setenv("JARVIS_CHECKPOINT_URL", str(request.getfixturevalue("pg_url")))
    return str(request.param)


@pytest.fixture
def calc_ws(workspace: Path) -> Path:
    (workspace / "calc.py").write_text("print(6 * 7)\n")
    return workspace


def calc_script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "calc.yaml",
        [
            {"tool_calls": [{"name": "read_code", "args": {"path": "calc.py"}}]},
            {
                "tool_calls": [
                    {
                        "name": "execute_script",
                        "args": {"script": "python3 calc.py >> out.txt; cat out.txt"},
                    }
                ]
            },
            {"text": f"{ANSWER} !!!COMPLETE!!!"},
        ],
    )


def session_id(output: str) -> str:
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", output)
    assert match, output
    return match.group(1)


def run_args(ws: Path, script: Path, *extra: str) -> list[str]:
    return ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script), *extra]


def test_help_does_not_import_langchain_or_langgraph() -> None:
    code = (
        "import sys\n"
        "from jarvis_graph.cli.app import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'langgraph', 'langchain_openai', 'openai'))\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout


def test_run_non_interactive_completes_and_sessions_list_shows_it(
    calc_ws: Path, tmp_path: Path, session_store: str
) -> None:
    result = invoke(
        run_args(calc_ws, calc_script(tmp_path), "-n", "--yes", "what does calc.py print?")
    )
    assert result.exit_code == 0, result.output
    assert ANSWER in result.output
    assert "!!!COMPLETE!!!" not in result.output
    assert (calc_ws / "out.txt").read_text() == "42\n"
    tid = session_id(result.output)
    listing = invoke(["sessions", "list", "-w", str(calc_ws)])
    assert tid in listing.output and "completed" in listing.output
    shown = invoke(["sessions", "show", tid, "-w", str(calc_ws), "--history"])
    assert "calc.py" in shown.output and "step" in shown.output
    local = [p.name for p in (calc_ws / ".jarvis").glob("*sessions*")]
    assert bool(local) == (session_store == "sqlite"), local  # a server store: none on disk


def test_non_interactive_without_yes_declines_risky_tool(calc_ws: Path, tmp_path: Path) -> None:
    result = invoke(run_args(calc_ws, calc_script(tmp_path), "-n", "what does calc.py print?"))
    assert result.exit_code == 0, result.output
    assert not (calc_ws / "out.txt").exists()
    assert "declined" in result.output


def test_stop_at_confirmation_then_resume_approves(
    calc_ws: Path, tmp_path: Path, session_store: str
) -> None:
    first = invoke(run_args(calc_ws, calc_script(tmp_path), "what does calc.py print?"), input="")
    assert first.exit_code == 130, first.output
    assert "confirm" in first.output and "execute_script" in first.output
    tid = session_id(first.output)
    assert not (calc_ws / "out.txt").exists()
    assert "waiting" in invoke(["sessions", "list", "-w", str(calc_ws)]).output
    # The run context (platform, script) is restored from the checkpoint metadata.
    resumed = invoke(["sessions", "resume", tid, "-w", str(calc_ws)], input="a\n\n")
    assert resumed.exit_code == 0, resumed.output
    assert ANSWER in resumed.output
    assert (calc_ws / "out.txt").read_text() == "42\n"
    again = invoke(["sessions", "resume", tid, "-w", str(calc_ws)])
    assert "completed" in again.output and "jarvis run --thread" in again.output


def test_confirm_edit_and_reject_from_the_prompt(calc_ws: Path, tmp_path: Path) -> None:
    script = calc_script(tmp_path)
    edited = invoke(
        run_args(calc_ws, script, "what does calc.py print?"),
        input='e\n{not json\ne\n{"script": "echo edited > out.txt"}\n\n',
    )
    assert edited.exit_code == 0, edited.output
    assert "not valid JSON" in edited.output
    assert (calc_ws / "out.txt").read_text() == "edited\n"
    (calc_ws / "out.txt").unlink()
    rejected = invoke(run_args(calc_ws, script, "again"), input="r\ntoo risky\n\n")
    assert rejected.exit_code == 0, rejected.output
    assert not (calc_ws / "out.txt").exists()
    assert "declined" in rejected.output and "too risky" in rejected.output


def test_interactive_answer_waits_for_next_instruction(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [{"text": "Which file do you mean?"}, {"text": "Done with notes.txt. !!!COMPLETE!!!"}],
    )
    result = invoke(run_args(workspace, script, "open the file"), input="notes.txt\n")
    assert result.exit_code == 0, result.output
    assert "Which file do you mean?" in result.output
    assert "Done with notes.txt." in result.output


def test_iteration_cap_exit_code(workspace: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "list_files", "args": {}}]}] * 5
    script = write_script(tmp_path / "loop.yaml", turns)
    result = invoke(run_args(workspace, script, "-n", "--max-iterations", "2", "loop"))
    assert result.exit_code == 3, result.output
    assert "max_iterations" in result.output


def test_run_continues_a_thread_with_a_new_task(
    calc_ws: Path, tmp_path: Path, session_store: str
) -> None:
    script = write_script(
        tmp_path / "two.yaml",
        [{"text": "first answer !!!COMPLETE!!!"}, {"text": "second answer !!!COMPLETE!!!"}],
    )
    one = invoke(run_args(calc_ws, script, "-n", "--new-thread", "t-1", "first"))
    two = invoke(run_args(calc_ws, script, "-n", "--thread", "t-1", "second"))
    assert "first answer" in one.output and "second answer" in two.output
    shown = invoke(["sessions", "show", "t-1", "-w", str(calc_ws)]).output
    assert shown.index("first") < shown.index("second")


def test_a_follow_up_task_runs_its_call_when_the_provider_reuses_call_ids(
    workspace: Path, tmp_path: Path
) -> None:
    """Providers number calls per reply (``call_0``): an id says nothing about other tasks."""

    def write(word: str) -> dict[str, Any]:
        args = {"script": f"echo {word} >> log.txt"}
        return {"tool_calls": [{"name": "execute_script", "args": args, "id": "call_0"}]}

    script = write_script(
        tmp_path / "reused.yaml",
        [write("one"), {"text": "wrote one !!!COMPLETE!!!"}]
        + [write("two"), {"text": "wrote two !!!COMPLETE!!!"}],
    )
    one = invoke(run_args(workspace, script, "-n", "--yes", "--new-thread", "t-ids", "one"))
    assert one.exit_code == 0, one.output
    two = invoke(run_args(workspace, script, "-n", "--yes", "--thread", "t-ids", "two"))
    assert two.exit_code == 0, two.output
    assert "Not run again" not in two.output
    assert (workspace / "log.txt").read_text() == "one\ntwo\n"


def test_verbose_closing_line_says_where_the_time_went(workspace: Path, tmp_path: Path) -> None:
    """``-v`` ends with the run's time split: the model's parts, the tools, the rest."""
    sleep = {"name": "execute_script", "args": {"script": "sleep 1.2"}, "id": "call_0"}
    script = write_script(
        tmp_path / "slow.yaml", [{"tool_calls": [sleep]}, {"text": "slept !!!COMPLETE!!!"}]
    )
    done = invoke(run_args(workspace, script, "-n", "--yes", "-v", "sleep a little"))
    assert done.exit_code == 0, done.output
    pattern = r"time: model (\d+\.\d)s for \d+ tokens · tools (\d+\.\d)s · other (\d+\.\d)s"
    found = re.search(pattern, done.output)
    assert found, done.output
    assert float(found.group(2)) >= 1.2  # the script's own second, counted as the tools'
    quiet = invoke(run_args(workspace, script, "-n", "--yes", "sleep a little"))
    assert "time: " not in quiet.output


def test_fork_from_an_earlier_checkpoint_and_resume(
    calc_ws: Path, tmp_path: Path, session_store: str
) -> None:
    result = invoke(
        run_args(calc_ws, calc_script(tmp_path), "-n", "--yes", "--new-thread", "src", "go")
    )
    assert result.exit_code == 0
    history = invoke(["sessions", "show", "src", "-w", str(calc_ws), "--history"]).output
    # The checkpoint whose next step is run_tools for the execute_script call.
    rows = [line for line in history.splitlines() if "next ['run_tools']" in line]
    assert len(rows) == 2
    checkpoint = rows[0].split()[0]  # newest first: the second tool turn
    forked = invoke(["sessions", "fork", "src", "-c", checkpoint, "-w", str(calc_ws)])
    assert forked.exit_code == 0, forked.output
    new_id = re.search(r"into (\S+)", forked.output).group(1)
    resumed = invoke(["sessions", "resume", new_id, "-w", str(calc_ws), "--yes"])
    assert resumed.exit_code == 0, resumed.output
    assert ANSWER in resumed.output
    assert (calc_ws / "out.txt").read_text() == "42\n42\n"  # the fork re-ran only that call


def test_sessions_delete(calc_ws: Path, tmp_path: Path, session_store: str) -> None:
    invoke(run_args(calc_ws, calc_script(tmp_path), "-n", "--new-thread", "gone", "x"))
    episodes = ["memory", "episodes", "search", "--thread", "gone", "-w", str(calc_ws)]
    assert "gone:" in invoke(episodes).output  # the completed task was archived
    deleted = invoke(["sessions", "delete", "gone", "--yes", "-w", str(calc_ws)])
    assert deleted.exit_code == 0 and "archived episodes" in deleted.output
    missing = invoke(["sessions", "show", "gone", "-w", str(calc_ws)])
    assert missing.exit_code == 1 and "no session 'gone'" in missing.output
    assert invoke(episodes).output.strip() == "no episodes"  # its episodes went with it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sessions", "resume", "nope"], "no session 'nope'"),
        (["graph", "draw", "nope"], "unknown graph 'nope'"),
        (
            ["run", "--confirm", "sometimes", "x"],
            "--confirm must be never, risky, sandboxed or always",
        ),
        (["run", "--platform", "nosuch", "-n", "x"], "unknown platform 'nosuch'"),
        (["run", "--platform", "scripted", "--script", "missing.yaml", "-n", "x"], "not found"),
        (["sessions", "fork", "nope"], "no session 'nope'"),
    ],
)
def test_errors_are_clear(workspace: Path, args: list[str], message: str) -> None:
    result = invoke(
        [*args[:2], "-w", str(workspace), *args[2:]]
        if args[0] == "sessions"
        else args + ["-w", str(workspace)]
        if args[0] == "run"
        else args
    )
    assert result.exit_code != 0
    assert message in result.output


def test_broken_project_config_names_file_and_line(workspace: Path) -> None:
    cfg = workspace / ".jarvis" / "config.yaml"
    cfg.parent.mkdir()
    cfg.write_text("confirm: risky\nmax_iterations: [1,\n")
    result = invoke(["run", "-n", "-w", str(workspace), "x"])
    assert result.exit_code == 1
    assert f"{cfg}:" in result.output and "invalid YAML" in result.output
    cfg.write_text("confirm: risky\nmax_iteratons: 3\n")
    result = invoke(["config", "show", "-w", str(workspace)])
    assert result.exit_code == 1
    assert f"{cfg}:2" in result.output and "max_iteratons" in result.output


def test_config_show_masks_secrets_and_init_refuses_to_overwrite(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_MODEL", "gpt-test")
    shown = invoke(["config", "show", "-w", str(workspace)])
    assert shown.exit_code == 0 and "gpt-test" in shown.output
    assert "api_key_env: OPENAI_API_KEY" in shown.output  # a variable name, not a secret
    first = invoke(["config", "init", "--project", "-w", str(workspace)])
    assert first.exit_code == 0
    assert (workspace / ".jarvis" / "config.yaml").is_file()
    second = invoke(["config", "init", "--project", "-w", str(workspace)])
    assert second.exit_code == 1 and "already exists" in second.output


def test_config_init_keeps_the_offline_default(isolated_home: Path, workspace: Path) -> None:
    """The starter file changes no model: without a key, runs stay on the local model."""
    import yaml

    written = invoke(["config", "init"])
    assert written.exit_code == 0, written.output
    text = (isolated_home / ".jarvis" / "config.yaml").read_text()
    data = yaml.safe_load(text)
    for role in ("normal", "cheap"):
        assert "model" not in data["model_groups"]["default"][role]
    assert "# model: gpt-4o-mini" in text and "# api_key_env: OPENAI_API_KEY" in text
    listed = invoke(["models", "list", "-w", str(workspace)])
    assert listed.exit_code == 0, listed.output
    rows = [line for line in listed.output.splitlines() if "default" in line]
    assert len(rows) == 2 and all("│ local " in row and "│ - " in row for row in rows), rows
    assert "gpt-4o-mini" not in listed.output


def test_models_list_shows_builtins_and_plugins(isolated_home: Path, workspace: Path) -> None:
    plugins = isolated_home / ".jarvis" / "platforms"
    plugins.mkdir(parents=True)
    (plugins / "echo.py").write_text(
        "def register(register_platform):\n"
        "    register_platform('echo', lambda spec: None, 'Echo test platform')\n"
    )
    (plugins / "broken.py").write_text("raise RuntimeError('boom')\n")
    from jarvis_graph.platforms.registry import reset_plugins

    reset_plugins()
    try:
        result = invoke(["models", "list", "-w", str(workspace)])
    finally:
        reset_plugins()
    assert result.exit_code == 0, result.output
    for name in ("openai", "scripted", "echo", "Echo test platform", "broken.py"):
        assert name in result.output


@pytest.mark.parametrize("fmt", ["mermaid", "ascii"])
def test_graph_draw(fmt: str) -> None:
    result = invoke(["graph", "draw", "agent", "--format", fmt])
    assert result.exit_code == 0
    for node in ("start_task", "call_model", "confirm_tools", "run_tools", "complete_task"):
        assert node in result.output


def test_chat_repl_handlers(workspace: Path, tmp_path: Path) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    script = write_script(
        tmp_path / "chat.yaml",
        [{"text": "You need milk."}, {"text": "Bye."}],
    )
    lines = "\n".join(
        [
            "!echo from-shell",
            "/help",
            "/tools",
            "/bogus",
            "what is in @notes.txt?",
            "thanks",
            "/sessions",
            "/exit",
        ]
    )
    result = invoke(
        ["chat", "-w", str(workspace), "--platform", "scripted", "--script", str(script)],
        input=lines + "\n",
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "from-shell" in out
    assert "@path" in out  # /help
    assert "read_code" in out  # /tools
    assert "unknown command /bogus" in out
    assert "You need milk." in out and "Bye." in out
    tid = session_id(out)
    shown = invoke(["sessions", "show", tid, "-w", str(workspace)]).output
    assert "remember the milk" in shown  # @notes.txt was attached


def test_unexpected_error_is_reported_and_session_stays_resumable(
    calc_ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jarvis_graph.runtime.services import RunServices

    real = RunServices.model

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(RunServices, "model", broken)
    args = run_args(calc_ws, calc_script(tmp_path), "-n", "--yes", "--new-thread", "bug", "go")
    failed = invoke(args)
    assert failed.exit_code == 1
    assert "RuntimeError: disk on fire" in failed.output
    assert "jarvis sessions resume bug" in failed.output
    monkeypatch.setattr(RunServices, "model", real)
    resumed = invoke(["sessions", "resume", "bug", "-w", str(calc_ws)])
    assert resumed.exit_code == 0, resumed.output
    assert ANSWER in resumed.output


def test_missing_local_model_file_is_a_clear_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = workspace / "nope.gguf"
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(missing))
    result = invoke(["run", "-n", "-w", str(workspace), "x"])  # no key: the local model
    assert result.exit_code == 1
    assert "JARVIS_LOCAL_MODEL_PATH" in result.output and "does not exist" in result.output
