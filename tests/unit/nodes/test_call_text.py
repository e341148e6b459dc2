"""Tool calls a model wrote as text: which replies hold one, and which are prose."""

from __future__ import annotations

import pytest

from jarvis_graph.nodes.call_text import call_in_text

TOOLS = {"read_code", "execute_script", "soil_composition_analyze"}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"name": "read_code", "arguments": {"path": "a.py"}}', "a JSON object calling"),
        ('Here:\n```json\n{"tool": "read_code", "arguments": {}}\n```', "a JSON object calling"),
        ("<tool_call>\n{}\n</tool_call>", "a <tool_call> tag"),
        (
            'thought: look\ntool: soil_composition_analyze\narguments: location="Boston"',
            "a call of 'soil_composition_analyze' written as lines",
        ),
        ("name: read_code\nargs:\n  path: a.py", "a call of 'read_code' written as lines"),
    ],
)
def test_calls_written_as_text_are_found(text: str, found: str) -> None:
    assert (call_in_text(text, TOOLS) or "").startswith(found)


@pytest.mark.parametrize(
    "text",
    [
        "Use read_code to see the file.",
        "The read_code tool: it reads files.\narguments: none given",  # no name line
        "tool: hammer\narguments: nails",  # not a tool of the run
        "name: read_code",  # a name without arguments
        "The answer is 42.",
    ],
)
def test_prose_is_not_a_call(text: str) -> None:
    assert call_in_text(text, TOOLS) is None
