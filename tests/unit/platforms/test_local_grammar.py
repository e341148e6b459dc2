"""The local model's reply grammar with cited answers: narrowed to the task's sources, and
parsable by llama.cpp whatever a cited line holds.

The grammars are parsed by llama.cpp itself (``llama_sampler_init_grammar``, the call
llama-cpp-python makes when it samples under a grammar). Parsing reads no vocabulary
(llama.cpp needs one only to match tokens while sampling), so no model file is loaded: a
grammar it cannot parse gives no sampler, where a real reply crashed the process. What a
grammar lets the model write is checked over the embedded model's real vocabulary (its
tokenizer alone is loaded), as the local model tests do.
"""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.citations import CITES_MARK, TASK, Source, cites_schema
from jarvis_graph.features.answer_check.cited import cited_tools
from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import LocalChatModel, _grammar
from jarvis_graph.tools import artifacts
from jarvis_graph.tools.builtin import read_code
from tests.support.fake_llama import FakeLlama, use_fake_llama

DECLARE, ANSWER = cited_tools()
CITED_TOOLS = [convert_to_openai_tool(t) for t in (read_code, DECLARE, ANSWER)]

AWKWARD = [
    'LOG_LEVEL = "info"',
    r"root = C:\temp\new",
    "ends with a backslash \\",
    '\\"',
    "two\nlines",
    "carriage\rreturn",
    "a\ttab",
    "共有7个文件",
    "",
]
"""Values a grammar literal must escape: quotes, backslashes, line breaks, and others."""


def parses(grammar: str, root: str = "root") -> bool:
    """Whether llama.cpp parses ``grammar`` (what sampling under it first does)."""
    from llama_cpp import llama_cpp

    llama_cpp.llama_backend_init()
    sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.encode(), root.encode())
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def text_of(grammar: Any) -> str:
    """The GBNF text of a ``LlamaGrammar``, as the sampler is given it."""
    assert grammar._root == "root"
    return str(grammar._grammar)


def final_answer_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    (option,) = [o for o in schema["oneOf"] if o["properties"]["tool"]["const"] == "final_answer"]
    return option["properties"]["arguments"]


# --- reply_schema ------------------------------------------------------------------------


def test_the_cites_parameter_is_marked_for_the_platform() -> None:
    props = CITED_TOOLS[2]["function"]["parameters"]["properties"]
    assert props["cites"][CITES_MARK] is True


def test_reply_schema_narrows_a_cites_parameter_to_the_sources() -> None:
    sources = [
        Source(TASK, TASK, "What level does settings.py log at?"),
        Source("r1", "read_code", 'LOG_LEVEL = "info"\nPORT = 8123', args={"path": "settings.py"}),
    ]
    schema = proto.reply_schema(CITED_TOOLS, sources)
    arguments = final_answer_arguments(schema)
    assert arguments["properties"]["cites"] == cites_schema(sources)
    assert arguments["properties"]["answer"]["maxLength"] > 0  # the rest as the tool has it
    assert arguments["additionalProperties"] is False
    # the other tools keep their parameters: nothing else is marked
    by_tool = {o["properties"]["tool"]["const"]: o for o in schema["oneOf"]}
    read = by_tool["read_code"]["properties"]["arguments"]["properties"]
    assert read == CITED_TOOLS[0]["function"]["parameters"]["properties"]


def test_without_sources_the_answer_can_cite_nothing() -> None:
    arguments = final_answer_arguments(proto.reply_schema(CITED_TOOLS))
    assert arguments["properties"]["cites"] == {"type": "array", "maxItems": 0}


def test_a_tool_without_cites_is_not_narrowed() -> None:
    tools = [convert_to_openai_tool(read_code)]
    sources = [Source("r1", "read_code", "PORT = 8123", args={})]
    assert proto.reply_schema(tools, sources) == proto.reply_schema(tools)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    return use_fake_llama(monkeypatch)  # its _grammar hands the schema through as text


