"""The text tool-call protocol: parser, prompt, history conversion, streaming guard."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool

from jarvis_graph.platforms import text_protocol_model
from jarvis_graph.platforms.text_protocol import (
    ProseStream,
    parse_tool_calls,
    render_call,
    render_result,
)
from jarvis_graph.platforms.text_protocol_model import (
    TextProtocolChatModel,
    render_tools_prompt,
    to_text_protocol,
)

READ = "<TOOL_CALL>\nname: read_code\narguments:\n  path: calc.py\n  start_line: 1\n</TOOL_CALL>"
LIST = "<TOOL_CALL>\nname: list_files\narguments:\n  path: src\n</TOOL_CALL>"
BAD_YAML = "<TOOL_CALL>\nname: read_code\narguments:\n  path: [calc.py\n</TOOL_CALL>"


def only_call(text: str) -> dict[str, Any]:
    result = parse_tool_calls(text)
    assert not result.errors, result.errors
    [call] = result.calls
    return dict(call)


def only_error(text: str) -> dict[str, Any]:
    result = parse_tool_calls(text)
    assert not result.calls, result.calls
    [error] = result.errors
    return dict(error)


# -- well-formed replies ---------------------------------------------------------------


def test_one_call_with_prose_before_and_after() -> None:
    result = parse_tool_calls(f"  Let me look.\n\n{READ}\n\nThen I will answer.  ")
    assert result.text == "Let me look.\n\nThen I will answer."
    assert result.calls == [{"name": "read_code", "args": {"path": "calc.py", "start_line": 1}}]
    assert result.errors == []


def test_no_blocks_is_all_prose() -> None:
    result = parse_tool_calls("\n The answer is 42. !!!COMPLETE!!!\n")
    assert (result.text, result.calls, result.errors) == (
        "The answer is 42. !!!COMPLETE!!!",
        [],
        [],
    )


def test_several_blocks_all_run_by_default() -> None:
    result = parse_tool_calls(f"{READ}\n{LIST}")
    assert [c["name"] for c in result.calls] == ["read_code", "list_files"]
    assert result.text == ""


def test_lowercase_tags_extra_blank_lines_and_no_arguments() -> None:
    call = only_call("<tool_call>\n\n\nname: list_files\n\n\n</tool_call>")
    assert call == {"name": "list_files", "args": {}}
    assert only_call("<TOOL_CALL>\nname: list_files\narguments:\n</TOOL_CALL>")["args"] == {}


@pytest.mark.parametrize(
    "reply",
    [
        f"Reading.\n```yaml\n{READ}\n```\nDone.",
        f"Reading.\n```\n{READ}\n```\nDone.",
        "Reading.\n<TOOL_CALL>\n```yaml\nname: read_code\narguments:\n  path: calc.py\n"
        "  start_line: 1\n```\n</TOOL_CALL>\nDone.",
    ],
    ids=["fenced-yaml", "fenced", "fence-inside"],
)
def test_code_fences_around_or_inside_a_block(reply: str) -> None:
    result = parse_tool_calls(reply)
    assert result.text == "Reading.\n\nDone."
    assert result.calls == [{"name": "read_code", "args": {"path": "calc.py", "start_line": 1}}]


def test_a_code_block_of_the_prose_keeps_its_closing_fence() -> None:
    result = parse_tool_calls(f"Example:\n```python\nx = 1\n```\n{LIST}")
    assert result.text == "Example:\n```python\nx = 1\n```"
    assert len(result.calls) == 1


@pytest.mark.parametrize(
    "block",
    [
        '<TOOL_CALL>\nname: read_code\narguments: {"path": "calc.py", "start_line": 1}\n'
        "</TOOL_CALL>",
        '<TOOL_CALL>\nname: read_code\narguments: {\n  "path": "calc.py",\n  "start_line": 1\n}'
        "\n</TOOL_CALL>",
        '<tool_call>\n{"name": "read_code", "arguments": {"path": "calc.py", "start_line": 1}}\n'
        "</tool_call>",
        '<TOOL_CALL>\nname: read_code\narguments: \'{"path": "calc.py", "start_line": 1}\'\n'
        "</TOOL_CALL>",
        "<TOOL_CALL>\nname: read_code\npath: calc.py\nstart_line: 1\n</TOOL_CALL>",
    ],
    ids=["json-flow", "json-multiline", "json-body", "json-string", "top-level-params"],
)
def test_argument_forms_models_use(block: str) -> None:
    assert only_call(block) == {"name": "read_code", "args": {"path": "calc.py", "start_line": 1}}


def test_yaml_scalars_stay_json_like() -> None:
    block = (
        "<TOOL_CALL>\nname: t\narguments:\n  a: yes\n  b: 2024-01-01\n  c: 0755\n  d: true\n"
        "  e: 1.5\n  f: null\n  g: |\n    line 1\n    line 2\n</TOOL_CALL>"
    )
    assert only_call(block)["args"] == {
        "a": "yes",
        "b": "2024-01-01",
        "c": "0755",
        "d": True,
        "e": 1.5,
        "f": None,
        "g": "line 1\nline 2\n",
    }


def test_unquoted_special_values_are_refused_not_guessed() -> None:
    # Quoting them would guess where each value ends; the model is told how to quote.
    error = only_error(
        "<TOOL_CALL>\nname: search_files\narguments:\n  pattern: *.py: x\n  path: @src\n"
        "</TOOL_CALL>"
    )
    assert error["name"] == "search_files"
    assert "does not parse" in error["error"]
    assert "quote values" in error["error"]


def test_a_key_given_twice_is_refused() -> None:
    error = only_error(
        "<TOOL_CALL>\nname: execute_script\narguments:\n  script: echo hi\n"
        "  script: rm -rf build\n</TOOL_CALL>"
    )
    assert "'script' appears more than once" in error["error"]


def test_a_block_whose_aliases_expand_too_far_is_refused() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]" for p, n in itertools.pairwise("abcdef")]
    arguments = "".join(f"  {line}\n" for line in levels)
    error = only_error(f"<TOOL_CALL>\nname: list_files\narguments:\n{arguments}</TOOL_CALL>")
    assert "the YAML expands to more than 200,000 values" in error["error"]


def test_results_the_model_invents_are_cut_off() -> None:
    reply = f'{READ}\n<TOOL_RESULT name="read_code">\nmade up\n</TOOL_RESULT>\nSo it adds.'
    result = parse_tool_calls(reply)
    assert result.text == ""
    assert len(result.calls) == 1


# -- malformed replies -----------------------------------------------------------------


def test_missing_end_tag_at_the_end_is_repaired() -> None:
    result = parse_tool_calls("Reading.\n<TOOL_CALL>\nname: read_code\narguments:\n  path: a.py\n")
    assert result.text == "Reading."
    assert result.calls == [{"name": "read_code", "args": {"path": "a.py"}}]


def test_missing_end_tag_before_the_next_block_is_repaired() -> None:
    reply = f"<TOOL_CALL>\nname: read_code\narguments:\n  path: a.py\n{LIST}"
    result = parse_tool_calls(reply)
    assert [c["args"] for c in result.calls] == [{"path": "a.py"}, {"path": "src"}]
    assert result.errors == []


def test_bad_yaml_quotes_the_parse_error_with_its_line() -> None:
    error = only_error(f"First.\n{BAD_YAML}")
    assert error["name"] == "read_code"
    assert error["raw"] == BAD_YAML
    assert "does not parse" in error["error"]
    assert "expected ',' or ']'" in error["error"]
    assert "which starts at line 3, column 9" in error["error"]
    assert "quote values" in error["error"]
    assert not error["error"].endswith(".")  # run_tools adds the full stop


def test_missing_name() -> None:
    error = only_error("<TOOL_CALL>\narguments:\n  path: a.py\n</TOOL_CALL>")
    assert error["name"] == ""
    assert "no `name`" in error["error"]
    assert "name: <tool name>" in error["error"]


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [("[a.py, b.py]", "a list"), ("a.py", "str 'a.py'"), ("5", "int '5'")],
)
def test_arguments_not_a_mapping(arguments: str, kind: str) -> None:
    error = only_error(f"<TOOL_CALL>\nname: read_code\narguments: {arguments}\n</TOOL_CALL>")
    assert error["name"] == "read_code"
    assert f"must be a mapping of parameter names to values, got {kind}" in error["error"]


def test_block_that_is_not_a_mapping() -> None:
    error = only_error("<TOOL_CALL>\n- read_code\n- a.py\n</TOOL_CALL>")
    assert "YAML mapping with `name`, got a list" in error["error"]


def test_parameters_next_to_arguments() -> None:
    error = only_error("<TOOL_CALL>\nname: read_code\narguments: {}\npath: a.py\n</TOOL_CALL>")
    assert "unexpected key(s) 'path'" in error["error"]
    assert "under `arguments:`" in error["error"]


def test_empty_block() -> None:
    result = parse_tool_calls("Hmm.\n<TOOL_CALL>\n\n</TOOL_CALL>")
    assert result.text == "Hmm."
    assert [e["error"] for e in result.errors] == [
        "the <TOOL_CALL> block is empty: it needs `name:` and `arguments:`"
    ]


def test_single_tool_per_turn_runs_the_first_and_explains_the_rest() -> None:
    result = parse_tool_calls(f"Two things.\n{READ}\n{LIST}\n{READ}", single_tool_per_turn=True)
    assert result.text == "Two things."
    assert result.calls == [{"name": "read_code", "args": {"path": "calc.py", "start_line": 1}}]
    assert [e["name"] for e in result.errors] == ["list_files", "read_code"]
    assert [e["raw"] for e in result.errors] == [LIST, READ]
    for error in result.errors:
        assert "only one tool call per turn is allowed and this reply had 3" in error["error"]
        assert "the first one ran, this one was not run" in error["error"]
        assert "again on its own" in error["error"]


def test_single_tool_per_turn_with_a_broken_first_block() -> None:
    result = parse_tool_calls(f"{BAD_YAML}\n{LIST}", single_tool_per_turn=True)
    assert result.calls == []
    assert "does not parse" in result.errors[0]["error"]
    assert "only the first one was looked at, this one was not run" in result.errors[1]["error"]


def test_single_tool_per_turn_with_one_block_is_normal() -> None:
    assert len(parse_tool_calls(READ, single_tool_per_turn=True).calls) == 1


# -- rendering -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {"path": "calc.py", "start_line": 1},
        {},
        {"content": "line 1\n  indented: yes\nlast", "n": "42", "flag": "true", "x": None},
        {"script": "echo 'a: b' && ls *.py # {not json}", "list": [1, "two"], "d": {"k": 1.5}},
        {"text": "trailing spaces  \nand a tab\there\n"},
    ],
)
def test_render_call_round_trips(args: dict[str, Any]) -> None:
    assert only_call(render_call("write_file", args)) == {"name": "write_file", "args": args}


def test_render_call_writes_multiline_text_as_a_block() -> None:
    assert render_call("write_file", {"path": "a.py", "content": "x = 1\ny = 2\n"}) == (
        "<TOOL_CALL>\nname: write_file\narguments:\n  path: a.py\n  content: |\n    x = 1\n"
        "    y = 2\n</TOOL_CALL>"
    )


def test_render_result() -> None:
    assert render_result("read_code", "1: x = 1") == (
        '<TOOL_RESULT name="read_code">\n1: x = 1\n</TOOL_RESULT>'
    )


@tool(parse_docstring=True)
def read_code(path: str, start_line: int = 1, end_line: int | None = None) -> str:
    """Read a text file with line numbers.

    Args:
        path: File path, relative to the workspace root.
        start_line: First line to show (1-based).
        end_line: Last line to show.
    """
    return path


@tool
def set_mode(mode: str, tags: list[str]) -> str:
    """Switch the mode."""
    return mode


PROMPT = """\
# Tools
To call a tool, write a block like this in your reply:

