"""The local platform: its JSON reply protocol (prompt, grammar schema, parsers) and how a
reply is decoded: objects under the grammar, an answer's text freely, parallel calls.

llama.cpp is replaced by :class:`FakeLlama`, which follows a script and honours the logits
processor the platform passes; the real model runs in ``tests/integration/test_local_model.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import ContextTooLongError, LocalChatModel
from jarvis_graph.state import CONTEXT_NAME
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


def test_a_raw_newline_inside_a_string_is_taken_as_written() -> None:
    raw = '{"thought": "run it:\n\n``` bash build.sh ```", "tool": "execute_script", '
    raw += '"arguments": {"script": "bash build.sh"}}'
    assert "\n" in raw  # a real newline inside the thought's string, not an escape
    reply = proto.parse_reply(raw)
    assert reply.error is None
    assert (reply.tool, reply.arguments) == ("execute_script", {"script": "bash build.sh"})
    assert proto.thought_of(raw) == "run it:\n\n``` bash build.sh ```"
    assert proto.parse_reply(raw.replace("}}", "}")).error  # the structure must still parse


def test_answer_stream_decodes_escapes_across_chunk_boundaries() -> None:
    stream = proto.AnswerStream()
    pieces = ['{"tool": "fin', 'al_answer", "arguments": {"answer": "a\\', "nb \\u00", "e9", '"}}']
    text = "".join(stream.feed(p) for p in pieces)
    assert text == "a\nb é"
    assert stream.done and stream.is_answer


def test_answer_stream_skips_the_thought_even_when_it_quotes_json() -> None:
    stream = proto.AnswerStream()
    thought = 'I saw \\"tool\\": \\"final_answer\\" in a file, so'
    pieces = [
        '{"thought": "',
        thought,
        '", "tool": "final',
        '_answer", "arguments": ',
        '{"answer": "4',
        '2"}}',
    ]
    decided = []
    text = ""
    for piece in pieces:
        text += stream.feed(piece)
        decided.append(stream.is_answer)
    assert text == "42"
    assert decided[:3] == [None, None, None]  # undecided until the tool name is complete


def test_answer_stream_rejects_a_tool_call_after_a_thought() -> None:
    stream = proto.AnswerStream()
    assert stream.feed('{"thought": "look", "tool": "read_code", "arguments": {') == ""
    assert stream.is_answer is False


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
    schema = proto.reply_schema(TOOLS, "answer")
    assert schema["properties"]["tool"] == {"const": "final_answer"}


def test_tools_only_schema_leaves_out_final_answer() -> None:
    schema = proto.reply_schema(TOOLS, "tools")
    names = [option["properties"]["tool"]["const"] for option in schema["oneOf"]]
    assert names == [t["function"]["name"] for t in TOOLS]


def test_every_reply_starts_with_a_bounded_thought() -> None:
    for option in proto.reply_schema(TOOLS)["oneOf"]:
        assert list(option["properties"])[0] == "thought"
        assert option["required"][0] == "thought"
        assert option["properties"]["thought"]["maxLength"] == proto.THOUGHT_CHARS


def test_tool_list_names_arguments_and_optional_flags() -> None:
    text = proto.render_tool_list(TOOLS)
    assert "- read_code: Read a text file with line numbers." in text
    assert "path (string) - File path, relative to the workspace root." in text
    assert "start_line (integer, optional)" in text
    assert "- final_answer:" in text


def _model(**fields: Any) -> LocalChatModel:
    return LocalChatModel(model_path="unused.gguf", **fields).bind_tools(BUILTIN_TOOLS)


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
    assert (
        '{"thought": "", "tool": "execute_script", "arguments": {"script": "python3 a.py"}}'
        in prompt
    )
    assert "Result of execute_script:\nexit code: 0\n5" in prompt
    assert "The task was: run a.py" in prompt
    assert '"tool": "final_answer", "arguments": {"answer": "It prints 5."}}' in prompt


def test_prompt_shows_earlier_thoughts_back() -> None:
    call = {"name": "list_files", "args": {}, "id": "1"}
    thought = {"reasoning_content": "I look first."}
    messages = [
        HumanMessage("look"),
        AIMessage("", tool_calls=[call], additional_kwargs=thought),
        ToolMessage("1 files under .:\na.py", tool_call_id="1", name="list_files"),
        AIMessage("a.py", additional_kwargs={"reasoning_content": "One file."}),
    ]
    prompt = _model().build_prompt(messages)
    assert '{"thought": "I look first.", "tool": "list_files"' in prompt
    assert '{"thought": "One file.", "tool": "final_answer"' in prompt


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


def test_an_unparsable_reply_is_shown_back_cut_short() -> None:
    runaway = '{"thought": "' + "x" * 2000
    bad = {"name": "compute", "args": runaway, "id": "1", "error": "cut off"}
    ai = AIMessage("", invalid_tool_calls=[{**bad, "type": "invalid_tool_call"}])
    prompt = _model().build_prompt([HumanMessage("max?"), ai])
    assert runaway[:300] + "…" in prompt and runaway not in prompt


def test_attached_context_ends_with_the_task() -> None:
    attached = HumanMessage("Workspace context:\n--- a.txt ---\nx\n", name=CONTEXT_NAME)
    prompt = _model().build_prompt([HumanMessage("What is in a.txt?"), attached])
    assert "--- a.txt ---\nx\n\nThe task: What is in a.txt?<|im_end|>" in prompt
    assert prompt.count("What is in a.txt?") == 2


def test_tool_call_json_round_trips() -> None:
    text = proto.tool_call_json("read_code", {"path": "ä.py"}, "why")
    assert json.loads(text) == {
        "thought": "why",
        "tool": "read_code",
        "arguments": {"path": "ä.py"},
    }
    reply = proto.parse_reply(text)
    assert (reply.tool, reply.arguments, reply.thought) == ("read_code", {"path": "ä.py"}, "why")
    assert proto.parse_reply(proto.answer_json("done", "sure")).answer == "done"


def test_a_failed_result_that_answers_the_task_may_be_said() -> None:
    messages = [
        HumanMessage("What is the total in sales.csv?"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "sales.csv"}, "id": "1"}]),
        ToolMessage("Error: sales.csv does not exist", tool_call_id="1", status="error"),
    ]
    prompt = _model().build_prompt(messages)
    assert "Only when the error above answers the task, answer with it." in prompt


def test_the_prompt_holds_no_example_to_copy() -> None:
    prompt = _model().build_prompt([HumanMessage("hi")])
    assert "Example" not in prompt and "results.csv" not in prompt


VOCAB = ["<|im_end|>", "Hello", "\n", "{", " {", "x"]
EOS = 0


class FakeLlama:
    """Stands in for llama.cpp: ``script`` maps a prompt to the JSON objects of the reply.

    Under a grammar it writes the next object; without one it writes an answer's text
    (the rest of the last object); asked with a logits processor whether another object
    follows, it prefers a newline while objects are left and the end of the turn after.
    """

    def __init__(self) -> None:
        self.script: Callable[[str], list[str]] = lambda p: [
            '{"thought": "", "tool": "final_answer", "arguments": {"answer": "Hello there."}}'
        ]
        self.calls: list[dict[str, Any]] = []
        self.yielded = 0  # tokens generated, in all

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
        start = prompt.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
        written, objects = prompt[start:], self.script(prompt[:start])
        done = [o for o in objects if written.startswith(o) or ("\n" + o) in written]
        if kw.get("logits_processor"):
            scores = np.full(len(VOCAB), -5.0)
            scores[VOCAB.index("\n") if len(done) < len(objects) else EOS] = 5.0
            for processor in kw["logits_processor"]:
                scores = processor([], scores)
            return
        if kw.get("grammar") is not None:
            text = objects[len(done)]
        else:  # an answer's text goes on from where the grammar left it
            last = objects[-1]
            text = last[len(written.rsplit("\n", 1)[-1]) :]
        for i in range(0, min(len(text), kw["max_tokens"] * 4), 4):
            self.yielded += 1
            yield {"choices": [{"text": text[i : i + 4]}]}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    import jarvis_graph.platforms.local as local

    llama = FakeLlama()
    monkeypatch.setattr(local, "_load", lambda path, n_ctx: (llama, threading.Lock()))
    monkeypatch.setattr(local, "_grammar", lambda schema: schema)
    local._starts.clear()
    return llama


def _call(tool: str, thought: str = "", **args: Any) -> str:
    return json.dumps({"thought": thought, "tool": tool, "arguments": args})


def test_an_answer_streams_its_text_decoded_without_the_grammar(fake: FakeLlama) -> None:
    chunks = list(_model().stream([HumanMessage("hi")]))
    assert "".join(str(c.content) for c in chunks) == "Hello there."
    assert sum(1 for c in chunks if c.content) > 1
    grammar, free = fake.calls
    assert grammar["grammar"] is not None and free["grammar"] is None
    assert '"tool": "final_answer", "arguments": {"answer": "' in free["prompt"]


def test_a_call_is_returned_with_its_thought(fake: FakeLlama) -> None:
    fake.script = lambda p: [_call("read_code", "I read it.", path="a.py")]
    reply = _model().invoke([HumanMessage("What is in a.py?")])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("read_code", {"path": "a.py"})]
    assert reply.additional_kwargs["reasoning_content"] == "I read it."
    assert reply.content == ""


def test_several_objects_are_parallel_calls(fake: FakeLlama) -> None:
    fake.script = lambda p: [_call("read_code", path="a.txt"), _call("read_code", path="b.txt")]
    reply = _model().invoke([HumanMessage("Compare a.txt and b.txt")])
    assert [c["args"]["path"] for c in reply.tool_calls] == ["a.txt", "b.txt"]
    second = [c for c in fake.calls if c.get("grammar")][1]
    assert second["prompt"].endswith(_call("read_code", path="a.txt") + "\n")
    assert '"final_answer"' not in second["grammar"]  # after a call, only calls follow


def test_the_same_call_twice_in_a_reply_is_made_once(fake: FakeLlama) -> None:
    fake.script = lambda p: [_call("list_files", path="."), _call("list_files", path=".")]
    assert len(_model().invoke([HumanMessage("list")]).tool_calls) == 1


def test_a_cut_reply_is_refused_not_repaired_into_a_call(fake: FakeLlama) -> None:
    from jarvis_graph.nodes.call_model import _refuse_unparsed_calls

    fake.script = lambda p: [_call("list_files", path="a-very-long-folder-name")]
    reply = _refuse_unparsed_calls(_model(max_tokens=14).invoke([HumanMessage("list")]))
    assert reply.tool_calls == []
    [bad] = reply.invalid_tool_calls
    assert bad["name"] == "list_files"
    assert "cut off" in str(bad["error"])
    assert "jarvis_raw_tool_calls" not in reply.additional_kwargs


def test_too_long_a_conversation_names_the_context_window(fake: FakeLlama) -> None:
    with pytest.raises(ContextTooLongError, match="n_ctx=512"):
        _model(n_ctx=512).invoke([HumanMessage("x" * 4000)])


def test_the_reply_timing_covers_every_generation(fake: FakeLlama) -> None:
    reply = _model().invoke([HumanMessage("hi")])
    meta, usage = reply.response_metadata, reply.usage_metadata
    assert usage is not None and usage["output_tokens"] == fake.yielded
    assert set(meta) >= {"prompt_seconds", "decode_seconds", "tokens_per_second"}


def test_tool_choice_none_keeps_the_tools_in_the_prompt_but_asks_for_an_answer(
    fake: FakeLlama,
) -> None:
    model = LocalChatModel(model_path="unused.gguf").bind_tools(BUILTIN_TOOLS, tool_choice="none")
    reply = model.invoke([HumanMessage("hi")])
    assert reply.content == "Hello there."
    first = fake.calls[0]
    assert "- read_code:" in first["prompt"]
    assert '"read_code"' not in first["grammar"] and '"final_answer"' in first["grammar"]


def test_without_tools_the_reply_is_plain_text(fake: FakeLlama) -> None:
    fake.script = lambda p: ["Plain words, no JSON."]
    reply = LocalChatModel(model_path="unused.gguf").invoke([HumanMessage("say it")])
    assert reply.content == "Plain words, no JSON."
    assert [c["grammar"] for c in fake.calls] == [None]
