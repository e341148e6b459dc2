"""``jarvis chains`` and chains offered to ``jarvis run``, as a user drives them.

Real processes, a real terminal for the confirmation prompt, real files and a real test
run for the built-in ``test_failures`` chain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from jarvis_graph.context import JarvisContext
from jarvis_graph.runtime.services import RunServices
from tests.support.cli import run_process, write_script
from tests.support.fake_openai import FAKE_KEY, ToolCall
from tests.support.terminal import Terminal

REPO = Path(__file__).resolve().parents[2]
BROKEN = "steps:\n  - id: a\n    tool: list_files\n  - id: b\n    tool: no_such_tool\n"
COPY = """\
description: Copy a file and list the folder.
input:
  src: {type: string, description: File to copy.}
steps:
  - id: read
    tool: read_code
    args: {path: "${input.src}"}
  - id: write
    tool: write_file
    args: {path: copy.txt, content: "${steps.read.result}"}
output: "copied ${input.src}"
"""


def project_chain(workspace: Path, name: str, text: str) -> Path:
    folder = workspace / ".jarvis" / "chains"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_list_shows_builtin_and_project_chains_and_problems_with_file_and_line(
    workspace: Path,
) -> None:
    project_chain(workspace, "copy", COPY)
    broken = project_chain(workspace, "broken", BROKEN)

    done = run_process(["chains", "list"], cwd=workspace)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(
        line.startswith("copy\t.jarvis/chains/copy.yaml\tread:read_code → write:write_file")
        for line in lines
    )
    assert any(
        line.startswith("todo_report\tbuilt-in\tfind:search_files → write:write_file")
        for line in lines
    )
    assert any(line.startswith("test_failures\tbuilt-in\t") for line in lines)
    assert any(
        line.startswith("broken\t") and line.endswith("(cannot run: see below)") for line in lines
    )
    assert f"problem: {broken}:5: step 'b' calls unknown tool 'no_such_tool'" in done.stdout


def test_show_prints_inputs_steps_and_output(workspace: Path) -> None:
    project_chain(workspace, "copy", COPY)

    done = run_process(["chains", "show", "copy"], cwd=workspace)

    assert done.returncode == 0
    assert "input:\n  src: string, required — File to copy." in done.stdout
    assert "  2. write: write_file (on error: stop)" in done.stdout
    assert "output:\n  copied ${input.src}" in done.stdout


def test_run_by_hand_prints_each_step_and_the_output(workspace: Path) -> None:
    project_chain(workspace, "copy", COPY)
    (workspace / "a.txt").write_text("hello chain\n")

    done = run_process(
        ["chains", "run", "copy", "--args", '{"src": "a.txt"}', "--yes"], cwd=workspace
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ read (read_code) succeeded\n✓ write (write_file) succeeded" in done.stdout
    assert "Chain copy completed: read succeeded, write succeeded.\ncopied a.txt" in done.stdout
    assert "hello chain" in (workspace / "copy.txt").read_text()
    sessions = run_process(["sessions", "list"], cwd=workspace)
    assert "\tcompleted\t" in sessions.stdout and "chain copy" in sessions.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["nosuch"],
            "error: no chain named 'nosuch'; chains: broken, copy, test_failures, todo_report",
        ),
        (["copy", "--args", "{src: a}"], "error: --args is not valid JSON"),
        (["copy", "--args", "[1]"], "error: --args must be a JSON object"),
        (["copy"], "error: chain copy needs input 'src' (string)"),
        (["copy", "--args", '{"src": 3}'], "error: chain copy: input 'src' must be string, got 3"),
        (["broken"], "error: chain broken cannot run:\n  {broken}:5: step 'b' calls unknown tool"),
    ],
)
def test_bad_input_is_a_clear_error_with_exit_2_and_nothing_runs(
    workspace: Path, args: list[str], says: str
) -> None:
    project_chain(workspace, "copy", COPY)
    broken = project_chain(workspace, "broken", BROKEN)

    done = run_process(["chains", "run", *args], cwd=workspace)

    assert done.returncode == 2, done.stdout + done.stderr
    assert says.format(broken=broken) in done.stderr
    assert not (workspace / "copy.txt").exists()
    assert not (workspace / ".jarvis" / "sessions.sqlite").exists()


def test_a_non_interactive_run_declines_the_risky_step_and_exits_1(workspace: Path) -> None:
    project_chain(workspace, "copy", COPY)
    (workspace / "a.txt").write_text("x\n")

    done = run_process(["chains", "run", "copy", "-a", '{"src": "a.txt"}', "-n"], cwd=workspace)

    assert done.returncode == 1
    assert "✗ write (write_file) declined\n  not run: this run is non-interactive" in done.stdout
    assert "Chain copy stopped: read succeeded, write declined." in done.stdout
    assert not (workspace / "copy.txt").exists()


def test_the_confirmation_prompt_in_a_terminal_and_an_edit(workspace: Path) -> None:
    project_chain(workspace, "copy", COPY)
    (workspace / "a.txt").write_text("x\n")

    term = Terminal(["chains", "run", "copy", "--args", '{"src": "a.txt"}'], workspace)
    term.expect('confirm write_file (step write of chain copy) {"path": "copy.txt"')
    term.expect("[a]pprove, [e]dit arguments, [r]eject?")
    term.type("e")
    term.expect("new arguments as JSON:")
    term.type('{"path": "mine.txt", "content": "edited"}')
    term.expect("✓ write (write_file) succeeded")

    assert term.exit_code() == 0
    assert (workspace / "mine.txt").read_text() == "edited"
    assert not (workspace / "copy.txt").exists()


def test_a_script_step_that_worked_gives_its_output_as_its_result(workspace: Path) -> None:
    project_chain(
        workspace,
        "scripts",
        """\
        steps:
          - id: good
            tool: execute_script
            args: {script: "echo hello"}
          - id: bad
            tool: execute_script
            args: {script: "echo oops; exit 3"}
        output: "good said: ${steps.good.result}bad said: ${steps.bad.result}"
        """,
    )

    done = run_process(["chains", "run", "scripts", "--yes", "-v"], cwd=workspace)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ good (execute_script) succeeded\n  hello\n" in done.stdout  # as -v shows it
    assert "good said: hello\nbad said: exit code: 3\noops" in done.stdout
    assert "exit code: 0" not in done.stdout


def test_a_step_that_runs_long_shows_a_live_line_in_a_terminal(workspace: Path) -> None:
    from tests.adversarial.test_integrity import WAIT_RELEASE

    project_chain(
        workspace,
        "slow",
        f"""\
        steps:
          - id: build
            tool: execute_script
            args: {{script: "touch holding; {WAIT_RELEASE}; echo built"}}
        """,
    )

    term = Terminal(["chains", "run", "slow", "--yes"], workspace)
    term.expect(r"build \(execute_script\) running · \d+\.\ds", regex=True)
    (workspace / "release").touch()  # the step ends once its live line was seen
    term.expect("✓ build (execute_script) succeeded")

    assert term.exit_code() == 0
    assert (workspace / "holding").exists()


def test_builtin_todo_report_writes_its_report_outside_later_searches(workspace: Path) -> None:
    (workspace / "app.py").write_text("x = 1  # TODO: handle zero\n# FIXME: slow\nok = 2\n")

    for _ in range(2):  # the second run must not find the first run's report
        done = run_process(["chains", "run", "todo_report", "--yes"], cwd=workspace)
        assert done.returncode == 0, done.stdout + done.stderr

    report = (workspace / ".jarvis" / "reports" / "todo.md").read_text()
    assert (
        "2 matching lines in 1 file:\napp.py:1:x = 1  # TODO: handle zero\napp.py:2:# FIXME: slow"
        in report
    )
    assert "Report: succeeded (.jarvis/reports/todo.md)" in done.stdout


def test_builtin_test_failures_runs_the_tests_and_returns_the_failures(workspace: Path) -> None:
    (workspace / "test_calc.py").write_text(
        "def test_good():\n    assert 1 + 1 == 2\n\n"
        "def test_bad():\n    assert 2 * 2 == 5, 'multiplication is off'\n"
    )
    command = f"{sys.executable} -m pytest -q -rfE -p no:cacheprovider"

    done = run_process(
        ["chains", "run", "test_failures", "--yes", "--args", json.dumps({"command": command})],
        cwd=workspace,
    )

    assert done.returncode == 0, (
        done.stdout + done.stderr
    )  # failing tests are a result, not an error
    assert "exit code: 1" in done.stdout
    assert "1 failed, 1 passed" in done.stdout
    assert "FAILED test_calc.py::test_bad - AssertionError: multiplication is off" in done.stdout
    assert "whole log in .jarvis/reports/test_output.txt" in done.stdout
    assert "def test_bad" in (workspace / ".jarvis" / "reports" / "test_output.txt").read_text()


def test_a_run_offers_chains_as_tools_and_shows_them_in_the_tree(
    workspace: Path, tmp_path: Path
) -> None:
    project_chain(workspace, "copy", COPY)
    project_chain(workspace, "broken", BROKEN)
    (workspace / "a.txt").write_text("from a\n")
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "copy", "args": {"src": "a.txt"}}]},
            {"text": "Copied. !!!COMPLETE!!!"},
        ],
    )

    done = run_process(
        ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), "copy a.txt"],
        cwd=workspace,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert (
        "broken.yaml:5: step 'b' calls unknown tool 'no_such_tool'" in out
    )  # said, and the run went on
    assert "↳ copy Chain copy completed: read succeeded, write succeeded." in done.stdout
    # each step is shown as it ends, before the chain's result comes back
    lines = done.stdout.splitlines()
    steps = [lines.index("  ✓ copy · read (read_code) succeeded")]
    steps.append(lines.index("  ✓ copy · write (write_file) succeeded"))
    result = next(i for i, line in enumerate(lines) if "↳ copy Chain copy completed" in line)
    assert steps[0] < steps[1] < result, done.stdout
    assert (workspace / "copy.txt").read_text().startswith("1 | from a") or "from a" in (
        workspace / "copy.txt"
    ).read_text()
    thread = done.stdout.split("session ", 1)[1].split()[0]
    tree = run_process(["sessions", "show", thread, "--tree"], cwd=workspace)
    assert (
        "└ chain copy · completed · read succeeded, write succeeded → Chain copy completed"
        in tree.stdout
    )


def test_which_chains_a_run_is_offered(workspace: Path, tmp_path: Path) -> None:
    project_chain(workspace, "copy", COPY)

    def tools(**ctx: object) -> set[str]:
        return set(RunServices(JarvisContext(workspace=str(workspace), **ctx)).tools)

    chains = {"copy", "todo_report", "test_failures"}
    assert chains <= tools(platform="scripted")
    assert chains & tools(platform="local") == {"copy"}  # the embedded model: the user's own only
    (workspace / ".jarvis" / "config.yaml").write_text("chains: on\n")
    assert chains <= tools(platform="local")
    (workspace / ".jarvis" / "config.yaml").write_text("chains: off\n")
    assert not chains & tools(platform="scripted")
    (workspace / ".jarvis" / "config.yaml").write_text("")
    role = "read_code,write_file,copy"  # a role's tools: its chains, if their steps' tools too
    assert chains & tools(platform="scripted", only_tools=role) == {"copy"}
    assert not chains & tools(platform="scripted", only_tools="read_code,copy")  # no write_file


@pytest.mark.parametrize(
    "command",
    [["code", "-n", "-r", "say hi"], ["run", "-n", "-c", "reviewer", "say hi"]],
    ids=["code", "role"],
)
def test_runs_without_a_builtin_chains_tools_leave_it_out_quietly(
    command: list[str], workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    monkeypatch.setenv("JARVIS_GIT_NAME", "Test")
    monkeypatch.setenv("JARVIS_GIT_EMAIL", "test@example.com")
    project_chain(workspace, "copy", COPY)  # the user's own, calling write_file
    project_chain(workspace, "broken", BROKEN)
    script = write_script(tmp_path / "s.yaml", [{"text": "Hi. !!!COMPLETE!!!"}])

    done = run_process([*command, "--platform", "scripted", "--script", str(script)], workspace)

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    # jarvis code has no write_file, the reviewer no execute_script: the built-in chains
    # that call them are left out without a word
    assert "todo_report.yaml" not in out and "test_failures.yaml" not in out
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    if command[0] == "code":  # the user's chains are still checked, and said
        assert len(warnings) == 2, out
        assert "broken.yaml:5: step 'b' calls unknown tool 'no_such_tool'" in warnings[0]
        assert "copy.yaml:9: step 'write' calls unknown tool 'write_file'" in warnings[1]
    else:  # the role names none of the chains: none is offered, none is checked
        assert warnings == [], out
    assert "Hi." in done.stdout


def test_a_provider_model_gets_chains_as_tools_with_their_schema(server: Any, ws: Path) -> None:
    """``jarvis run`` on the openai platform (loopback fake provider) calls a built-in chain."""
    (ws / "app.py").write_text("x = 1  # TODO: remove\n")
    server.reply(tool_calls=[ToolCall("todo_report", {"pattern": "TODO"}, id="call_chain")])
    server.reply(text="One TODO, in app.py. !!!COMPLETE!!!")
    args = ["run", "-n", "--yes", "--platform", "openai", "--base-url", server.base_url]
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", *args, "--model", "fake-model", "list todos"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    offered = {t["function"]["name"]: t["function"] for t in server.requests[0]["tools"]}
    schema = offered["todo_report"]["parameters"]
    assert schema["properties"]["report"]["default"] == ".jarvis/reports/todo.md"
    assert schema["required"] == []
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("Chain todo_report completed: find succeeded, write")
    assert "app.py:1:x = 1  # TODO: remove" in (ws / ".jarvis" / "reports" / "todo.md").read_text()
