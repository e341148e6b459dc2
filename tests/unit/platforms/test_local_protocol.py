"""The local model's JSON reply protocol: prompts, grammar schema and parsers."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import LocalChatModel, _trailing_repeats
from jarvis_graph.tools.builtin import BUILTIN_TOOLS

TOOLS = [convert_to_openai_tool(t) for t in BUILTIN_TOOLS]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"tool": "read_code", "arguments": {"path": "a.py"}}', ("read_code", {"path": "a.py"})),
        ('  {"tool": "list_files", "arguments": {}}\n', ("list_files", {})),
        ('```json\n{"tool": "list_files", "arguments": {}}\n```', ("list_files", {})),
    ],
)
def test_parse_tool_call(raw: str, expected: tuple[str, dict]) -> None:
    reply = proto.parse_reply(raw)
    assert (reply.tool, reply.arguments, reply.error, reply.answer) == (*expected, None, None)


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ('{"tool": "final_answer", "arguments": {"answer": "42"}}', "42"),
        ('{"answer": "plain"}', "plain"),  # the older form is still understood
        ("The total is 42.", "The total is 42."),  # prose is taken as the answer
    ],
)
def test_parse_answer(raw: str, answer: str) -> None:
    assert proto.parse_reply(raw).answer == answer


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ('{"tool": "read_code", "arguments": {"path": "a.', "not valid JSON"),  # cut off
        ("[1, 2]", "must be a JSON object"),
        ('{"arguments": {}}', "no 'tool' name"),
        ('{"tool": "", "arguments": {}}', "no 'tool' name"),
        ('{"tool": "read_code", "arguments": "a.py"}', "'arguments' must be a JSON object"),
        ("{", "not valid JSON"),
    ],
)
def test_parse_malformed_reply_gives_a_readable_error(raw: str, error: str) -> None:
    reply = proto.parse_reply(raw)
    assert reply.error is not None and error in reply.error
    assert reply.answer is None


def test_answer_stream_decodes_escapes_across_chunk_boundaries() -> None:
    stream = proto.AnswerStream()
    pieces = ['{"tool": "fin', 'al_answer", "arguments": {"answer": "a\\', "nb \\u00", "e9", '"}}']
    text = "".join(stream.feed(p) for p in pieces)
    assert text == "a\nb é"
    assert stream.done and stream.is_answer


def test_answer_stream_ignores_tool_calls() -> None:
    stream = proto.AnswerStream()
    assert stream.feed('{"tool": "read_code", "arguments": {"path": "x"}}') == ""
    assert stream.is_answer is False


def test_answer_stream_waits_while_undecided() -> None:
    stream = proto.AnswerStream()
    assert stream.feed("{") == "" and stream.is_answer is None
    assert stream.feed(' "tool": "final_answer"') == "" and stream.is_answer is None


def test_reply_schema_offers_every_tool_and_final_answer() -> None:
    schema = proto.reply_schema(TOOLS)
    names = [option["properties"]["tool"]["const"] for option in schema["oneOf"]]
    assert names == [*(t["function"]["name"] for t in TOOLS), "final_answer"]
    for option in schema["oneOf"]:
        assert option["additionalProperties"] is False
        assert option["properties"]["arguments"]["additionalProperties"] is False


def test_answer_only_schema_allows_just_final_answer() -> None:
    schema = proto.reply_schema(TOOLS, answer_only=True)
    assert schema["properties"]["tool"] == {"const": "final_answer"}


def test_tool_list_names_arguments_and_optional_flags() -> None:
    text = proto.render_tool_list(TOOLS)
    assert "- read_code: Read a text file with line numbers." in text
    assert "path (string) - File path, relative to the workspace root." in text
    assert "start_line (integer, optional)" in text
    assert "- final_answer:" in text


def _model() -> LocalChatModel:
    return LocalChatModel(model_path="unused.gguf").bind_tools(BUILTIN_TOOLS)


def test_prompt_renders_history_as_chatml() -> None:
    messages = [
        SystemMessage("You are Jarvis."),
        HumanMessage("run a.py"),
        AIMessage(
            "",
            tool_calls=[{"name": "execute_script", "args": {"script": "python3 a.py"}, "id": "1"}],
        ),
        ToolMessage("exit code: 0\n5", tool_call_id="1", name="execute_script"),
        AIMessage("It prints 5."),
        HumanMessage("thanks"),
    ]
    prompt = _model().build_prompt(messages)
    assert prompt.startswith("<|im_start|>system\nYou are Jarvis.")
    assert prompt.endswith("<|im_start|>assistant\n")
    assert '{"tool": "execute_script", "arguments": {"script": "python3 a.py"}}' in prompt
    assert "Result of execute_script:\nexit code: 0\n5" in prompt
    assert "The task was: run a.py" in prompt
    assert '{"tool": "final_answer", "arguments": {"answer": "It prints 5."}}' in prompt


def test_results_of_one_turn_share_one_user_turn_and_one_reminder() -> None:
    calls = [
        {"name": "list_files", "args": {}, "id": "1"},
        {"name": "read_code", "args": {"path": "a"}, "id": "2"},
    ]
    messages = [
        HumanMessage("look"),
        AIMessage("", tool_calls=calls),
        ToolMessage("a", tool_call_id="1", name="list_files"),
        ToolMessage("1 | x", tool_call_id="2", name="read_code"),
    ]
    prompt = _model().build_prompt(messages)
    assert prompt.count("<|im_start|>user") == 2
    assert prompt.count("The task was: look") == 1


def _repeat(n: int) -> list:
    messages: list = [HumanMessage("list")]
    for i in range(n):
        messages.append(
            AIMessage("", tool_calls=[{"name": "list_files", "args": {"path": "."}, "id": f"c{i}"}])
        )
        messages.append(ToolMessage("a.py", tool_call_id=f"c{i}", name="list_files"))
    return messages


def test_forced_answer_prompt_warns_about_the_repeat() -> None:
    assert _trailing_repeats(_repeat(2)) == (2, ("list_files", '{"path": "."}'))
    prompt = _model().build_prompt(_repeat(1), force_answer=True)
    assert "You already called list_files with these arguments" in prompt
    assert "You already called" not in _model().build_prompt(_repeat(1))


def test_a_different_call_resets_the_repeat_count() -> None:
    messages = _repeat(2)
    messages.append(
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "a.py"}, "id": "r"}])
    )
    messages.append(ToolMessage("1 | x", tool_call_id="r", name="read_code"))
    assert _trailing_repeats(messages) == (1, ("read_code", '{"path": "a.py"}'))


def test_tool_call_json_round_trips() -> None:
    text = proto.tool_call_json("read_code", {"path": "ä.py"})
    assert json.loads(text) == {"tool": "read_code", "arguments": {"path": "ä.py"}}
    assert proto.parse_reply(proto.answer_json("done")).answer == "done"


class FakeLlama:
    """Stands in for llama.cpp: replies depend on the prompt, in small pieces."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(data) // 4))

    def create_completion(self, prompt: str, **kwargs: object) -> Iterator[dict]:
        self.prompts.append(prompt)
        if "You already called" in prompt:
            reply = '{"tool": "final_answer", "arguments": {"answer": "a.py only"}}'
        else:
            reply = '{"tool": "list_files", "arguments": {"path": "."}}'
        for i in range(0, len(reply), 7):
            yield {"choices": [{"text": reply[i : i + 7]}]}


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    import threading

    import jarvis_graph.platforms.local as local

    fake = FakeLlama()
    monkeypatch.setattr(local, "_load", lambda path, n_ctx: (fake, threading.Lock()))
    monkeypatch.setattr(local, "_grammar", lambda schema: schema)
    return fake


