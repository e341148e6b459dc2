"""The ``openai`` platform: ChatOpenAI against any OpenAI-compatible endpoint."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from jarvis_graph.config import ModelSpec
from jarvis_graph.platforms.deadline import arm_request, watch_response
from jarvis_graph.platforms.errors import PlatformError

if TYPE_CHECKING:
    import httpx
    from langchain_core.language_models import BaseChatModel

# Requests sent by the OpenAI client within ``counting_requests()`` (retries included), so
# an error can say how many were made instead of quoting the retry budget.
_SENT: ContextVar[list[int] | None] = ContextVar("jarvis_requests_sent", default=None)


@contextmanager
def counting_requests() -> Iterator[list[int]]:
    """Count the HTTP requests the ``openai`` platform sends inside the block (``box[0]``)."""
    box = [0]
    token = _SENT.set(box)
    try:
        yield box
    finally:
        _SENT.reset(token)


def _on_request(request: httpx.Request) -> None:
    """Before every attempt (retries too): put it under the call's deadline, count it."""
    arm_request(request)
    box = _SENT.get()
    if box is not None:
        box[0] += 1


@functools.cache
def _http_client() -> Any:
    """One HTTP client for the process, as LangChain shares its own.

    It has the OpenAI client's defaults plus hooks that see every attempt, retries too.
    """
    from openai import DefaultHttpxClient

    return DefaultHttpxClient(event_hooks={"request": [_on_request], "response": [watch_response]})


def create_openai_model(spec: ModelSpec) -> BaseChatModel:
    """A ``ChatOpenAI`` for ``spec``; the key is read from ``spec.api_key_env``.

    The OpenAI client retries 429, 5xx and timeouts ``max_retries`` times with
    exponential backoff; after that the error reaches ``call_model``. The whole call,
    retries included, ends after ``reply_timeout`` seconds
    (:func:`~jarvis_graph.platforms.deadline.reply_deadline`).
    """
    from pydantic import SecretStr

    from jarvis_graph.platforms.openai_raw import RawArgumentsChatOpenAI

    key = os.environ.get(spec.api_key_env)
    if not key and not spec.base_url:
        msg = (
            f"platform 'openai' needs an API key: environment variable {spec.api_key_env} "
            "is not set (set it, or point base_url at a server that needs no key)"
        )
        raise PlatformError(msg)
    if not spec.model:
        msg = "platform 'openai' needs a model name (config `model:` or JARVIS_MODEL)"
        raise PlatformError(msg)
    model = RawArgumentsChatOpenAI(
        model=spec.model,
        base_url=spec.base_url,
        api_key=SecretStr(key or "not-needed"),  # local servers accept any key
        temperature=spec.temperature,
        max_completion_tokens=spec.max_tokens,
        timeout=spec.timeout,
        reply_timeout=spec.reply_timeout,
        max_retries=spec.max_retries,
        streaming=spec.stream,
        stream_usage=True,
        http_client=_http_client(),
        # native calls: the provider is asked for one call a reply (the text protocol
        # enforces it itself, below)
        single_tool_per_turn=spec.single_tool_per_turn and spec.tool_protocol == "native",
    )
    if spec.tool_protocol == "text":  # no native function calling: <TOOL_CALL> blocks
        from jarvis_graph.platforms.text_protocol_model import TextProtocolChatModel

        return TextProtocolChatModel(inner=model, single_tool_per_turn=spec.single_tool_per_turn)
    return model
