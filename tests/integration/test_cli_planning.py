"""``jarvis run --plan``, ``jarvis multi`` and the sub-run tree of ``jarvis sessions show``.

The example scripts and agents files under ``examples/`` drive real tools in a copy of the
example workspace, with the real SQLite session store.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.support.cli import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLAN_TASK = "How many rows has data.csv, and what total does report.py print?"


@pytest.fixture
def example_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(EXAMPLES / "workspace", ws, ignore=shutil.ignore_patterns(".jarvis"))
    return ws


def _session(output: str) -> str:
    match = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", output)
    assert match, output
    return match.group(1)


def test_run_with_plan_splits_runs_children_and_shows_the_tree(example_ws: Path) -> None:
    script = str(EXAMPLES / "plan_script.yaml")
    args = ["run", "--plan", "-n", "--yes", "-w", str(example_ws)]
    result = invoke([*args, "--platform", "scripted", "--script", script, PLAN_TASK])
    assert result.exit_code == 0, result.output
    assert "▤ plan (2 steps): [rows] Count the data rows of data.csv; [total]" in result.output
    assert "  ✓ [rows] completed: data.csv has 4 data rows." in result.output
    assert "data.csv has 4 data rows and report.py prints a total of 270.00." in result.output
    shown = invoke(["sessions", "show", _session(result.output), "-w", str(example_ws)])
    assert shown.exit_code == 0, shown.output
    tree = shown.output.split("sub-runs", 1)[1].splitlines()[1:]
    assert len(tree) == 5, shown.output  # two steps, each with its agent, then the parent's agent
    # The two steps run in parallel: either may have started first; each agent follows its step.
    steps = {tree[i].split(" · ")[2][:9]: (tree[i], tree[i + 1]) for i in (0, 2)}
    assert set(steps) == {"Count the", "Run repor"}, shown.output
    rows_step, rows_agent = steps["Count the"]
    assert rows_step.startswith("  └ run_step · completed · Count the data rows")
    assert rows_agent.startswith("    └ agent · completed · Count the data rows")
    assert "→ data.csv has 4 data rows." in rows_agent
    total_step, total_agent = steps["Run repor"]
    assert total_step.startswith("  └ run_step · completed · Run report.py")
    assert "total 270.00" in total_agent  # the child really ran report.py
    assert tree[4].startswith("  └ agent · completed · How many rows")
    assert "[rows] completed" in shown.output  # the blocks written back, shown verbatim


def test_run_without_plan_is_the_plain_agent(example_ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text('turns:\n  - text: "plain !!!COMPLETE!!!"\n')
    args = ["run", "--no-plan", "-n", "-w", str(example_ws), "--platform", "scripted"]
    result = invoke([*args, "--script", str(script), "hello"])
    assert result.exit_code == 0 and "plain" in result.output and "▤ plan" not in result.output


def test_multi_hands_off_and_answers(example_ws: Path) -> None:
    args = ["multi", "-c", str(EXAMPLES / "agents.yaml"), "--yes", "-w", str(example_ws)]
    args += ["--platform", "scripted", "--script", str(EXAMPLES / "multi_script.yaml")]
    result = invoke([*args, "Check that report.py's total matches data.csv"])
    assert result.exit_code == 0, result.output
    assert "⇄ lead -> analyst (hand-off 1)" in result.output
    assert "⇄ analyst -> lead (hand-off 2)" in result.output
    assert "total 270.00, which matches data.csv." in result.output
    shown = invoke(["sessions", "show", _session(result.output), "-w", str(example_ws)])
    tree = shown.output.split("sub-runs", 1)[1]
    assert "└ lead · handed off to analyst · Check that report.py's total" in tree
    assert "└ analyst · completed · Message from lead:" in tree


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "main_agent: lead\nagents:\n  - name: [lead\n",
            r"agents.yaml:4: invalid YAML: .* started at line 3\)",
        ),
        (
            "main_agent: boss\nagents:\n  - name: lead\n",
            r"agents.yaml:1: main_agent 'boss' is not one of the agents \(lead\)",
        ),
        (
            "main_agent: lead\nagents:\n  - name: lead\n    tools: [read_code, nuke]\n",
            r"agents.yaml:4: agent 'lead' names unknown tool 'nuke'; known tools: ask_document, "
            r"ask_user",
        ),
        (
            "main_agent: lead\nagents:\n  - name: lead\n    colour: red\n",
            r"agents.yaml:4: agents.0.colour: Extra inputs are not permitted",
        ),
    ],
)
def test_a_bad_agents_file_is_a_clear_error(
    tmp_path: Path, workspace: Path, text: str, expected: str
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    result = invoke(["multi", "-c", str(path), "-w", str(workspace), "task"])
    assert result.exit_code == 1
    assert re.search(expected, " ".join(result.output.split())), result.output
    assert not (workspace / ".jarvis" / "sessions.sqlite").exists()  # nothing ran


def test_a_missing_agents_file_is_a_clear_error(tmp_path: Path, workspace: Path) -> None:
    result = invoke(["multi", "-c", str(tmp_path / "nope.yaml"), "-w", str(workspace), "task"])
    assert result.exit_code == 1 and "nope.yaml' not found" in result.output


def test_multi_route_picks_the_expert(example_ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "route.yaml"
    script.write_text(
        "turns:\n"
        "  - when: 'Pick the agent best suited'\n"
        "    tool_calls: [{name: ExpertChoice, args: {agent: data, reason: it is about CSV}}]\n"
        "  - when: \"agent 'data'\"\n"
        "    text: 'Three rows cost over 20. !!!COMPLETE!!!'\n",
        encoding="utf-8",
    )
    args = ["multi", "--route", "-c", str(EXAMPLES / "experts.yaml"), "-w", str(example_ws)]
    args += ["--platform", "scripted", "--script", str(script)]
    result = invoke([*args, "Which rows of data.csv cost over 20?"])
    assert result.exit_code == 0, result.output
    assert "Three rows cost over 20." in result.output
    shown = invoke(["sessions", "show", _session(result.output), "-w", str(example_ws)])
    assert "routed to data: it is about CSV" in shown.output
    assert "└ data · completed · Which rows of data.csv" in shown.output
