"""The local platform: its reply protocol (prompt, grammar schema, parsers) and how a reply
is decoded: the first token decides between a call and the answer; calls under the
grammar, the answer as plain text; parallel calls.

llama.cpp is replaced by :class:`FakeLlama`, which follows a script and honours the logits
processor the platform passes; the real model runs in ``tests/integration/test_local_model.py``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import ContextTooLongError, LocalChatModel
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME
from jarvis_graph.tools.builtin import BUILTIN_TOOLS
from tests.support.fake_llama import VOCAB, FakeLlama, use_fake_llama

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


def test_prose_is_the_answer() -> None:
    assert proto.parse_reply("The total is 42.").answer == "The total is 42."


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
    assert reply.thought == "run it:\n\n``` bash build.sh ```"
    assert proto.parse_reply(raw.replace("}}", "}")).error  # the structure must still parse


def test_reply_schema_offers_every_tool_and_nothing_else() -> None:
    schema = proto.reply_schema(TOOLS)
    names = [option["properties"]["tool"]["const"] for option in schema["oneOf"]]
    assert names == [t["function"]["name"] for t in TOOLS]
    for option in schema["oneOf"]:
        assert option["additionalProperties"] is False
        assert option["properties"]["arguments"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("piece", "opens"),
    [("{", True), (' {"', True), ("```", True), ("```json", True), ("\n{", True)]
    + [("The", False), ("`", False), ("`src", False), ("[", False), ("Hello", False)],
)
def test_what_opens_a_call_at_the_first_token(piece: str, opens: bool) -> None:
    assert proto.opens_call(piece) is opens


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
    assert "final_answer" not in text  # the answer is plain words, no pseudo-tool


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
    assert "<|im_start|>assistant\nIt prints 5.<|im_end|>" in prompt


def test_the_system_turn_differs_between_workspaces_only_in_its_last_part(
    tmp_path: Any,
) -> None:
    """The system prompt's context follows the tools in the system turn, the reply rules
    come last: the part before the context, which the local model saves once and starts
    every run from, holds nothing of the workspace."""
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.prompts import CONTEXT_HEADING
    from jarvis_graph.runtime.services import RunServices

    prompts = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        ctx = JarvisContext(workspace=str(tmp_path / name))
        system = SystemMessage(RunServices(ctx).system_prompt("count the lines of a.txt"))
        follow_up = [HumanMessage("count the lines of a.txt"), AIMessage("3"), HumanMessage("ok")]
        prompts.append(_model().build_prompt([system, *follow_up]))
    stable = [p.split(f"\n\n{CONTEXT_HEADING}\n", 1)[0] for p in prompts]
    assert stable[0] == stable[1] and str(tmp_path) not in stable[0]
    assert "# Tools" in stable[0] and "# How to reply" not in stable[0]
    system_turn, rest = prompts[0].split("<|im_end|>\n", 1)
    assert system_turn.startswith(stable[0])
    context = system_turn.index(f"The workspace is `{(tmp_path / 'one').resolve()}`")
    assert context < system_turn.index("# How to reply")  # the rules are read last
    assert rest.startswith("<|im_start|>user\ncount the lines of a.txt<|im_end|>")
    assert prompts[0].count(CONTEXT_HEADING) == 1


def test_a_system_prompt_without_a_context_is_kept_whole() -> None:
    assert proto.split_context("rules\n# Context\nws", "# Context") == ("rules", "ws")
    assert proto.split_context("no heading here", "# Context") == ("no heading here", "")


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
    assert "<|im_start|>assistant\na.py<|im_end|>" in prompt  # an answer is plain words


def test_an_answer_the_check_sent_back_is_not_shown_again() -> None:
    call = {"name": "read_code", "args": {"path": "b.txt"}, "id": "1"}
    messages = [
        HumanMessage("How many lines does b.txt have?"),
        AIMessage("4"),
        HumanMessage("Your answer is not supported: read b.txt.", name=CHECK_NAME),
        AIMessage("", tool_calls=[call]),
        ToolMessage("b.txt (lines 1-9 of 9)\n1 | a", tool_call_id="1", name="read_code"),
    ]
    prompt = _model().build_prompt(messages)
    assert "<|im_start|>assistant\n4<|im_end|>" not in prompt
    assert proto.REJECTED_ANSWER not in prompt  # nothing stands in for it, to be copied
    assert "Your answer is not supported: read b.txt." in prompt
    accepted = [HumanMessage("How many?"), AIMessage("9"), HumanMessage("And now?")]
    assert "<|im_start|>assistant\n9<|im_end|>" in _model().build_prompt(accepted)


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


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    return use_fake_llama(monkeypatch)


def _call(tool: str, thought: str = "", **args: Any) -> str:
    return json.dumps({"thought": thought, "tool": tool, "arguments": args})


def test_an_answer_streams_its_text_decoded_without_the_grammar(fake: FakeLlama) -> None:
    chunks = list(_model().stream([HumanMessage("hi")]))
    assert "".join(str(c.content) for c in chunks) == "Hello there."
    assert sum(1 for c in chunks if c.content) > 1
    [free] = fake.calls  # one generation: its first token decided it is the answer
    assert free["grammar"] is None and free["logits_processor"]
    assert free["prompt"].endswith("<|im_start|>assistant\n")


def test_a_call_is_decided_at_the_first_token_then_decoded_under_the_grammar(
    fake: FakeLlama,
) -> None:
    fake.script = lambda p: [_call("list_files", path=".")]
    reply = _model().invoke([HumanMessage("list")])
    assert [c["name"] for c in reply.tool_calls] == ["list_files"] and reply.content == ""
    opening, call = fake.calls[:2]
    assert opening["grammar"] is None and call["grammar"] is not None
    assert call["prompt"] == opening["prompt"]  # nothing of the decision is kept


def test_a_call_is_returned_with_its_thought(fake: FakeLlama) -> None:
    fake.script = lambda p: [_call("read_code", "I read it.", path="a.py")]
    reply = _model().invoke([HumanMessage("What is in a.py?")])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("read_code", {"path": "a.py"})]
    assert reply.additional_kwargs["reasoning_content"] == "I read it."
    assert reply.content == ""


def test_the_tokens_that_open_a_call_are_weighed_together_against_the_rest(
    fake: FakeLlama,
) -> None:
    fake.script = lambda p: [_call("list_files", path=".")]
    fake.first = {"{": 1.0, " {": 1.0, "Hello": 1.5}  # each opener less likely than a word
    assert [c["name"] for c in _model().invoke([HumanMessage("list")]).tool_calls] == ["list_files"]
    fake.script = lambda p: ["Hello there."]
    fake.first = {"{": 1.5, "Hello": 1.2, "x": 1.2}  # "{" alone likeliest, words together more
    reply = _model().invoke([HumanMessage("hi")])
    assert reply.content == "Hello there." and reply.tool_calls == []
    assert fake.opening[VOCAB.index("{")] == -np.inf  # so the answer cannot start as JSON


def test_several_objects_are_parallel_calls(fake: FakeLlama) -> None:
    fake.script = lambda p: [_call("read_code", path="a.txt"), _call("read_code", path="b.txt")]
    reply = _model().invoke([HumanMessage("Compare a.txt and b.txt")])
    assert [c["args"]["path"] for c in reply.tool_calls] == ["a.txt", "b.txt"]
    second = [c for c in fake.calls if c.get("grammar")][1]
    assert second["prompt"].endswith(_call("read_code", path="a.txt") + "\n")


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
    assert reply.tool_calls == [] and reply.content == "Hello there."
    [only] = fake.calls
    assert "- read_code:" in only["prompt"] and only["grammar"] is None
    for opener in ("{", " {"):  # no token that opens a call may start the reply
        assert fake.opening[VOCAB.index(opener)] == -np.inf


def test_tool_choice_required_skips_the_answer_and_writes_a_call(fake: FakeLlama) -> None:
    objects = [_call("list_files", path=".")]
    fake.script = lambda p: objects
    fake.first = {"Hello": 9.0}  # the model would rather answer
    model = LocalChatModel(model_path="unused.gguf").bind_tools(
        BUILTIN_TOOLS, tool_choice="required"
    )
    reply = model.invoke([HumanMessage("list")])
    assert [c["name"] for c in reply.tool_calls] == ["list_files"] and reply.content == ""
    assert fake.calls[0]["grammar"] is not None  # no answer phase at all


def test_without_tools_the_reply_is_plain_text(fake: FakeLlama) -> None:
    fake.script = lambda p: ["Plain words, no JSON."]
    reply = LocalChatModel(model_path="unused.gguf").invoke([HumanMessage("say it")])
    assert reply.content == "Plain words, no JSON."
    assert [c["grammar"] for c in fake.calls] == [None]