def test_an_identical_repeat_is_replaced_by_an_answer(fake_llama: FakeLlama) -> None:
    reply = _model().invoke(_repeat(1))  # the fake would repeat list_files(".")
    assert reply.tool_calls == []
    assert reply.content == "a.py only"
    assert len(fake_llama.prompts) == 2  # asked again, with the warning


def test_a_first_call_is_returned_as_a_tool_call(fake_llama: FakeLlama) -> None:
    reply = _model().invoke([HumanMessage("list")])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("list_files", {"path": "."})]
    assert reply.tool_calls[0]["id"].startswith("call_")
    assert len(fake_llama.prompts) == 1
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0


def test_answers_stream_and_aggregate_to_the_same_message(fake_llama: FakeLlama) -> None:
    chunks = list(_model().stream(_repeat(1)))
    text_chunks = [c.content for c in chunks if c.content]
    assert len(text_chunks) > 1 and "".join(text_chunks) == "a.py only"


def test_more_repeats_allowed_when_configured(fake_llama: FakeLlama) -> None:
    model = LocalChatModel(model_path="unused.gguf", max_repeats=2).bind_tools(BUILTIN_TOOLS)
    reply = model.invoke(_repeat(1))
    assert [c["name"] for c in reply.tool_calls] == ["list_files"]


def test_read_code_results_lose_their_line_numbers() -> None:
    content = "a.csv (lines 1-3 of 3)\n 1 | x,y\n 2 | 1,2\n10 | 7 | z"
    turn = proto.result_turn("read_code", content, "sum y")
    assert "x,y\n1,2\n7 | z" in turn  # only the leading number column goes
    assert "The task was: sum y" in turn
    assert " 1 | x,y" in proto.result_turn("list_files", content, "t")  # other tools: as is
