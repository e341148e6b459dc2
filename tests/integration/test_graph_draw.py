"""``jarvis graph draw --format ascii`` fits the terminal: the drawing, or its edges."""

from __future__ import annotations

import re
from pathlib import Path

from jarvis_graph.graphs.agent import graph as agent
from tests.support.cli import run_process
from tests.support.terminal import COLUMNS, Terminal


def _edges(text: str) -> set[tuple[str, str, bool]]:
    """The edges an edge listing shows (continuation lines joined to their line)."""
    joined = re.sub(r",\n\s+", ", ", text)
    found = set()
    for source, arrow, targets in re.findall(r"^(\S+) (-->|-\.->) (.+)$", joined, re.MULTILINE):
        found |= {(source, target, arrow == "-.->") for target in targets.split(", ")}
    return found


def test_a_drawing_wider_than_the_terminal_is_listed_as_its_edges(workspace: Path) -> None:
    expected = {(e.source, e.target, bool(e.conditional)) for e in agent.get_graph().edges}

    term = Terminal(["graph", "draw", "agent", "--format", "ascii"], workspace)
    assert term.exit_code() == 0
    shown = term.screen

    assert "| call_model |" not in shown
    assert max(len(line) for line in shown.splitlines()) <= COLUMNS
    assert f"columns wide, more than {COLUMNS}: its edges instead" in shown
    assert _edges(shown) == expected
    narrow = run_process(["graph", "draw", "agent", "-f", "ascii", "--width", "60"], workspace)
    assert narrow.returncode == 0, narrow.stdout + narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
    assert _edges(narrow.stdout) == expected


def test_a_drawing_that_fits_or_width_0_is_drawn(workspace: Path) -> None:
    planner = run_process(["graph", "draw", "planner", "-f", "ascii", "--width", "80"], workspace)
    assert planner.returncode == 0, planner.stdout + planner.stderr
    assert "| decide_plan |" in planner.stdout and "-->" not in planner.stdout

    whole = run_process(["graph", "draw", "agent", "-f", "ascii", "--width", "0"], workspace)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert "| call_model |" in whole.stdout
    assert all(line == line.rstrip() for line in whole.stdout.splitlines())  # no padding
