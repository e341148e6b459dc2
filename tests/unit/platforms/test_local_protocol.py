"""The local model's JSON reply protocol: prompts, grammar schema and parsers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import MAX_FAILED_STREAK, LocalChatModel, _trailing_repeats
from jarvis_graph.platforms.local import _failed_streak as local_failed_streak
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
    prompt = _model().build_prompt(_repeat(1), repeat="answer")
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
    text = proto.tool_call_json("read_code", {"path": "ä.py"}, "why")
    assert json.loads(text) == {
        "thought": "why",
        "tool": "read_code",
        "arguments": {"path": "ä.py"},
    }
    reply = proto.parse_reply(text)
    assert (reply.tool, reply.arguments, reply.thought) == ("read_code", {"path": "ä.py"}, "why")
    assert proto.parse_reply(proto.answer_json("done", "sure")).answer == "done"


class FakeLlama:
    """Stands in for llama.cpp: replies depend on the prompt, in small pieces."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.grammars: list[str] = []
        self.reply: Callable[[str], str] = self.default_reply

    @staticmethod
    def default_reply(prompt: str) -> str:
        if "You already called" in prompt:
            return '{"tool": "final_answer", "arguments": {"answer": "a.py only"}}'
        return '{"tool": "list_files", "arguments": {"path": "."}}'

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(data) // 4))

    def create_completion(self, prompt: str, **kwargs: object) -> Iterator[dict]:
        reply = self.reply(prompt)
        for base in reversed(self.prompts):  # a continuation: the reply goes on from there
            written = prompt[len(base) :] if prompt != base and prompt.startswith(base) else None
            if written is not None and self.reply(base).startswith(written):
                reply = self.reply(base)[len(written) :]
                break
        self.prompts.append(prompt)
        self.grammars.append(str(kwargs.get("grammar")))
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
    reply = _model(focused_answers=False).invoke(_repeat(1))  # the fake repeats list_files(".")
    assert reply.tool_calls == []
    assert reply.content == "a.py only"
    # asked again with the warning, under the grammar until the answer's text starts; the
    # text itself is generated on from there without it
    assert len(fake_llama.prompts) == 3
    assert fake_llama.prompts[2].startswith(fake_llama.prompts[1])
    assert fake_llama.prompts[2].endswith('"answer": "a.py o')
    assert fake_llama.grammars[1] != "None" and fake_llama.grammars[2] == "None"


def test_answers_are_written_from_the_facts_and_the_question(fake_llama: FakeLlama) -> None:
    def reply(prompt: str) -> str:
        if "Facts:" in prompt:
            return "  It has a.py."
        return '{"thought": "Done.", "tool": "final_answer", "arguments": {"answer": "ignored"}}'

    fake_llama.reply = reply
    messages = [SystemMessage("You are Jarvis."), *_repeat(1)]
    messages.insert(2, HumanMessage("--- notes.txt ---", name="jarvis_context"))
    out = _model().invoke(messages)
    assert out.content == "It has a.py."  # streamed free text, leading space dropped
    assert out.additional_kwargs == {"reasoning_content": "Done."}
    focused = fake_llama.prompts[-1]
    assert focused.startswith("<|im_start|>system\nAnswer the question using the facts")
    assert "<|im_start|>user\nQuestion: list\n\nFacts:" in focused  # asked before and after
    assert "Result of list_files:\na.py" in focused
    # the attached context comes first, then what the tools gathered
    assert focused.index("--- notes.txt ---") < focused.index("Result of list_files:")
    assert focused.rstrip().endswith("Question: list<|im_end|>\n<|im_start|>assistant")
    assert "You are Jarvis." not in focused
    assert fake_llama.grammars[-1] == "None"  # free text
    assert out.usage_metadata and out.usage_metadata["output_tokens"] > 0


