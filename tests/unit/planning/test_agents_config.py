"""The agents YAML loader: defaults, checks and file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.config import ConfigError
from jarvis_graph.multi.config import check_tools, default_agents, load_agents


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_and_who_completes(tmp_path: Path) -> None:
    config = load_agents(
        _write(
            tmp_path,
            "main_agent: a\nagents:\n  - name: a\n  - name: b\n  - name: c\n"
            "    auto_complete: true\n",
        )
    )
    assert config.max_handoffs == 10 and config.agent("b").summary_on_send is True
    assert [config.completes(n) for n in "abc"] == [True, False, True]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("main_agent: a\nagents:\n  - name: a\n  - name: a\n", "agent name 'a' is used twice"),
        ("main_agent: a\nagents: []\n", "agents.yaml:2: agents: List should have at least 1"),
        ("agents:\n  - name: a\n", "agents.yaml:1: main_agent: Field required"),
        ("- just a list\n", "agents.yaml:1: an agents file is a mapping"),
        ("main_agent: a\nagents:\n  - name: pick_expert\n", "'pick_expert' is reserved"),
    ],
)
def test_bad_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_agents(_write(tmp_path, text))
    assert message in str(err.value)


def test_globs_must_match_a_tool(tmp_path: Path) -> None:
    config = load_agents(
        _write(tmp_path, "main_agent: a\nagents:\n  - name: a\n    tools: [read_*, 'time__*']\n")
    )
    check_tools(config, {"read_code", "time__now"})
    with pytest.raises(
        ConfigError, match=r"agents.yaml:4: agent 'a' names unknown tool 'time__\*'"
    ):
        check_tools(config, {"read_code"})


def test_the_shipped_team_loads() -> None:
    assert default_agents().names() == ["lead", "coder", "reviewer"]