<TOOL_CALL>
name: <tool name>
arguments:
  <parameter>: <value>
</TOOL_CALL>

For example:

<TOOL_CALL>
name: read_code
arguments:
  path: calc.py
  start_line: 1
</TOOL_CALL>

Rules:
- One call per block. Inside it, YAML: `name` is the tool, `arguments` maps each parameter \
to its value, one per line, indented.
- In the YAML, quote values that contain ': ' or start with * & ! % @ or `, and write \
multi-line text as a block (`key: |` then the lines, indented).
- You may write several blocks in one reply; they run in order.
- The results come back in the next user message as <TOOL_RESULT name="...">...</TOOL_RESULT>. \
After your block, stop: never write a result yourself.
- When you have the final answer, write it as plain text, with no <TOOL_CALL> block.

Available tools:

## read_code
Read a text file with line numbers.
Parameters:
- path (string, required): File path, relative to the workspace root.
- start_line (integer, optional, default 1): First line to show (1-based).
- end_line (integer or null, optional): Last line to show.

## set_mode
Switch the mode.
Parameters:
- mode (string, required)
- tags (list of string, required)"""


def test_tools_prompt_snapshot() -> None:
    assert render_tools_prompt([read_code, set_mode]) == PROMPT


def test_tools_prompt_variants() -> None:
    single = render_tools_prompt([read_code], single_tool_per_turn=True)
    assert "- Call at most one tool per reply: write one block, then stop" in single
    assert "several blocks" not in single
    other = render_tools_prompt([set_mode])
    assert (
        "<TOOL_CALL>\nname: set_mode\narguments:\n  mode: text\n  tags: []\n</TOOL_CALL>" in other
    )
    assert render_tools_prompt([]) == ""


def test_tools_prompt_example_parses() -> None:
    example = PROMPT.split("For example:\n\n")[1].split("\n\nRules:")[0]
    assert only_call(example)["name"] == "read_code"


# -- history conversion ----------------------------------------------------------------


def conversation() -> list[BaseMessage]:
    calls = [
        {"name": "read_code", "args": {"path": "a.py"}, "id": "c1", "type": "tool_call"},
        {"name": "list_files", "args": {}, "id": "c2", "type": "tool_call"},
    ]
    bad = {"name": "x", "args": BAD_YAML, "id": "c3", "error": "bad", "type": "invalid_tool_call"}
    return [
        SystemMessage("You are Jarvis."),
        HumanMessage("What is in a.py?"),
        AIMessage("Let me look.", tool_calls=calls, invalid_tool_calls=[bad]),
        ToolMessage("1: x = 1", tool_call_id="c1", name="read_code"),
        ToolMessage("a.py", tool_call_id="c2", name="list_files"),
        ToolMessage("Your call could not be run", tool_call_id="c3", name="x", status="error"),
        AIMessage("It sets x."),
        HumanMessage("Thanks"),
    ]


def test_history_for_a_provider_without_native_tools() -> None:
    out = to_text_protocol(conversation(), "TOOLS PROMPT")
    assert [m.type for m in out] == ["system", "human", "ai", "human", "ai", "human"]
    assert out[0].content == "You are Jarvis.\n\nTOOLS PROMPT"
    ai = out[2]
    assert isinstance(ai, AIMessage)
    assert not ai.tool_calls and not ai.invalid_tool_calls
    assert ai.content == "\n\n".join(
        [
            "Let me look.",
            render_call("read_code", {"path": "a.py"}),
            render_call("list_files", {}),
            BAD_YAML,
        ]
    )
    assert out[3].content == "\n\n".join(
        [
            render_result("read_code", "1: x = 1"),
            render_result("list_files", "a.py"),
            render_result("x", "Your call could not be run"),
        ]
    )
    assert out[4].content == "It sets x."
    assert not any(isinstance(m, ToolMessage) for m in out)


def test_rendered_history_parses_back_to_the_same_calls() -> None:
    ai = to_text_protocol(conversation(), "")[2]
    result = parse_tool_calls(str(ai.content))
    assert result.text == "Let me look."
    assert [(c["name"], c["args"]) for c in result.calls] == [
        ("read_code", {"path": "a.py"}),
        ("list_files", {}),
    ]
    assert len(result.errors) == 1


def test_prompt_inserted_when_there_is_no_system_message() -> None:
    out = to_text_protocol([HumanMessage("hi")], "TOOLS")
    assert [(m.type, m.content) for m in out] == [("system", "TOOLS"), ("human", "hi")]
    assert to_text_protocol([HumanMessage("hi")], "") == [HumanMessage("hi")]


def test_invalid_call_from_another_source_is_written_as_a_block() -> None:
    bad = {"name": "read_code", "args": '{"path": "a', "id": "c", "error": "cut off"}
    out = to_text_protocol([AIMessage("", invalid_tool_calls=[bad])], "")
    assert out[0].content == '<TOOL_CALL>\nname: read_code\narguments: {"path": "a\n</TOOL_CALL>'


# -- streaming guard -------------------------------------------------------------------


def feed_all(text: str, size: int) -> tuple[str, ProseStream]:
    prose = ProseStream()
    shown = "".join(prose.feed(text[i : i + size]) for i in range(0, len(text), size))
    return shown, prose


@pytest.mark.parametrize("size", [1, 2, 5, 7, 100])
def test_prose_stream_holds_back_blocks_and_fences(size: int) -> None:
    reply = f"Let me look.\n```yaml\n{READ}\n```\nThen more."
    shown, prose = feed_all(reply, size)
    assert shown == "Let me look."
    assert prose.raw == reply
    assert parse_tool_calls(reply).text.startswith(shown)


@pytest.mark.parametrize("size", [1, 3, 100])
def test_prose_stream_without_blocks_shows_everything_but_trailing_space(size: int) -> None:
    shown, _ = feed_all("  a < b, see `x`\n```py\ncode\n```\nend  \n", size)
    assert shown == "a < b, see `x`\n```py\ncode\n```\nend"


FRAGMENTS = [
    "Hello",
    " ",
    "\n",
    "\n\n",
    "```",
    "```yaml\n",
    "`",
    "<",
    "<tool",
    "<TOOL_CALL>",
    "</TOOL_CALL>",
    "<tool_call>",
    "name: read_code\n",
    "arguments:\n  path: a.py\n",
    '<TOOL_RESULT name="x">',
    "text: with colon",
]


