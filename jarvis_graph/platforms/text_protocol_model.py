"""A chat model that calls tools through ``<TOOL_CALL>`` blocks in its text.

:class:`TextProtocolChatModel` wraps a chat model built without tools (a ``ChatOpenAI``
for an endpoint without native function calling). The provider sees only system, user and
assistant text: the tools are described in the system prompt, earlier calls are written
back as blocks and tool results arrive as user messages. The reply is parsed by
:mod:`jarvis_graph.platforms.text_protocol`, so the graph sees ordinary ``tool_calls``, and
broken blocks become ``invalid_tool_calls`` whose ``error`` tells the model what to fix.
The tools prompt is here too, as it is built from langchain tool schemas.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Generator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
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
from langchain_core.messages.tool import InvalidToolCall, ToolCall, tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.utils import LC_ID_PREFIX
from pydantic import Field

from jarvis_graph.platforms.text_protocol import (
    OPEN_TAG,
    YAML_HINT,
    ParseResult,
    ProseStream,
    parse_tool_calls,
    render_call,
    render_result,
)

Calls = tuple[list[ToolCall], list[InvalidToolCall]]


class TextProtocolChatModel(BaseChatModel):
    """Speaks the text tool-call protocol on top of ``inner``.

    ``invoke`` always runs :meth:`_generate`, which streams the prose to the callbacks
    itself: the final message must come from the parse, because adding up message chunks
    re-derives ``invalid_tool_calls`` from the chunks and drops their ``error`` texts.
    ``stream()`` yields the same content and calls, but its invalid calls have no error.
    """

    inner: BaseChatModel
    single_tool_per_turn: bool = False
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "jarvis-text-tool-protocol"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {**self.inner._identifying_params, "tool_protocol": "text"}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> TextProtocolChatModel:  # type: ignore[override]
        """A copy that describes ``tools`` in its prompt; the provider never sees them."""
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def provider_messages(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """``messages`` as the provider sees them (see :func:`to_text_protocol`)."""
        prompt = render_tools_prompt(self.tools, self.single_tool_per_turn)
        return to_text_protocol(messages, prompt)

    def _should_stream(
        self,
        *,
        async_api: bool,
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> bool:
        # Only an explicit stream() streams; invoke() needs _generate (see the class doc).
        if not kwargs.get("stream"):
            return False
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _should_use_protocol_streaming(
        self,
        *,
        async_api: bool,
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> bool:
        return False  # the v2 event bridge aggregates chunks too

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks: list[ChatGenerationChunk] = []
        replies = self._chunks(messages, stop, run_manager, **kwargs)
        while True:
            try:
                chunks.append(next(replies))
            except StopIteration as done:
                tool_calls, invalid = done.value
                break
        result = generate_from_stream(iter(chunks))
        generation = result.generations[0]
        generation.message = generation.message.model_copy(
            update={"tool_calls": tool_calls, "invalid_tool_calls": invalid}
        )
        return result

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield from self._chunks(messages, stop, run_manager, **kwargs)

    def _chunks(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: CallbackManagerForLLMRun | None,
        **kwargs: Any,
    ) -> Generator[ChatGenerationChunk, None, Calls]:
        """Prose chunks as the reply arrives, then one chunk with the calls; returns them."""
        prose = ProseStream()
        message_id = f"{LC_ID_PREFIX}-{run_manager.run_id}" if run_manager else None
        for raw in self._inner_chunks(self.provider_messages(messages), stop, **kwargs):
            piece = prose.feed(_text(raw.message.content))
            usage = getattr(raw.message, "usage_metadata", None)
            if not (piece or usage or raw.message.response_metadata or raw.generation_info):
                continue
            message = AIMessageChunk(
                content=piece,
                id=message_id,
                usage_metadata=usage,
                response_metadata=raw.message.response_metadata,
            )
            chunk = ChatGenerationChunk(message=message, generation_info=raw.generation_info)
            if run_manager and piece:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        parsed = parse_tool_calls(prose.raw, self.single_tool_per_turn)
        tool_calls, invalid = self._calls(parsed)
        pieces = [
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
            for i, c in enumerate(tool_calls)
        ] + [
            tool_call_chunk(name=c["name"], args=c["args"], id=c["id"], index=len(tool_calls) + i)
            for i, c in enumerate(invalid)
        ]
        rest = parsed.text[len(prose.shown) :]
        last = AIMessageChunk(
            content=rest, id=message_id, tool_call_chunks=pieces, chunk_position="last"
        )
        chunk = ChatGenerationChunk(message=last)
        if run_manager and rest:
            run_manager.on_llm_new_token(rest, chunk=chunk)
        yield chunk
        return tool_calls, invalid

    def _inner_chunks(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        """The inner model's reply, bypassing its callbacks (they would show the raw text)."""
        inner = self.inner
        if type(inner)._stream is not BaseChatModel._stream:
            yield from inner._stream(messages, stop=stop, **kwargs)
            return
        generation = inner._generate(messages, stop=stop, **kwargs).generations[0]
        reply = generation.message
        message = AIMessageChunk(
            content=_text(reply.content),
            usage_metadata=getattr(reply, "usage_metadata", None),
            response_metadata=reply.response_metadata,
        )
        yield ChatGenerationChunk(message=message, generation_info=generation.generation_info)

    def _calls(self, parsed: ParseResult) -> Calls:
        schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in self.tools}
        tool_calls = [
            ToolCall(
                name=c["name"],
                args=_coerce(c["args"], schemas.get(c["name"], {})),
                id=_new_id(),
                type="tool_call",
            )
            for c in parsed.calls
        ]
        invalid = [
            InvalidToolCall(
                name=e["name"],
                args=e["raw"],
                id=_new_id(),
                error=e["error"],
                type="invalid_tool_call",
            )
            for e in parsed.errors
        ]
        return tool_calls, invalid


