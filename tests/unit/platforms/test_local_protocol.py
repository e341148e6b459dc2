"""The local platform as a chat model: its prompt is the model's own chat template, prose is
decoded freely, each tool call's JSON under a grammar, and one reply may hold several calls.

llama.cpp is replaced by :class:`FakeLlama`, which follows a script and honours the logits
processor the platform passes (the call-or-prose decision); the real model runs in
``tests/integration/test_local_model.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jinja2
import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import ContextTooLongError, LocalChatModel

# Qwen2.5's chat template (tokenizer.chat_template of the GGUF files the project ships),
# the part that writes system, user, assistant and tool turns.
QWEN_TEMPLATE = """{%- if tools %}{{- '<|im_start|>system\\n' }}{{- messages[0]['content'] }}\
{{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n\
You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}\
{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}\
{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and \
arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": \
<function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}{%- endif %}\
{%- for message in messages %}\
{%- if (message.role == "user") or (message.role == "system" and not loop.first) or \
(message.role == "assistant" and not message.tool_calls) %}\
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\
{%- elif message.role == "assistant" %}{{- '<|im_start|>' + message.role }}\
{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}\
{%- for tool_call in message.tool_calls %}{{- '\\n<tool_call>\\n{"name": "' }}\
{{- tool_call.name }}{{- '", "arguments": ' }}{{- tool_call.arguments | tojson }}\
{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}\
{%- elif message.role == "tool" %}\
{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}\
{{- '<|im_start|>user' }}{%- endif %}\
{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}\
{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}{{- '<|im_end|>\\n' }}\
{%- endif %}{%- endif %}{%- endfor %}{{- '<|im_start|>assistant\\n' }}"""


@tool
def read_code(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    return ""


@tool
def list_files(path: str = ".") -> str:
    """List files.

    Args:
        path: The folder.
    """
    return ""


VOCAB = ["<|im_end|>", "Hello", "{", '{"', "```", "<tool_call>", "<", " the", "\n"]
EOS = 0


class FakeLlama:
    """Stands in for llama.cpp: follows ``script`` (prompt -> prose and call JSON texts).

    The first token of a reply is decided by the logits processor the platform passes:
    the fake's own preference is a call-starting token when the script has calls and no
    prose, prose otherwise; whatever the processor leaves as the best token wins.
    """

    def __init__(self) -> None:
        self.script: Callable[[str], tuple[str, list[str]]] = lambda p: ("Hello there.", [])
        self.calls: list[dict[str, Any]] = []  # every create_completion's arguments
        self.first_scores: list[np.ndarray] = []  # what the processor made of the first token

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(data) // 4))

    def n_vocab(self) -> int:
        return len(VOCAB)

    def detokenize(self, ids: list[int], special: bool = True) -> bytes:
        return "".join(VOCAB[i] for i in ids).encode()

    def token_eos(self) -> int:
        return EOS

    def create_completion(self, prompt: str, **kw: Any) -> Iterator[dict]:
        self.calls.append({"prompt": prompt, **kw})
        reply = prompt[prompt.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n") :]
        base = prompt[: len(prompt) - len(reply)]
        prose, calls = self.script(base)
        if kw.get("grammar") is not None:  # the JSON of call number n
            text = calls[reply.count(proto.CALL_OPEN) - 1]
            yield from _pieces(text[: kw["max_tokens"] * 4])
            return
        processors = kw.get("logits_processor") or []
        wants = "<tool_call>" if reply else ("Hello" if prose or not calls else "{")
        if reply and reply.count(proto.CALL_CLOSE) >= len(calls):
            wants = "<|im_end|>"
        scores = np.full(len(VOCAB), -5.0)
        scores[VOCAB.index(wants)] = 5.0
        for processor in processors:
            scores = processor([], scores)
        self.first_scores.append(scores)
        if int(np.argmax(scores)) == EOS:
            return
        if reply:  # asked whether another call follows
            yield {"choices": [{"text": VOCAB[int(np.argmax(scores))]}]}
            return
        yield from _pieces(prose + (proto.CALL_OPEN if calls else ""))


def _pieces(text: str) -> Iterator[dict]:
    for i in range(0, len(text), 5):
        yield {"choices": [{"text": text[i : i + 5]}]}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    import jarvis_graph.platforms.local as local

    llama = FakeLlama()
    monkeypatch.setattr(local, "_load", lambda path, n_ctx: (llama, threading.Lock()))
    monkeypatch.setattr(local, "_grammar", lambda schema: schema)
    local._starts.clear()
    return llama


def _model(**fields: Any) -> LocalChatModel:
    return LocalChatModel(model_path="/models/qwen.gguf", **fields).bind_tools(
        [read_code, list_files]
    )


def test_the_prompt_is_written_exactly_as_the_chat_template_writes_it() -> None:
    model = _model()
    messages = [
        SystemMessage("You are Jarvis."),
        HumanMessage("Compare a.txt and b.txt"),
        AIMessage(
            "Reading both.",
            tool_calls=[
                {"name": "read_code", "args": {"path": "a.txt"}, "id": "1"},
                {"name": "read_code", "args": {"path": "b.txt"}, "id": "2"},
            ],
        ),
        ToolMessage("alpha", tool_call_id="1", name="read_code"),
        ToolMessage("Error: b.txt does not exist", tool_call_id="2", status="error"),
        AIMessage("b.txt does not exist; a.txt says alpha."),
        HumanMessage("Thanks"),
    ]
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
    template_messages = [
        {
            "role": roles[m.type],
            "content": m.text,
            "tool_calls": [{"name": c["name"], "arguments": c["args"]} for c in m.tool_calls]
            if isinstance(m, AIMessage)
            else [],
        }
        for m in messages
    ]
    env = jinja2.Environment()
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    expected = env.from_string(QWEN_TEMPLATE).render(messages=template_messages, tools=model.tools)
    assert model.build_prompt(messages) == expected


def test_read_code_results_lose_their_line_numbers() -> None:
    prompt = _model().build_prompt(
        [
            HumanMessage("x"),
            AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "a"}, "id": "1"}]),
            ToolMessage("   1 | 42\n   2 | 43", tool_call_id="1", name="read_code"),
        ]
    )
    assert "<tool_response>\n42\n43\n</tool_response>" in prompt