def test_without_tool_results_the_answer_is_written_from_the_context(
    fake_llama: FakeLlama,
) -> None:
    fake_llama.reply = lambda prompt: (
        "blue"
        if "Facts:" in prompt
        else '{"thought": "", "tool": "final_answer", "arguments": {"answer": "x"}}'
    )
    messages = [HumanMessage("colour?"), HumanMessage("--- c.txt ---\nblue", name="jarvis_context")]
    assert _model().invoke(messages).content == "blue"
    assert "--- c.txt ---\nblue" in fake_llama.prompts[-1]


def _counting_llama(fake: FakeLlama, expression: str) -> None:
    def reply(prompt: str) -> str:
        if "one Python expression" in prompt:
            return json.dumps({"expression": expression})
        if "Facts:" in prompt:
            return "3 rows"
        return '{"thought": "", "tool": "final_answer", "arguments": {"answer": "x"}}'

    fake.reply = reply


def test_a_counting_question_is_computed_before_it_is_answered(fake_llama: FakeLlama) -> None:
    _counting_llama(fake_llama, "len(['a', 'b', 'c'])")
    context = HumanMessage("--- t.txt ---\na\nb\nc", name="jarvis_context")
    out = _model().invoke([HumanMessage("How many rows has t.txt?"), context])
    assert out.content == "3 rows"
    compute, answer = fake_llama.prompts[-2:]
    assert "--- t.txt ---" in compute and "Question: How many rows has t.txt?" in compute
    assert "Calculation: len(['a', 'b', 'c']) = 3" in answer
    assert out.usage_metadata and out.usage_metadata["output_tokens"] >= 3  # all three runs


@pytest.mark.parametrize("expression", ["open('t.txt').read().count('\\n')", "len(", "1/0"])
def test_a_failed_calculation_leaves_the_answer_to_the_facts(
    fake_llama: FakeLlama, expression: str
) -> None:
    _counting_llama(fake_llama, expression)
    context = HumanMessage("--- t.txt ---\na", name="jarvis_context")
    assert _model().invoke([HumanMessage("How many rows?"), context]).content == "3 rows"
    assert "Calculation:" not in fake_llama.prompts[-1]


def test_with_a_workspace_the_calculation_reads_its_files(
    fake_llama: FakeLlama, tmp_path: Path
) -> None:
    (tmp_path / "n.txt").write_text("12\n230\n19\n")
    _counting_llama(fake_llama, "max(int(x) for x in open('n.txt'))")
    context = HumanMessage("--- n.txt ---\n12", name="jarvis_context")
    model = _model(workspace=str(tmp_path))
    out = model.invoke([HumanMessage("What is the largest number in n.txt?"), context])
    compute, answer = fake_llama.prompts[-2:]
    assert "open(path)" in compute  # the prompt offers the workspace, with file examples
    assert "Calculation: max(int(x) for x in open('n.txt')) = 230" in answer
    assert out.response_metadata["calculation"] == "max(int(x) for x in open('n.txt')) = 230"


def test_a_failed_calculation_says_why_in_the_metadata(
    fake_llama: FakeLlama, tmp_path: Path
) -> None:
    _counting_llama(fake_llama, "len(open('.env').read())")
    context = HumanMessage("--- t.txt ---\na", name="jarvis_context")
    out = _model(workspace=str(tmp_path)).invoke([HumanMessage("How many rows?"), context])
    assert "Calculation:" not in fake_llama.prompts[-1]
    assert "failed" in out.response_metadata["calculation"]
    assert ".env is private" in out.response_metadata["calculation"]


def test_other_questions_and_the_setting_skip_the_calculation(fake_llama: FakeLlama) -> None:
    _counting_llama(fake_llama, "1 + 1")
    context = HumanMessage("--- t.txt ---\na", name="jarvis_context")
    _model().invoke([HumanMessage("What is in t.txt?"), context])
    _model(computed_answers=False).invoke([HumanMessage("How many rows?"), context])
    assert not any("one Python expression" in p for p in fake_llama.prompts)