@settings(max_examples=300, deadline=None, database=None)
@given(
    parts=st.lists(st.sampled_from(FRAGMENTS), max_size=14),
    size=st.integers(min_value=1, max_value=9),
)
def test_streamed_prose_is_always_a_prefix_of_the_parsed_text(parts: list[str], size: int) -> None:
    reply = "".join(parts)
    shown, _ = feed_all(reply, size)
    assert parse_tool_calls(reply).text.startswith(shown)


# -- the chat model --------------------------------------------------------------------


class FakeInner(BaseChatModel):
    """Replies ``reply`` in pieces of ``size`` characters and records what it was sent."""

    reply: str
    size: int = 7
    seen: list[tuple[list[BaseMessage], dict[str, Any]]] = []

    @property
    def _llm_type(self) -> str:
        return "fake-inner"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append((messages, kw))
        message = AIMessage(content=self.reply, response_metadata={"finish_reason": "stop"})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self.seen.append((messages, kw))
        for i in range(0, len(self.reply), self.size):
            yield ChatGenerationChunk(message=AIMessageChunk(content=self.reply[i : i + self.size]))
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        last = AIMessageChunk(content="", usage_metadata=usage)  # type: ignore[arg-type]
        yield ChatGenerationChunk(message=last, generation_info={"finish_reason": "stop"})


