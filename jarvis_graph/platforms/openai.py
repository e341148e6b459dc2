"""The ``openai`` platform: ChatOpenAI against any OpenAI-compatible endpoint."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from jarvis_graph.config import ModelSpec
from jarvis_graph.platforms.registry import PlatformError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def create_openai_model(spec: ModelSpec) -> BaseChatModel:
    """A ``ChatOpenAI`` for ``spec``; the key is read from ``spec.api_key_env``.

    The OpenAI client retries 429, 5xx and timeouts ``max_retries`` times with
    exponential backoff; after that the error reaches ``call_model``.
    """
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

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
    model = ChatOpenAI(
        model=spec.model,
        base_url=spec.base_url,
        api_key=SecretStr(key or "not-needed"),  # local servers accept any key
        temperature=spec.temperature,
        max_completion_tokens=spec.max_tokens,
        timeout=spec.timeout,
        max_retries=spec.max_retries,
        streaming=True,
        stream_usage=True,
    )
    if spec.tool_protocol == "text":  # no native function calling: <TOOL_CALL> blocks
        from jarvis_graph.platforms.text_protocol_model import TextProtocolChatModel

        return TextProtocolChatModel(inner=model, single_tool_per_turn=spec.single_tool_per_turn)
    return model