def test_after_a_script_ran_its_output_not_the_attached_inputs_answers(
    fake_llama: FakeLlama,
) -> None:
    fake_llama.reply = lambda prompt: (
        "scarlet"
        if "Facts:" in prompt
        else '{"thought": "", "tool": "final_answer", "arguments": {"answer": "x"}}'
    )
    run = {"name": "execute_script", "args": {"script": "python3 c.py 8123"}, "id": "c1"}
    messages = [
        HumanMessage("Run c.py with the port in port.txt; what does it print?"),
        HumanMessage("--- port.txt ---\n8123", name="jarvis_context"),
        AIMessage("", tool_calls=[run]),
        ToolMessage("exit code: 0\nstatus: scarlet", tool_call_id="c1", name="execute_script"),
    ]
    assert _model().invoke(messages).content == "scarlet"
    focused = fake_llama.prompts[-1]
    assert "status: scarlet" in focused and "--- port.txt ---" not in focused


def test_failed_calls_are_not_facts_of_the_answer(fake_llama: FakeLlama) -> None:
    fake_llama.reply = lambda prompt: (
        "42"
        if "Facts:" in prompt
        else '{"thought": "", "tool": "final_answer", "arguments": {"answer": "x"}}'
    )
    messages = [
        HumanMessage("what?"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "x"}, "id": "c1"}]),
        ToolMessage("Error: file 'x' does not exist", tool_call_id="c1", name="read_code"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "y"}, "id": "c2"}]),
        ToolMessage("y (lines 1-1 of 1)\n1 | 42", tool_call_id="c2", name="read_code"),
    ]
    assert _model().invoke(messages).content == "42"
    focused = fake_llama.prompts[-1]
    assert "Result of read_code:\ny (lines 1-1 of 1)\n42" in focused
    assert "does not exist" not in focused


def test_methodology_tools_are_offered_only_to_tasks_that_speak_of_them() -> None:
    def tool(name: str) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "parameters": {}}}

    model = _model().model_copy(update={"tools": [tool("read_code"), tool("methodology")]})
    names = [t["function"]["name"] for t in model.offered_tools([HumanMessage("Sum a.csv")])]
    assert names == ["read_code"]
    task = [HumanMessage("Add a methodology for release builds")]
    assert [t["function"]["name"] for t in model.offered_tools(task)] == [
        "read_code",
        "methodology",
    ]


def test_memory_tools_are_offered_only_to_tasks_that_speak_of_remembering() -> None:
    def tool(name: str) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "parameters": {}}}

    model = _model().model_copy(update={"tools": [tool("read_code"), tool("save_memory")]})

    def offered(task: str, m: LocalChatModel = model) -> list[str]:
        return [t["function"]["name"] for t in m.offered_tools([HumanMessage(task)])]

    assert offered("What is in a.txt?") == ["read_code"]
    assert "save_memory" not in model.build_prompt([HumanMessage("What is in a.txt?")])
    assert offered("Remember that I use vim") == ["read_code", "save_memory"]
    assert offered("What do you recall about the build?") == ["read_code", "save_memory"]
    always = model.model_copy(update={"memory_tools_on_mention": False})
    assert offered("What is in a.txt?", always) == ["read_code", "save_memory"]


def test_an_answer_without_gathered_facts_stays_in_the_conversation(
    fake_llama: FakeLlama,
) -> None:
    fake_llama.reply = lambda prompt: (
        '{"thought": "", "tool": "final_answer", "arguments": {"answer": "hi"}}'
    )
    out = _model().invoke([HumanMessage("hello")])
    assert out.content == "hi" and len(fake_llama.prompts) == 1


def test_a_first_call_is_returned_as_a_tool_call(fake_llama: FakeLlama) -> None:
    reply = _model().invoke([HumanMessage("list")])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("list_files", {"path": "."})]
    assert reply.tool_calls[0]["id"].startswith("call_")
    assert len(fake_llama.prompts) == 1
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0