class GenerateOnly(FakeInner):
    """An inner model without streaming support."""

    _stream = BaseChatModel._stream  # type: ignore[assignment]


SEARCH = "<TOOL_CALL>\nname: search_files\narguments:\n  pattern: 404\n</TOOL_CALL>"
REPLY = f"Let me look.\n{READ}\n```\n{SEARCH}\n```\n{BAD_YAML}\nWaiting."


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr(text_protocol_model, "_new_id", lambda: f"call_{next(counter):012d}")


@tool
def search_files(pattern: str, path: str = ".") -> str:
    """Search file contents."""
    return pattern


def model(reply: str = REPLY, size: int = 7, single: bool = False) -> TextProtocolChatModel:
    inner = FakeInner(reply=reply, size=size, seen=[])
    base = TextProtocolChatModel(inner=inner, single_tool_per_turn=single)
    return base.bind_tools([read_code, search_files])


def test_bind_tools_keeps_tools_away_from_the_provider() -> None:
    base = TextProtocolChatModel(inner=FakeInner(reply="hi", seen=[]))
    bound = base.bind_tools([read_code])
    assert base.tools == []
    assert [t["function"]["name"] for t in bound.tools] == ["read_code"]
    bound.invoke([SystemMessage("sys"), HumanMessage("hi")])
    [(sent, kwargs)] = bound.inner.seen  # type: ignore[attr-defined]
    assert "tools" not in kwargs and "tool_choice" not in kwargs
    assert [m.type for m in sent] == ["system", "human"]
    assert str(sent[0].content).startswith("sys\n\n# Tools\n")


