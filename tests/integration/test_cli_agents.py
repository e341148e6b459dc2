"""`jarvis agents list` and `jarvis run -c NAME`: built-in and user agents, roles and teams."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli import run_process, write_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_list_shows_built_ins_and_the_projects_definitions_replacing_them(
    workspace: Path, isolated_home: Path
) -> None:
    agents = workspace / ".jarvis" / "agents"
    agents.mkdir(parents=True)
    (agents / "docs.yaml").write_text(
        "description: Writes and fixes the docs.\nsystem_prompt: You write docs.\n"
    )
    (agents / "mine.yaml").write_text(
        "roles:\n  - {name: reviewer, description: Our own reviewer., tools: [read_code]}\n"
    )
    user = isolated_home / ".jarvis" / "agents"
    user.mkdir(parents=True)
    shutil.copy(EXAMPLES / "experts.yaml", user / "experts.yaml")
    done = run_process(["agents", "list"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    rows = {line.split("\t")[0]: line.split("\t") for line in done.stdout.splitlines()}
    assert rows["jarvis"][1:3] == ["agent", "built-in"]
    assert rows["planner"][1:3] == ["agent", "built-in"]
    assert rows["team"][1:3] == ["multi-agent", "built-in"]
    assert rows["tester"][1:3] == ["role", "built-in"]
    assert rows["reviewer"] == ["reviewer", "role", str(agents / "mine.yaml"), "Our own reviewer."]
    assert rows["docs"] == [
        "docs",
        "agent",
        str(agents / "docs.yaml"),
        "Writes and fixes the docs.",
    ]
    assert rows["experts"][1] == "multi-agent"
    assert rows["experts"][3] == "A team of generalist, data, code."


def test_a_role_runs_with_its_instructions_and_only_its_tools(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "You review code", "tool_calls": [
                {"name": "execute_script", "args": {"script": "echo ran"}}]},
            {"when": "You review code", "text": "Reviewed, nothing run. !!!COMPLETE!!!"},
            {"text": "the role's instructions are missing !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    args = ["run", "-c", "reviewer", "review app.py", "-n", "--yes"]
    done = run_process([*args, "--platform", "scripted", "--script", str(script)], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    refused = "There is no tool named 'execute_script'. Available tools: ask_user, list_files,"
    assert f"{refused} read_code, search_files." in done.stdout
    assert "Reviewed, nothing run." in done.stdout


def test_a_team_runs_by_name_like_jarvis_multi(workspace: Path) -> None:
    shutil.copytree(EXAMPLES / "workspace", workspace, dirs_exist_ok=True)
    (workspace / ".jarvis" / "agents").mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLES / "agents.yaml", workspace / ".jarvis" / "agents" / "pair.yaml")
    script = str(EXAMPLES / "multi_script.yaml")
    args = ["run", "-c", "pair", "Check that report.py's total matches data.csv", "--yes"]
    done = run_process([*args, "--platform", "scripted", "--script", script], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "report.py prints 4 rows, total 270.00, which matches data.csv." in done.stdout


def test_bad_definitions_are_one_error_line_and_exit_2(workspace: Path) -> None:
    agents = workspace / ".jarvis" / "agents"
    agents.mkdir(parents=True)
    (agents / "odd.yaml").write_text("description: odd\ntools: [read_cod]\n")
    odd = f"agent 'odd' ({agents / 'odd.yaml'}) names tool 'read_cod', which this run does not"
    cases = {
        ("run", "-c", "nosuch", "x"): "error: no agent definition 'nosuch'; there are: jarvis,",
        ("run", "-c", "odd", "x"): odd,
        ("run", "-c", "team", "--plan", "x"): "error: --plan splits a task for one agent; 'team'",
    }
    for args, message in cases.items():
        done = run_process(
            [*args, "--platform", "scripted", "--script", "none.yaml"], cwd=workspace
        )
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
    (agents / "broken.yaml").write_text("roles: [\n")
    done = run_process(["agents", "list"], cwd=workspace)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {agents / 'broken.yaml'}:2: invalid YAML")
