"""``ChatOpenAI`` that keeps the raw argument strings of the tool calls it receives.

LangChain turns a call's arguments into a dict on its own terms: streamed pieces are
merged with a forgiving partial-JSON parser (a cut ``{"script": "touch x`` becomes
``{"script": "touch x"}``), and the merged message drops the pieces. This subclass also
records each call's arguments exactly as the provider sent them, under
:data:`RAW_TOOL_CALLS` in ``additional_kwargs``, so ``call_model`` can refuse every call
whose arguments are not exactly one JSON object.

With ``single_tool_per_turn`` it binds tools with ``parallel_tool_calls=False``, the
provider's own switch for at most one tool call per reply.

Structured output is asked for without streaming (see
:meth:`RawArgumentsChatOpenAI.with_structured_output`).

Each call runs under ``reply_timeout`` (the whole call, not each read), and a stream that
ends without a finish reason is marked :data:`~jarvis_graph.platforms.finish.STREAM_CUT`
so the reply is not taken as whole.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI

from jarvis_graph.http_deadline import Deadline
from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS, parse_arguments
from jarvis_graph.platforms.deadline import late, reply_deadline
from jarvis_graph.platforms.finish import STREAM_CUT


class RawArgumentsChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` plus the raw tool-call arguments, streamed or not."""

    single_tool_per_turn: bool = False
    """Ask the provider for at most one tool call a reply (``parallel_tool_calls=False``)."""
    reply_timeout: float | None = None
    """Seconds one call may take in all, retries included (``None``: no bound)."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind ``tools``; with ``single_tool_per_turn``, parallel tool calls are turned off."""
        if self.single_tool_per_turn and tools:
            kwargs.setdefault("parallel_tool_calls", False)
        return super().bind_tools(tools, **kwargs)

    def with_structured_output(
        self, schema: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        """LangChain's structured output, asked for without streaming.

        A structured answer is used whole, so streaming it shows nothing; and LangChain's
        streaming path dumps the OpenAI SDK's parse events, whose ``parsed`` field is typed
        by an unbound type variable, so pydantic warned on every call
        (``PydanticSerializationUnexpectedValue: Expected `none```). The non-streaming
        path's dump leaves that field out (:meth:`_create_chat_result`).
        """
        whole = self.model_copy(update={"streaming": False}) if self.streaming else self
        return super(RawArgumentsChatOpenAI, whole).with_structured_output(schema, **kwargs)

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        with reply_deadline(self.reply_timeout):
            return super()._generate(*args, **kwargs)

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        with reply_deadline(self.reply_timeout) as deadline:
            yield from self._stream_with_raw_calls(deadline, *args, **kwargs)

    def _stream_with_raw_calls(
        self, deadline: Deadline | None, *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        calls: dict[int, dict[str, str]] = {}
        finished = False
        for chunk in super()._stream(*args, **kwargs):
            info = {**(chunk.generation_info or {}), **chunk.message.response_metadata}
            finished = finished or bool(info.get("finish_reason"))
            for part in getattr(chunk.message, "tool_call_chunks", None) or []:
                index = part.get("index")
                slot = calls.setdefault(
                    len(calls) if index is None else index, {"id": "", "name": "", "arguments": ""}
                )
                slot["id"] = slot["id"] or part.get("id") or ""
                slot["name"] = slot["name"] or part.get("name") or ""
                slot["arguments"] += part.get("args") or ""
            yield chunk
        if not finished and deadline is not None and deadline.expired:
            # the deadline shut the connection: a stream read to its close ends quietly
            raise late(EOFError("the connection was closed at the deadline"), deadline)
        extra = {RAW_TOOL_CALLS: [calls[i] for i in sorted(calls)]} if calls else {}
        if calls or not finished:  # one last, empty chunk: merged into the message
            message = AIMessageChunk(content="", additional_kwargs=extra)
            # the provider never said the reply was finished: it may be cut anywhere
            cut = None if finished else {STREAM_CUT: True}
            yield ChatGenerationChunk(message=message, generation_info=cut)

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        # A structured reply's ``parsed`` holds the caller's pydantic object where the
        # SDK's type says None: dumped, pydantic warns. LangChain reads it off the response.
        data = (
            response
            if isinstance(response, dict)
            else response.model_dump(exclude={"choices": {"__all__": {"message": {"parsed"}}}})
        )
        raws = [_raw_calls(choice) for choice in data.get("choices") or []]
        if any(parse_arguments(c["arguments"])[1] for calls in raws for c in calls):
            # LangChain would take ``[...]`` or ``null`` for arguments and fail on them:
            # such calls reach it as plainly invalid, and their raw text travels alongside.
            data = copy.deepcopy(data)
            for choice in data["choices"]:
                for call in (choice.get("message") or {}).get("tool_calls") or []:
                    function = call.get("function") or {}
                    if parse_arguments(function.get("arguments") or "")[1]:
                        function["arguments"] = _NOT_JSON
            response = data
        result = super()._create_chat_result(response, generation_info)
        for generation, raw in zip(result.generations, raws, strict=False):
            if raw:
                generation.message.additional_kwargs[RAW_TOOL_CALLS] = raw
        return result


_NOT_JSON = "(arguments refused: see the raw text)"


def _raw_calls(choice: dict[str, Any]) -> list[dict[str, str]]:
    """The tool calls of one choice, arguments exactly as received."""
    return [
        {
            "id": call.get("id") or "",
            "name": (call.get("function") or {}).get("name") or "",
            "arguments": (call.get("function") or {}).get("arguments") or "",
        }
        for call in (choice.get("message") or {}).get("tool_calls") or []
    ]
