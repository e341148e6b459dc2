"""Prompt texts and tool schemas are snapshot-tested, so changes show up in review.

Accept an intended change with ``UPDATE_SNAPSHOTS=1`` and review the snapshot diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.context import JarvisContext
from jarvis_graph.memory.tools import MEMORY_TOOLS
from jarvis_graph.prompts import load_prompt
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools.builtin import BUILTIN_TOOLS

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _check(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_system_prompt_template_snapshot() -> None:
    _check("system.md", load_prompt("system"))


def test_builtin_tool_schemas_snapshot() -> None:
    schemas = [convert_to_openai_tool(tool) for tool in BUILTIN_TOOLS]
    _check("builtin_tools.json", json.dumps(schemas, indent=2, sort_keys=True) + "\n")


def test_memory_tool_schemas_snapshot() -> None:
    schemas = [convert_to_openai_tool(tool) for tool in MEMORY_TOOLS]
    _check("memory_tools.json", json.dumps(schemas, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("non_interactive", [False, True])
def test_system_prompt_is_filled_in(workspace: Path, non_interactive: bool) -> None:
    ctx = JarvisContext(workspace=str(workspace), non_interactive=non_interactive)
    text = RunServices(ctx).system_prompt()
    assert str(workspace) in text and "!!!COMPLETE!!!" in text
    assert "execute_script" in text and "{" not in text.replace("{marker}", "")
    assert ("do not ask questions" in text) == non_interactive


def test_unknown_prompt_name_fails_clearly() -> None:
    with pytest.raises(FileNotFoundError):
        load_prompt("no-such-prompt")