def test_a_cited_answer_is_decoded_under_the_threads_sources(fake: FakeLlama) -> None:
    answer = {
        "cites": [{"quote": 'LOG_LEVEL = "info"', "source": "r1"}],
        "answer": "It logs at info.",
    }
    fake.script = lambda p: [
        json.dumps({"thought": "", "tool": "final_answer", "arguments": answer})
    ]
    read = 'settings.py (lines 1-2 of 2)\n 1 | LOG_LEVEL = "info"\n 2 | PORT = 8123'
    messages = [
        HumanMessage("What level does settings.py log at?"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "x"}, "id": "r1"}]),
        ToolMessage(read, tool_call_id="r1", name="read_code", artifact=_read_artifact()),
    ]
    model = LocalChatModel(model_path="unused.gguf").bind_tools(
        [read_code, DECLARE, ANSWER], tool_choice="required", callable_tools=["final_answer"]
    )
    reply = model.invoke(messages)
    assert reply.tool_calls[0]["args"] == answer
    grammar = json.loads(next(c["grammar"] for c in fake.calls if c["grammar"] is not None))
    cites = grammar["properties"]["arguments"]["properties"]["cites"]
    offered = {
        i["properties"]["source"]["const"]: i["properties"]["quote"]["enum"]
        for i in cites["items"]["anyOf"]
    }
    # the read's lines without the header and the line-number column; the task; nothing else
    assert offered == {
        "r1": ['LOG_LEVEL = "info"', "PORT = 8123"],
        TASK: ["What level does settings.py log at?"],
    }


def _read_artifact() -> dict[str, Any]:
    return artifacts.read("settings.py", 1, 2, 2)


# --- _grammar: llama.cpp parses it ------------------------------------------------------


def test_the_parser_is_real_it_refuses_a_broken_grammar() -> None:
    assert parses('root ::= "a\\"b"')
    assert not parses('root ::= "a\\\\"b"')  # the literal ends at the second quote
    assert not parses('root ::= "unterminated')


@pytest.mark.parametrize("value", AWKWARD)
def test_an_enum_value_becomes_a_parsable_literal(value: str) -> None:
    grammar = text_of(_grammar(json.dumps({"enum": [value, "plain"]})))
    assert parses(grammar), grammar


@pytest.mark.parametrize("value", AWKWARD)
def test_a_const_value_becomes_a_parsable_literal(value: str) -> None:
    schema = {"type": "object", "properties": {"k": {"const": value}}, "required": ["k"]}
    grammar = text_of(_grammar(json.dumps(schema)))
    assert parses(grammar), grammar


def test_a_cited_reply_grammar_over_awkward_lines_parses() -> None:
    lines = "\n".join(v for v in AWKWARD if v.strip())
    sources = [
        Source(TASK, TASK, 'Which "level" does C:\\app\\settings.py log at?'),
        Source("call_0_1", "read_code", lines, args={"path": "settings.py"}),
        Source("call_1_0", "execute_script", 'echo "\\\\"\n\\n is a newline', args={}),
    ]
    schema = proto.reply_schema(CITED_TOOLS, sources)
    grammar = text_of(_grammar(json.dumps(schema)))
    assert parses(grammar)


def test_the_old_converter_breaks_on_a_quote_and_ours_does_not() -> None:
    from llama_cpp import llama_grammar

    schema = json.dumps({"enum": ['LOG_LEVEL = "info"']})
    old = llama_grammar.json_schema_to_gbnf(schema)
    ours = text_of(_grammar(schema))
    assert not parses(old), old
    assert parses(ours), ours
    # the JSON string "LOG_LEVEL = \"info\"" as one GBNF literal: every backslash escaped
    assert '"\\"LOG_LEVEL = \\\\\\"info\\\\\\"\\""' in ours