def test_a_call_is_decoded_under_the_grammar_and_returned_as_a_tool_call(fake: FakeLlama) -> None:
    fake.script = lambda p: ("", ['{"name": "read_code", "arguments": {"path": "a.py"}}'])
    reply = _model().invoke([HumanMessage("What is in a.py?")])
    assert reply.content == ""
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("read_code", {"path": "a.py"})]
    prose, call, more = fake.calls
    assert prose["grammar"] is None and more["grammar"] is None
    assert "read_code" in call["grammar"] and "list_files" in call["grammar"]
    assert call["prompt"].endswith("<|im_start|>assistant\n<tool_call>\n")
    # the decision ended the prose generation before any token of it
    assert int(np.argmax(fake.first_scores[0])) == 0


def test_several_calls_in_one_reply_are_parallel_calls(fake: FakeLlama) -> None:
    fake.script = lambda p: (
        "",
        [
            '{"name": "read_code", "arguments": {"path": "a.txt"}}',
            '{"name": "read_code", "arguments": {"path": "b.txt"}}',
        ],
    )
    reply = _model().invoke([HumanMessage("Compare a.txt and b.txt")])
    assert [c["args"]["path"] for c in reply.tool_calls] == ["a.txt", "b.txt"]
    assert len({c["id"] for c in reply.tool_calls}) == 2
    second = [c for c in fake.calls if c.get("grammar")][1]
    assert second["prompt"].endswith(
        '{"name": "read_code", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n'
    )


def test_prose_is_streamed_without_a_grammar_and_cannot_start_a_call(fake: FakeLlama) -> None:
    fake.script = lambda p: ("Hello! No tool is needed for a greeting.", [])
    model = _model()
    chunks = list(model.stream([HumanMessage("Hi")]))
    text = "".join(str(c.content) for c in chunks)
    assert text == "Hello! No tool is needed for a greeting."
    assert sum(1 for c in chunks if c.content) > 3  # streamed in pieces
    assert all(c["grammar"] is None for c in fake.calls)
    scores = fake.first_scores[0]
    # every token that begins a call was ruled out for the first token of prose
    assert all(scores[VOCAB.index(t)] == -np.inf for t in ("{", '{"', "```", "<tool_call>", "<"))
    assert model.invoke([HumanMessage("Hi")]).tool_calls == []


def test_prose_then_a_call_keeps_both(fake: FakeLlama) -> None:
    fake.script = lambda p: ("Hello, I will look.\n", ['{"name": "list_files", "arguments": {}}'])
    reply = _model().invoke([HumanMessage("What is here?")])
    assert reply.content == "Hello, I will look."
    assert reply.tool_calls[0]["name"] == "list_files"
    assert "<tool" not in str(reply.content)


def test_a_call_cut_at_the_token_limit_is_refused_not_repaired(fake: FakeLlama) -> None:
    from jarvis_graph.nodes.call_model import _refuse_unparsed_calls

    fake.script = lambda p: (
        "",
        ['{"name": "read_code", "arguments": {"path": "a-very-long-name.py"}}'],
    )
    reply = _refuse_unparsed_calls(_model(max_tokens=6).invoke([HumanMessage("read it")]))
    assert reply.tool_calls == []
    [bad] = reply.invalid_tool_calls
    assert "cut off" in str(bad["error"])


def test_without_tools_a_tag_is_just_text(fake: FakeLlama) -> None:
    fake.script = lambda p: ("Hello <tool_call> is a tag.", [])
    model = LocalChatModel(model_path="/models/qwen.gguf")
    assert (
        model.invoke([HumanMessage("What is <tool_call>?")]).content
        == "Hello <tool_call> is a tag."
    )


def test_too_long_a_conversation_names_the_context_window(fake: FakeLlama) -> None:
    with pytest.raises(ContextTooLongError, match="n_ctx=512"):
        _model(n_ctx=512).invoke([HumanMessage("x" * 4000)])


@pytest.mark.parametrize(
    ("piece", "begins"),
    [("{", True), (' {"', True), ("```", True), ("<tool_call>", True), ("<", True),
     ("Hello", False), ("`", False), ("<div", False), (" The", False), ("[", False)],
)  # fmt: skip
def test_which_tokens_begin_a_call(piece: str, begins: bool) -> None:
    assert proto.begins_call(piece) is begins


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ('{"name": "read_code", "arguments": {"path": "a"', "end before the JSON is complete"),
        ('{"arguments": {}}', "no 'name'"),
        ('{"name": "x", "arguments": [1]}', "must be a JSON object"),
        ('{"name": "x", "name": "y", "arguments": {}}', "more than once"),
    ],
)
def test_a_call_that_does_not_parse_exactly_says_why(raw: str, error: str) -> None:
    call, why = proto.parse_call(raw)
    assert call is None and error in str(why)


def test_a_partial_tag_is_held_back_until_it_is_known() -> None:
    assert proto.partial_tag("Sure <tool_") == len("<tool_")
    assert proto.partial_tag("a < b") == 0
    assert proto.partial_tag("x <") == 1