def test_answers_stream_and_aggregate_to_the_same_message(fake_llama: FakeLlama) -> None:
    chunks = list(_model(focused_answers=False).stream(_repeat(1)))
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
    assert " 1 | x,y" in proto.result_turn("search_files", content, "t")  # others: as is


def _failed_call(
    n: int, content: str = "Error: 'x.txt' does not exist", status: str = "error"
) -> list:
    messages: list = [HumanMessage("read x")]
    for i in range(n):
        call = {"name": "read_code", "args": {"path": f"x{i}.txt"}, "id": f"f{i}"}
        messages.append(AIMessage("", tool_calls=[call]))
        messages.append(ToolMessage(content, tool_call_id=f"f{i}", name="read_code", status=status))
    return messages


@pytest.mark.parametrize(
    ("content", "status", "failed"),
    [
        ("Error: 'x.txt' does not exist", "error", True),
        ("exit code: 1\nTraceback ...", "success", True),
        ("timed out after 30 s (process killed)", "success", True),
        ("no matches for 'E44' under .", "success", True),
        ("exit code: 0\n42", "success", False),
        ("1 matching line in 1 file:\na.py:1:x", "success", False),
    ],
)
def test_results_that_failed_are_told_apart(content: str, status: str, failed: bool) -> None:
    assert local_failed_streak(_failed_call(1, content, status)) == int(failed)
    turn = proto.result_turn("read_code", content, "task", status == "error")
    assert ("did not work" in turn) is failed


def test_the_failed_streak_counts_whole_turns_and_resets_on_user_input() -> None:
    assert local_failed_streak(_failed_call(3)) == 3
    ok = _failed_call(2)
    ok[-1] = ToolMessage("exit code: 0\n1", tool_call_id="f1", name="read_code")
    assert local_failed_streak(ok) == 0
    assert local_failed_streak([*_failed_call(2), HumanMessage("again")]) == 0
    assert local_failed_streak([*_failed_call(1)[:-1]]) == 0  # ends with a call, not results


def test_a_listing_suggests_reading_the_file() -> None:
    turn = proto.result_turn("list_files", "1 files under .:\napp.json", "level?")
    assert "read it with read_code" in turn


def test_after_a_failed_call_the_model_may_only_call_tools(fake_llama: FakeLlama) -> None:
    reply = _model().invoke(_failed_call(1))
    assert reply.tool_calls
    assert "final_answer" not in fake_llama.grammars[-1]
    assert "read_code" in fake_llama.grammars[-1]


def test_after_repeated_failures_the_model_may_answer_again(fake_llama: FakeLlama) -> None:
    _model().invoke(_failed_call(MAX_FAILED_STREAK + 1))
    assert "final_answer" in fake_llama.grammars[-1]


def test_a_repeated_failed_call_is_sent_back_for_a_change(fake_llama: FakeLlama) -> None:
    def reply(prompt: str) -> str:
        if "it failed" in prompt:  # the warning about the repeated failed call
            return '{"thought": "", "tool": "list_files", "arguments": {"path": "."}}'
        return '{"thought": "", "tool": "read_code", "arguments": {"path": "x0.txt"}}'

    fake_llama.reply = reply
    out = _model().invoke(_failed_call(1))
    assert [(c["name"], c["args"]) for c in out.tool_calls] == [("list_files", {"path": "."})]
    assert len(fake_llama.prompts) == 2
    assert "final_answer" not in fake_llama.grammars[-1]  # still a tool call only,
    assert "read_code" not in fake_llama.grammars[-1]  # and not of the tool that failed


def test_a_failed_call_repeated_despite_the_warning_ends_in_an_answer(
    fake_llama: FakeLlama,
) -> None:
    def reply(prompt: str) -> str:
        if "call final_answer now" in prompt:
            return '{"thought": "", "tool": "final_answer", "arguments": {"answer": "no x"}}'
        return '{"thought": "", "tool": "read_code", "arguments": {"path": "x0.txt"}}'

    fake_llama.reply = reply
    out = _model(focused_answers=False).invoke(_failed_call(1))
    assert out.content == "no x" and not out.tool_calls
    assert len(fake_llama.prompts) == 3


