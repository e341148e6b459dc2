"""Jarvis' <PATCH file=...> blocks in the text protocol become edit_file calls."""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.config import Settings
from jarvis_graph.platforms.text_protocol import ProseStream, parse_tool_calls
from jarvis_graph.platforms.text_protocol_model import TextProtocolChatModel, render_tools_prompt
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.builtin import read_code
from jarvis_graph.tools.code_tools import edit_file, edit_file_impl
from tests.unit.platforms.test_text_protocol import FakeInner

PATCH = (
    'I will fix it.\n```\n<PATCH file="calc.py">\n<DIFF>\n<SEARCH>\n    return a - b\n</SEARCH>\n'
    "<REPLACE>\n    return a + b\n</REPLACE>\n</DIFF>\n</PATCH>\n```\nThen I read it back.\n"
    "<TOOL_CALL>\nname: read_code\narguments:\n  path: calc.py\n</TOOL_CALL>"
)


def test_patch_blocks_become_edit_file_calls_before_the_other_calls() -> None:
    result = parse_tool_calls(PATCH)
    assert [c["name"] for c in result.calls] == ["edit_file", "read_code"]
    assert result.calls[0]["args"] == {
        "files": [
            {
                "path": "calc.py",
                "diffs": [{"search": "    return a - b", "replace": "    return a + b"}],
            }
        ]
    }
    assert result.text == "I will fix it.\n\nThen I read it back."


def test_a_broken_patch_block_is_an_error_for_the_model() -> None:
    result = parse_tool_calls('<PATCH file="a.py">\nplease change x\n</PATCH>')
    assert result.calls == []
    assert result.errors[0]["name"] == "edit_file" and "has no edits" in result.errors[0]["error"]


def test_streamed_prose_stops_at_a_patch_block() -> None:
    stream = ProseStream()
    for i in range(0, len(PATCH), 5):
        stream.feed(PATCH[i : i + 5])
    assert stream.shown == "I will fix it."
    assert parse_tool_calls(PATCH).text.startswith(stream.shown)


def test_the_chat_model_turns_a_patch_into_an_edit(workspace: Path) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = TextProtocolChatModel(inner=FakeInner(reply=PATCH, seen=[])).bind_tools(
        [read_code, edit_file]
    )
    reply = model.invoke("fix add")
    call = reply.tool_calls[0]
    assert call["name"] == "edit_file"
    out = edit_file_impl(ToolEnv(workspace.resolve(), Settings()), call["args"]["files"])
    assert out.startswith("Edited calc.py")
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_the_tools_prompt_teaches_patch_blocks_only_with_edit_file() -> None:
    assert "<PATCH file=" in render_tools_prompt([read_code, edit_file])
    assert "<PATCH" not in render_tools_prompt([read_code])


def test_one_tool_per_turn_counts_patch_blocks() -> None:
    two = PATCH.replace(
        "```\nThen", '<PATCH file="b.py"><SEARCH>x</SEARCH><REPLACE>y</REPLACE></PATCH>\n```\nThen'
    )
    result = parse_tool_calls(two, single_tool_per_turn=True)
    assert [c["name"] for c in result.calls] == ["edit_file"]
    assert result.calls[0]["args"]["files"][0]["path"] == "calc.py"
    assert [e["name"] for e in result.errors] == ["edit_file", "read_code"]
    assert all("only one tool call per turn" in e["error"] for e in result.errors)
    assert all("this reply had 3: the first one ran" in e["error"] for e in result.errors)


def test_an_invented_result_after_a_patch_is_cut_off() -> None:
    reply = PATCH.split("Then")[0] + '<TOOL_RESULT name="edit_file">Edited</TOOL_RESULT>\nAll done.'
    result = parse_tool_calls(reply)
    assert [c["name"] for c in result.calls] == ["edit_file"]
    assert "All done" not in result.text