PATCH_HINT = (
    'To edit a file you may also write a block <PATCH file="path"> holding '
    "<SEARCH>old text</SEARCH><REPLACE>new text</REPLACE> pairs (or <SEARCH_START>, "
    "<SEARCH_END>, <REPLACE> and an optional <RANGE>10-40</RANGE>), closed by </PATCH>; "
    "it runs as an edit_file call."
)
EXAMPLE_CALL = ("read_code", {"path": "calc.py", "start_line": 1})
_SAMPLES = {"string": "text", "integer": 1, "number": 1.5, "boolean": True, "array": []}


def render_tools_prompt(tools: Sequence[Any], single_tool_per_turn: bool = False) -> str:
    """The system-prompt text that describes ``tools`` and how to call them.

    Args:
        tools: Tools in any form ``convert_to_openai_tool`` accepts.
        single_tool_per_turn: Ask for at most one call per reply.
    """
    if not tools:
        return ""
    specs = [convert_to_openai_tool(t)["function"] for t in tools]
    per_turn = (
        "- Call at most one tool per reply: write one block, then stop and wait for its result."
        if single_tool_per_turn
        else "- You may write several blocks in one reply; they run in order."
    )
    lines = [
        "# Tools",
        "To call a tool, write a block like this in your reply:",
        "",
        "<TOOL_CALL>\nname: <tool name>\narguments:\n  <parameter>: <value>\n</TOOL_CALL>",
        "",
        "For example:",
        "",
        render_call(*_example(specs)),
        "",
        "Rules:",
        "- One call per block. Inside it, YAML: `name` is the tool, `arguments` maps each "
        "parameter to its value, one per line, indented.",
        f"- In the YAML, {YAML_HINT}.",
        per_turn,
        '- The results come back in the next user message as <TOOL_RESULT name="...">'
        "...</TOOL_RESULT>. After your block, stop: never write a result yourself.",
        "- When you have the final answer, write it as plain text, with no <TOOL_CALL> block.",
    ]
    if any(spec["name"] == "edit_file" for spec in specs):
        lines += ["- " + PATCH_HINT]
    lines += ["", "Available tools:"]
    for spec in specs:
        lines += ["", f"## {spec['name']}", spec.get("description", "").strip()]
        lines += _describe_parameters(spec.get("parameters") or {})
    return "\n".join(lines).strip()


