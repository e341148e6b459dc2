"""Segmentation of a conversation for the episodic archive: kinds, redaction, truncation."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from jarvis_graph.memory.segments import (
    TOOL_RESULT_CHARS,
    clip,
    redact,
    segment_messages,
)
from jarvis_graph.state import CONTEXT_NAME

CONVERSATION = [
    SystemMessage("You are Jarvis.", id="s"),
    HumanMessage("Which port does the deploy use?", id="h"),
    HumanMessage("The workspace holds settings.ini", name=CONTEXT_NAME, id="c"),
    AIMessage(
        "I will read the settings.",
        tool_calls=[
            {"name": "read_code", "args": {"path": "settings.ini"}, "id": "1"},
            {"name": "list_files", "args": {"path": "."}, "id": "2"},
        ],
        id="a1",
    ),
    ToolMessage("port = 8443", tool_call_id="1", name="read_code", id="t1"),
    ToolMessage("no such folder", tool_call_id="2", name="list_files", status="error", id="t2"),
    AIMessage("The deploy uses port 8443. !!!COMPLETE!!!", id="a2"),
]


def test_each_piece_becomes_a_segment_of_its_kind() -> None:
    got = [
        (s.kind, s.index, s.part, s.message_id, s.name, s.text)
        for s in segment_messages(CONVERSATION)
    ]
    assert got == [
        ("user", 1, 0, "h", "", "Which port does the deploy use?"),
        ("reasoning", 3, 0, "a1", "", "I will read the settings."),
        ("tool_call", 3, 1, "a1", "read_code", 'read_code({"path": "settings.ini"})'),
        ("tool_call", 3, 2, "a1", "list_files", 'list_files({"path": "."})'),
        ("tool_result", 4, 0, "t1", "read_code", "port = 8443"),
        ("tool_result", 5, 0, "t2", "list_files", "[error] no such folder"),
        ("response", 6, 0, "a2", "", "The deploy uses port 8443."),
    ]


def test_reasoning_blocks_are_kept_apart_from_the_answer() -> None:
    message = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "The user wants the port."},
            {"type": "text", "text": "Port 8443."},
        ],
        id="a",
    )
    kinds = [(s.kind, s.text) for s in segment_messages([message])]
    assert kinds == [("reasoning", "The user wants the port."), ("response", "Port 8443.")]
    extra = AIMessage("", additional_kwargs={"reasoning_content": "thinking"}, id="b")
    assert [(s.kind, s.text) for s in segment_messages([extra])] == [("reasoning", "thinking")]


def test_secrets_are_masked_in_snippets() -> None:
    text = (
        "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345 "
        "token: ghp_abcdefghijklmnopqrstuvwxyz0123 "
        "Authorization: Bearer abc.def.ghi-jklmnop https://bob:hunter2hunter2@example.org/x "
        "password = 's3cret-value' AKIAABCDEFGHIJKLMNOP"
    )
    out = redact(text)
    for secret in (
        "sk-abcdefghijklmnop",
        "ghp_abcdefghij",
        "abc.def.ghi-jklmnop",
        "hunter2",
        "s3cret-value",
        "AKIAABCDEFGHIJKLMNOP",
    ):
        assert secret not in out
    assert "https://bob:***@example.org/x" in out and "Bearer ***" in out
    assert redact("the port is 8443 and the key file is id_rsa") == (
        "the port is 8443 and the key file is id_rsa"
    )


def test_tool_call_arguments_with_secret_names_are_masked() -> None:
    call = {"name": "deploy", "args": {"host": "prod", "api_token": "tok-123456789"}, "id": "1"}
    (seg,) = segment_messages([AIMessage("", tool_calls=[call], id="a")])
    assert seg.text == 'deploy({"host": "prod", "api_token": "***"})'


def test_large_tool_results_keep_head_and_tail() -> None:
    body = "HEAD " + "x" * 5_000 + " TAIL"
    (seg,) = segment_messages([ToolMessage(body, tool_call_id="1", name="read_code", id="t")])
    assert seg.text.startswith("HEAD ") and seg.text.endswith(" TAIL")
    assert "chars cut" in seg.text and len(seg.text) < TOOL_RESULT_CHARS + 40
    assert clip("short", 10) == "short"


def test_digest_follows_the_text_only() -> None:
    one = segment_messages([HumanMessage("hello there", id="x")])[0]
    same = segment_messages([SystemMessage("s"), HumanMessage("hello there", id="x")])[0]
    other = segment_messages([HumanMessage("hello again", id="x")])[0]
    assert one.digest() == same.digest() != other.digest()
