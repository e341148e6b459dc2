"""The scripted platform: script validation, turn choice, streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

from jarvis_graph.platforms.registry import PlatformError
from jarvis_graph.platforms.scripted import (
    ScriptedChatModel,
    ScriptExhaustedError,
    load_script,
)

SCRIPT = """\
turns:
  - text: "Let me look."
    tool_calls:
      - name: list_files
        args: {path: "."}
      - name: read_code
        args: {path: "a.py", start_line: 2}
        id: my-id
  - text: "Two files.  Done !!!COMPLETE!!!"
"""


def write(tmp_path: Path, text: str, name: str = "script.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_yaml_script(tmp_path: Path) -> None:
    script = load_script(write(tmp_path, SCRIPT))
    assert len(script.turns) == 2
    assert script.turns[0].tool_calls[1].args == {"path": "a.py", "start_line": 2}
    assert script.turns[1].tool_calls == []


def test_load_json_script_and_bare_list(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([{"text": "hi"}]), "script.json")
    assert load_script(path).turns[0].text == "hi"
    path = write(tmp_path, "- text: hello\n")
    assert load_script(path).turns[0].text == "hello"


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(PlatformError, match=r"script file .*nope\.yaml.* not found"):
        load_script(missing)
    with pytest.raises(PlatformError, match="script file '' not found"):
        load_script("")


def test_bad_yaml_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - text: [unclosed\n")
    with pytest.raises(PlatformError, match=r"is not valid YAML"):
        load_script(path)


def test_bad_json_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "{turns: nope", "script.json")
    with pytest.raises(PlatformError, match=r"is not valid JSON"):
        load_script(path)


def test_empty_turn_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - text: ok\n  - {}\n")
    with pytest.raises(PlatformError) as info:
        load_script(path)
    assert "turns.1" in str(info.value)
    assert "a turn needs `text`, `tool_calls` or both" in str(info.value)


def test_unknown_field_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - text: ok\n    txet: typo\n")
    with pytest.raises(PlatformError, match=r"turns\.0\.txet: Extra inputs are not permitted"):
        load_script(path)
    path = write(tmp_path, "turns:\n  - tool_calls: [{name: x, arguments: {}}]\n")
    with pytest.raises(PlatformError, match=r"turns\.0\.tool_calls\.0\.arguments"):
        load_script(path)


def test_script_needs_turns(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="turns"):
        load_script(write(tmp_path, "turns: []\n"))
    with pytest.raises(PlatformError, match="not a valid script"):
        load_script(write(tmp_path, "just text\n"))


def test_turn_follows_the_number_of_ai_messages(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(write(tmp_path, SCRIPT))
    first = model.invoke([HumanMessage("task")])
    assert first.content == "Let me look."
    assert [(c["name"], c["id"]) for c in first.tool_calls] == [
        ("list_files", "call_0_0"),
        ("read_code", "my-id"),
    ]
    history = [
        HumanMessage("task"),
        first,
        ToolMessage("a.py", tool_call_id="call_0_0"),
        ToolMessage("x", tool_call_id="my-id"),
    ]
    second = model.invoke(history)
    assert second.content == "Two files.  Done !!!COMPLETE!!!"
    assert second.tool_calls == []
    # The same input gives the same turn: no hidden call counter.
    assert model.invoke([HumanMessage("task")]).content == "Let me look."


def test_exhausted_script_says_what_to_do(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - text: only one\n")
    model = ScriptedChatModel.from_file(path)
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke([HumanMessage("t"), AIMessage("only one"), HumanMessage("more")])
    message = str(info.value)
    assert str(path) in message
    assert "has 1 turns" in message
    assert "asked for turn 2" in message
    assert "!!!COMPLETE!!!" in message
    assert isinstance(info.value, PlatformError)


def test_bind_tools_returns_the_model(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(write(tmp_path, SCRIPT))
    assert model.bind_tools([]) is model


def test_stream_yields_text_pieces_then_tool_call_chunks(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(write(tmp_path, SCRIPT))
    chunks = list(model.stream([HumanMessage("task")]))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)

    texts = [c.content for c in chunks if c.content]
    assert len(texts) > 1  # streamed in pieces, not one block
    assert "".join(str(t) for t in texts) == "Let me look."
    assert [c for c in chunks if c.tool_call_chunks][0].tool_call_chunks[0]["name"] == "list_files"

    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    expected = model.invoke([HumanMessage("task")])
    assert total.content == expected.content
    assert total.tool_calls == expected.tool_calls


def test_stream_of_text_only_turn_keeps_whitespace(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_file(write(tmp_path, SCRIPT))
    history = [HumanMessage("t"), AIMessage("x")]
    chunks = list(model.stream(history))
    assert "".join(str(c.content) for c in chunks) == "Two files.  Done !!!COMPLETE!!!"
    assert all(not c.tool_call_chunks for c in chunks)


SCENES = """\
turns:
  - when: "Decide whether"
    tool_calls: [{name: PlanDecision, args: {split: false}}]
  - when: "Count the rows"
    tool_calls: [{name: list_files}]
  - when: "Count the rows"
    text: "12 rows !!!COMPLETE!!!"
  - text: "fallback"
"""


def test_scenes_are_chosen_by_when_and_played_by_ai_count(tmp_path: Path) -> None:
    from langchain_core.messages import SystemMessage

    model = ScriptedChatModel.from_file(write(tmp_path, SCENES))
    decide = model.invoke([SystemMessage(content="Decide whether to split"), HumanMessage("x")])
    assert decide.tool_calls[0]["name"] == "PlanDecision"
    first = model.invoke([HumanMessage("Count the rows of a.csv")])
    assert first.tool_calls[0]["name"] == "list_files"
    convo = [HumanMessage("Count the rows of a.csv"), first]
    convo.append(ToolMessage(content="a.csv", tool_call_id=first.tool_calls[0]["id"]))
    assert model.invoke(convo).content == "12 rows !!!COMPLETE!!!"
    assert model.invoke([HumanMessage("something else")]).content == "fallback"
    with pytest.raises(ScriptExhaustedError, match="scene when='Count the rows'"):
        model.invoke([*convo, AIMessage("x"), AIMessage("y")])


def test_a_bad_when_pattern_is_a_clear_error(tmp_path: Path) -> None:
    bad = write(tmp_path, 'turns:\n  - when: "(unclosed"\n    text: hi\n')
    with pytest.raises(PlatformError, match="is not a valid regular expression"):
        load_script(bad)
