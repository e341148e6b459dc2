"""The calculator computes inside the OS sandbox at each level, reading the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph import sandbox
from jarvis_graph.config import Settings
from jarvis_graph.secrets import minimal_environment
from jarvis_graph.tools import calculator


@pytest.mark.parametrize("level", ["bwrap", "landlock"])
def test_a_calculation_reads_the_workspace_in_the_sandbox(workspace: Path, level: str) -> None:
    (workspace / "rows.csv").write_text("n\n1\n2\n3\n", encoding="utf-8")
    settings = Settings(sandbox=level)
    confined = sandbox.prepare_for(
        settings, workspace, workspace, minimal_environment(), workspace_writable=False
    )
    assert confined.level == level
    expression = "sum(int(r['n']) for r in csv.DictReader(open('rows.csv')))"
    value = calculator.evaluate(expression, workspace=workspace, sandbox=confined)
    assert value == "6"
    assert confined.cleanup == []  # its cgroup and private folders are gone
