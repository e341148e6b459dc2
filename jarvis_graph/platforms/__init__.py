"""LLM platforms: a registry of name -> factory -> langchain ``BaseChatModel``."""

from jarvis_graph.platforms.errors import PlatformError, ProviderError
from jarvis_graph.platforms.registry import (
    create_chat_model,
    list_platforms,
    register_platform,
)

__all__ = [
    "PlatformError",
    "ProviderError",
    "create_chat_model",
    "list_platforms",
    "register_platform",
]