def test_answer_prompt_keeps_the_latest_facts_within_its_budget() -> None:
    facts = [f"fact {i} " + "x" * (proto.FACTS_CHARS // 3) for i in range(5)]
    prompt = proto.answer_prompt("what?", facts)
    assert "fact 4" in prompt and "fact 3" in prompt
    assert "fact 0" not in prompt
    assert prompt.index("fact 3") < prompt.index("fact 4") < prompt.rindex("Question: what?")


@pytest.mark.parametrize(
    ("raw", "thought"),
    [
        ('{"thought": "I look \\"here\\".", "tool": "final_ans', 'I look "here".'),
        ('{"thought": "unfinished', ""),
        ('{"tool": "final_answer"', ""),
    ],
)
def test_thought_of_a_partial_reply(raw: str, thought: str) -> None:
    assert proto.thought_of(raw) == thought


def test_a_successful_script_fact_keeps_only_its_output() -> None:
    assert proto.fact_text("execute_script", "exit code: 0\nstatus: ok") == (
        "Result of execute_script:\nstatus: ok"
    )
    failed = proto.fact_text("execute_script", "exit code: 2\nusage: x")
    assert failed == "Result of execute_script:\nexit code: 2\nusage: x"


def test_a_call_made_earlier_in_the_task_counts_as_a_repeat(fake_llama: FakeLlama) -> None:
    """Small models alternate between two calls: A, B, A is a repeat of A, too."""
    messages: list = [HumanMessage("largest number in n.txt?")]
    for i, (name, args) in enumerate(
        [("read_code", {"path": "a.py"}), ("list_files", {"path": "."})]
    ):
        messages.append(AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{i}"}]))
        messages.append(ToolMessage("ok", tool_call_id=f"c{i}", name=name))
    fake_llama.reply = lambda prompt: (
        '{"thought": "", "tool": "read_code", "arguments": {"path": "a.py"}}'
        if "You already called" not in prompt
        else '{"thought": "", "tool": "final_answer", "arguments": {"answer": "done"}}'
    )
    reply = _model(focused_answers=False).invoke(messages)
    assert not reply.tool_calls and reply.content == "done"
    assert "You already called read_code" in fake_llama.prompts[-1]
    assert "final_answer" in fake_llama.grammars[-1] and "read_code" not in fake_llama.grammars[-1]


def test_a_failed_expression_is_shown_to_the_model_once_for_a_fix(
    fake_llama: FakeLlama, tmp_path: Path
) -> None:
    (tmp_path / "s.csv").write_text("item,qty\na,4\nb,11\n")

    def reply(prompt: str) -> str:
        if "did not work" in prompt:
            return "{\"expression\": \"sum(int(r['qty']) for r in csv.DictReader(open('s.csv')))\"}"
        if "one Python expression" in prompt:
            return "{\"expression\": \"sum(int(r['qt']) for r in csv.DictReader(open('s.csv')))\"}"
        if "Facts:" in prompt:
            return "15"
        return '{"thought": "", "tool": "final_answer", "arguments": {"answer": "x"}}'

    fake_llama.reply = reply
    context = HumanMessage("--- s.csv ---\nitem,qty", name="jarvis_context")
    out = _model(workspace=str(tmp_path)).invoke([HumanMessage("Sum of qty in s.csv?"), context])
    first, retry, answer = fake_llama.prompts[-3:]
    assert retry.startswith(first) and "KeyError: 'qt'" in retry
    assert "Calculation: sum(int(r['qty']) for r in csv.DictReader(open('s.csv'))) = 15" in answer
    assert out.content == "15"


def test_after_a_script_ran_nothing_is_computed(fake_llama: FakeLlama) -> None:
    _counting_llama(fake_llama, "1 + 1")
    call = {"name": "execute_script", "args": {"script": "python3 r.py"}, "id": "s1"}
    messages = [
        HumanMessage("Run r.py and tell me the total it prints and how many rows it read."),
        AIMessage("", tool_calls=[call]),
        ToolMessage(
            "exit code: 0\nrows: 4\ntotal: 270.00", tool_call_id="s1", name="execute_script"
        ),
    ]
    assert _model().invoke(messages).content == "3 rows"
    assert not any("one Python expression" in p for p in fake_llama.prompts)


@pytest.mark.parametrize(
    ("task", "runs"),
    [
        ("Look at the files, then run report.py with python3 and tell me the total", True),
        ("Run the Python script compute.py with python3", True),
        ("Run `python3 greet.py NAME` with that name", True),
        ("Execute deploy.sh", True),
        ("How many runs are in runs.csv?", False),
        ("What does the running total in totals.py reach?", False),
        ("Which file do I run to start? main.py or app.py", False),
    ],
)
def test_tasks_that_ask_to_run_a_script_are_recognised(task: str, runs: bool) -> None:
    assert proto.asks_to_run(task) is runs


def test_a_run_task_is_not_answered_before_a_script_ran(fake_llama: FakeLlama) -> None:
    task = HumanMessage("Run report.py with python3 and tell me the total.")
    _model().invoke([task])
    assert "final_answer" not in fake_llama.grammars[-1]  # tools only
    call = {"name": "read_code", "args": {"path": "report.py"}, "id": "r1"}
    looked = [task, AIMessage("", tool_calls=[call]), ToolMessage("x", tool_call_id="r1")]
    fake_llama.reply = lambda prompt: (
        '{"thought": "", "tool": "execute_script", "arguments": {"script": "python3 report.py"}}'
    )
    reply = _model().invoke(looked)
    assert [c["name"] for c in reply.tool_calls] == ["execute_script"]
    grammar = fake_llama.grammars[-1]  # after one look: the script tools only
    assert "execute_script" in grammar and "read_code" not in grammar
    assert "final_answer" not in grammar


def test_a_question_asking_for_several_things_is_told_to_give_each() -> None:
    both = proto.answer_prompt("Run r.py; tell me the total and how many rows it read.", ["x"])
    one = proto.answer_prompt("Run greet.py NAME and report the code it prints.", ["x"])
    assert "give each of them" in both and "give each of them" not in one


def test_a_history_summary_is_not_taken_for_the_task(fake_llama: FakeLlama) -> None:
    """After summarize_history the summary is a human message; the task stays the task."""
    from jarvis_graph.state import SUMMARY_NAME

    call = {"name": "read_code", "args": {"path": "a.py"}, "id": "c1"}
    messages = [
        HumanMessage("Run report.py with python3 and tell me the total."),
        HumanMessage("Summary of the earlier conversation: read a.py.", name=SUMMARY_NAME),
        AIMessage("", tool_calls=[call]),
        ToolMessage("x = 1", tool_call_id="c1", name="read_code"),
    ]
    model = _model()
    prompt = model.build_prompt(messages)
    assert "The task was: Run report.py with python3" in prompt
    model.invoke(messages)  # still a run task: after one look, only the script tools
    assert "read_code" not in fake_llama.grammars[-1]
    assert "execute_script" in fake_llama.grammars[-1]


def test_a_cut_reply_is_refused_not_repaired_into_a_call(fake_llama: FakeLlama) -> None:
    # LangChain's partial-JSON parser would close this reply into a list_files call.
    fake_llama.reply = lambda prompt: '{"thought": "", "tool": "list_files", "arguments": {"path"'
    from jarvis_graph.nodes.call_model import _refuse_unparsed_calls

    reply = _refuse_unparsed_calls(_model().invoke([HumanMessage("list")]))
    assert reply.tool_calls == []
    [bad] = reply.invalid_tool_calls
    assert bad["name"] == "list_files"
    assert "not valid JSON" in str(bad["error"])
    assert "jarvis_raw_tool_calls" not in reply.additional_kwargs