def test_invoke_turns_blocks_into_tool_calls() -> None:
    reply = model().invoke([HumanMessage("go")])
    assert isinstance(reply, AIMessage)
    assert reply.content == "Let me look.\n\nWaiting."
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("read_code", {"path": "calc.py", "start_line": 1}),
        ("search_files", {"pattern": "404"}),  # a number given for a text parameter
    ]
    [bad] = reply.invalid_tool_calls
    assert (bad["name"], bad["args"], bad["type"]) == ("read_code", BAD_YAML, "invalid_tool_call")
    assert bad["error"] and "does not parse" in bad["error"]
    ids = [c["id"] for c in reply.tool_calls] + [bad["id"]]
    assert len(set(ids)) == 3
    assert all(i and i.startswith("call_") and len(i) == 17 for i in ids)
    assert reply.usage_metadata and reply.usage_metadata["total_tokens"] == 15
    assert reply.response_metadata["finish_reason"] == "stop"


def test_single_tool_per_turn_reaches_the_parser_and_the_prompt() -> None:
    chat = model(single=True)
    reply = chat.invoke([HumanMessage("go")])
    assert len(reply.tool_calls) == 1  # type: ignore[attr-defined]
    assert len(reply.invalid_tool_calls) == 2  # type: ignore[attr-defined]
    sent = chat.inner.seen[0][0]  # type: ignore[attr-defined]
    assert "Call at most one tool per reply" in str(sent[0].content)