def _example(specs: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    if any(spec["name"] == EXAMPLE_CALL[0] for spec in specs):
        return EXAMPLE_CALL
    spec = specs[0]
    props = (spec.get("parameters") or {}).get("properties") or {}
    required = (spec.get("parameters") or {}).get("required") or list(props)[:1]
    return spec["name"], {p: _SAMPLES.get(props[p].get("type", ""), "text") for p in required}


def _describe_parameters(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties") or {}
    if not props:
        return ["Parameters: none (write `arguments: {}`)."]
    required = set(schema.get("required") or [])
    lines = ["Parameters:"]
    for name, prop in props.items():
        notes = [_type_name(prop), "required" if name in required else "optional"]
        if prop.get("default") is not None:
            notes.append(f"default {json.dumps(prop['default'])}")
        description = f": {prop['description']}" if prop.get("description") else ""
        lines.append(f"- {name} ({', '.join(notes)}){description}")
    return lines


def _type_name(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_name(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list of {_type_name(schema['items'])}"
    return str(kind)


def to_text_protocol(messages: Sequence[BaseMessage], tools_prompt: str) -> list[BaseMessage]:
    """Rewrite a conversation for a provider without native tools.

    The tools prompt is appended to the first system message (or sent as one); AI tool
    calls are written back as ``<TOOL_CALL>`` blocks after the AI's text; consecutive tool
    messages become one user message of ``<TOOL_RESULT>`` blocks, since such providers
    reject the ``tool`` role.
    """
    out: list[BaseMessage] = []
    results: list[str] = []
    prompt_placed = not tools_prompt
    for message in messages:
        if isinstance(message, ToolMessage):
            results.append(render_result(message.name or "tool", _text(message.content)))
            continue
        if results:
            out.append(HumanMessage(content="\n\n".join(results)))
            results = []
        if isinstance(message, SystemMessage) and not prompt_placed:
            out.append(SystemMessage(content=f"{_text(message.content)}\n\n{tools_prompt}"))
            prompt_placed = True
        elif isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            out.append(AIMessage(content=_with_blocks(message)))
        else:
            out.append(message)
    if results:
        out.append(HumanMessage(content="\n\n".join(results)))
    if not prompt_placed:
        out.insert(0, SystemMessage(content=tools_prompt))
    return out


def _with_blocks(message: AIMessage) -> str:
    """The AI's text followed by its calls, as the model wrote them."""
    blocks = [render_call(c["name"], c["args"]) for c in message.tool_calls]
    for bad in message.invalid_tool_calls:
        raw = bad.get("args") or ""
        if not OPEN_TAG.match(raw.lstrip()):  # not written in this protocol (a cut-off call)
            raw = f"<TOOL_CALL>\nname: {bad.get('name') or ''}\narguments: {raw}\n</TOOL_CALL>"
        blocks.append(raw)
    return "\n\n".join(p for p in (_text(message.content).strip(), *blocks) if p)


def _coerce(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Numbers and booleans given for text parameters become text (``pattern: 404``)."""
    props = schema.get("properties") or {}
    out = dict(args)
    for key, value in args.items():
        if isinstance(value, bool | int | float) and _accepts_only_text(props.get(key)):
            out[key] = json.dumps(value)
    return out


def _accepts_only_text(prop: dict[str, Any] | None) -> bool:
    if not prop:
        return False
    kinds = {s.get("type") for s in prop.get("anyOf", [prop])} - {"null"}
    return kinds == {"string"}


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [b if isinstance(b, str) else b.get("text", "") for b in content or []]
    return "".join(p for p in parts if isinstance(p, str))