# --- the grammar over the real vocabulary: what it lets the model write ---------------------


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The vocabulary of the embedded model (its tokenizer only: no weights are loaded)."""
    from llama_cpp import llama_cpp

    from jarvis_graph.platforms.local_models import find_parts, get_recipe, pull

    recipe = get_recipe("0.5b")
    find_parts(recipe)  # a clear error naming the extra when the parts are missing
    path = pull(recipe, tmp_path_factory.mktemp("models"))
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    assert model, path
    yield llama_cpp.llama_model_get_vocab(model)
    llama_cpp.llama_model_free(model)


def writes(vocab: Any, grammar: Any, text: str) -> bool:
    """Whether a model sampling under ``grammar`` may write exactly ``text``, then stop.

    Each token of ``text`` is offered with every other token; the grammar sampler leaves
    a token it forbids at ``-inf``; an allowed one is accepted, as sampling does.
    """
    from llama_cpp import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(
        vocab, text_of(grammar).encode(), grammar._root.encode()
    )
    assert sampler
    try:
        raw = text.encode()
        ids = (llama_cpp.llama_token * (len(raw) + 8))()
        count = llama_cpp.llama_tokenize(vocab, raw, len(raw), ids, len(ids), False, True)
        size = llama_cpp.llama_vocab_n_tokens(vocab)
        data = (llama_cpp.llama_token_data * size)()
        table = np.frombuffer(data, dtype=[("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
        candidates = llama_cpp.llama_token_data_array(
            data=data, size=size, selected=-1, sorted=False
        )
        for token in [*ids[:count], llama_cpp.llama_vocab_eos(vocab)]:
            table["id"], table["logit"], table["p"] = np.arange(size), 0.0, 0.0
            candidates.size, candidates.selected = size, -1
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            allowed = table["id"][: candidates.size][np.isfinite(table["logit"][: candidates.size])]
            if token not in allowed:
                return False
            if token != llama_cpp.llama_vocab_eos(vocab):
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


@pytest.mark.slow
@pytest.mark.parametrize("value", [v for v in AWKWARD if v and v.isascii()])
def test_an_enum_literal_lets_the_model_write_that_value_and_no_other(
    vocab: Any, value: str
) -> None:
    grammar = _grammar(json.dumps({"enum": [value]}))
    assert writes(vocab, grammar, json.dumps(value))
    assert not writes(vocab, grammar, json.dumps(value + "x"))


@pytest.mark.slow
def test_a_line_in_chinese_is_quoted_as_it_reads_not_as_escapes(vocab: Any) -> None:
    # The model reads the line as it is in its prompt, and picks a quote by its first
    # tokens: as \uXXXX escapes, every Chinese line starts alike (and costs 6 characters
    # a character), so the choice among them is blind.
    line = "共有7个文件"
    grammar = _grammar(json.dumps({"enum": [line, "共有9个目录"]}))
    assert writes(vocab, grammar, json.dumps(line, ensure_ascii=False))


@pytest.mark.slow
def test_a_cited_answer_may_quote_only_a_line_of_a_real_source(vocab: Any) -> None:
    sources = [
        Source(TASK, TASK, "What level does settings.py log at?"),
        Source("r1", "read_code", 'LOG_LEVEL = "info"\nPORT = 8123', args={"path": "settings.py"}),
    ]
    answer_only = [t for t in CITED_TOOLS if t["function"]["name"] == "final_answer"]
    grammar = _grammar(json.dumps(proto.reply_schema(answer_only, sources)))

    def reply(quote: str, source: str) -> str:
        cites = [{"quote": quote, "source": source}]
        arguments = {"cites": cites, "answer": "It logs at info."}
        return json.dumps({"thought": "", "tool": "final_answer", "arguments": arguments})

    assert writes(vocab, grammar, reply('LOG_LEVEL = "info"', "r1"))
    assert writes(vocab, grammar, reply("What level does settings.py log at?", TASK))
    assert not writes(vocab, grammar, reply('LOG_LEVEL = "debug"', "r1"))  # not in r1
    assert not writes(vocab, grammar, reply('LOG_LEVEL = "info"', "r2"))  # no such call
    assert not writes(vocab, grammar, reply("PORT = 8123", TASK))  # a line of another source