@pytest.mark.parametrize("size", [1, 4, 7, 1000])
def test_stream_aggregates_to_what_generate_returns(size: int, fixed_ids: None) -> None:
    generated = model(size=size).invoke([HumanMessage("go")])
    chunks = list(model(size=size).stream([HumanMessage("go")]))
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert isinstance(generated, AIMessage) and isinstance(total, AIMessageChunk)
    assert "name:" not in "".join(str(c.content) for c in chunks[:-1])
    assert total.content == generated.content
    renumber = {f"call_{n + 4:012d}": f"call_{n + 1:012d}" for n in range(3)}
    assert [{**c, "id": renumber[c["id"]]} for c in total.tool_calls] == generated.tool_calls
    # Adding chunks re-derives invalid calls without their error: why invoke() never streams.
    assert [{**c, "id": renumber[c["id"]], "error": "E"} for c in total.invalid_tool_calls] == [
        {**c, "error": "E"} for c in generated.invalid_tool_calls
    ]
    assert total.usage_metadata == generated.usage_metadata


class Tokens(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)


def test_invoke_streams_prose_to_callbacks_and_keeps_errors() -> None:
    tokens = Tokens()
    reply = model().invoke([HumanMessage("go")], config={"callbacks": [tokens]})
    assert "".join(tokens.tokens) == "Let me look.\n\nWaiting."
    assert len(tokens.tokens) > 2
    assert reply.invalid_tool_calls[0]["error"]  # type: ignore[attr-defined]


def test_inner_model_without_streaming() -> None:
    inner = GenerateOnly(reply=REPLY, seen=[])
    reply = TextProtocolChatModel(inner=inner).invoke([HumanMessage("go")])
    assert reply.content == "Let me look.\n\nWaiting."
    assert len(reply.tool_calls) == 2  # type: ignore[attr-defined]


def test_plain_answer_has_no_calls() -> None:
    reply = model(reply="Done: 42. !!!COMPLETE!!!").invoke([HumanMessage("go")])
    assert reply.content == "Done: 42. !!!COMPLETE!!!"
    assert reply.tool_calls == [] and reply.invalid_tool_calls == []  # type: ignore[attr-defined]


def test_tool_call_args_survive_json() -> None:
    reply = model().invoke([HumanMessage("go")])
    assert json.loads(json.dumps(reply.tool_calls)) == reply.tool_calls  # type: ignore[attr-defined]


async def test_ainvoke() -> None:
    reply = await model().ainvoke([HumanMessage("go")])
    assert reply.content == "Let me look.\n\nWaiting."
    assert reply.invalid_tool_calls[0]["error"]  # type: ignore[attr-defined]


def test_openai_platform_wraps_only_for_the_text_protocol() -> None:
    from langchain_openai import ChatOpenAI

    from jarvis_graph.config import ModelSpec
    from jarvis_graph.platforms.openai import create_openai_model

    spec = ModelSpec(platform="openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert isinstance(create_openai_model(spec), ChatOpenAI)
    text = spec.model_copy(update={"tool_protocol": "text", "single_tool_per_turn": True})
    wrapped = create_openai_model(text)
    assert isinstance(wrapped, TextProtocolChatModel)
    assert isinstance(wrapped.inner, ChatOpenAI)
    assert wrapped.single_tool_per_turn is True
