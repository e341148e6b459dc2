"""The local model's reply grammar: parsable by llama.cpp whatever a literal of a tool's
schema holds (an enum, a const), and writing those literals as they read.

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
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.features.answer_check.cited import ANSWER_KINDS, cited_tools
from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.local import _grammar
from jarvis_graph.tools.builtin import read_code

(DECLARE,) = cited_tools()
TOOLS = [convert_to_openai_tool(t) for t in (read_code, DECLARE)]

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


def test_a_reply_grammar_over_awkward_literals_parses() -> None:
    awkward = {
        "type": "function",
        "function": {
            "name": "pick",
            "description": "Pick one.",
            "parameters": {
                "type": "object",
                "properties": {"value": {"enum": [v for v in AWKWARD if v]}},
                "required": ["value"],
            },
        },
    }
    grammar = text_of(_grammar(json.dumps(proto.reply_schema([*TOOLS, awkward]))))
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
def test_a_declaration_may_state_only_a_listed_answer_kind(vocab: Any) -> None:
    only = [t for t in TOOLS if t["function"]["name"] == DECLARE.name]
    grammar = _grammar(json.dumps(proto.reply_schema(only)))

    def reply(kind: str) -> str:
        arguments = {
            "answer": kind,
            "asks_to_run_a_program": False,
            "asks_to_change_files": False,
            "asks_to_remember": False,
        }
        return json.dumps({"thought": "", "tool": DECLARE.name, "arguments": arguments})

    assert writes(vocab, grammar, reply(ANSWER_KINDS[0]))
    assert not writes(vocab, grammar, reply("a guess"))
