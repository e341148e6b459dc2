"""Platform registry: built-ins, plus plugins from ``~/.jarvis/platforms/*.py``.

A plugin module defines ``register(register_platform)`` and calls it with
``(name, factory, description)``; a factory takes a :class:`ModelSpec` and returns a
``BaseChatModel``.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jarvis_graph.config import ModelSpec, jarvis_home
from jarvis_graph.platforms.errors import PlatformError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger(__name__)

Factory = Callable[[ModelSpec], "BaseChatModel"]


@dataclass(frozen=True)
class PlatformInfo:
    """A registered platform."""

    name: str
    factory: Factory
    description: str
    source: str


_registry: dict[str, PlatformInfo] = {}
_lock = threading.Lock()
_plugins_loaded = False
_plugin_errors: list[str] = []


def register_platform(
    name: str, factory: Factory, description: str = "", source: str = "built-in"
) -> None:
    """Register (or replace) the platform ``name``."""
    with _lock:
        _registry[name] = PlatformInfo(name, factory, description, source)


def _builtin_openai(spec: ModelSpec) -> BaseChatModel:
    from jarvis_graph.platforms.openai import create_openai_model

    return create_openai_model(spec)


def _builtin_scripted(spec: ModelSpec) -> BaseChatModel:
    from jarvis_graph.platforms.scripted import ScriptedChatModel

    return ScriptedChatModel.from_file(spec.script or "")


def _builtin_local(spec: ModelSpec) -> BaseChatModel:
    from jarvis_graph.platforms.local import create_local_model

    return create_local_model(spec)


register_platform(
    "openai", _builtin_openai, "Any OpenAI-compatible chat-completions endpoint (base_url)"
)
register_platform("local", _builtin_local, "Embedded llama.cpp model in process (no key)")
register_platform("scripted", _builtin_scripted, "Replays turns from a YAML/JSON script")
_BUILTINS = dict(_registry)  # restored by reset_plugins() when a plugin replaced one


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    folder = jarvis_home() / "platforms"
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        try:
            spec = importlib.util.spec_from_file_location(f"jarvis_platform_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            register = getattr(module, "register", None)
            if not callable(register):
                msg = "defines no register(register_platform) function"
                raise PlatformError(msg)
            register(functools.partial(register_platform, source=str(path)))
        except Exception as exc:
            note = f"platform plugin {path} was skipped: {exc}"
            _plugin_errors.append(note)
            logger.warning(note)


def reset_plugins() -> None:
    """Unregister plugin platforms and forget load errors; the next lookup reloads them."""
    global _plugins_loaded
    with _lock:
        for name in [n for n, info in _registry.items() if info.source != "built-in"]:
            del _registry[name]
            if name in _BUILTINS:
                _registry[name] = _BUILTINS[name]
        _plugin_errors.clear()
        _plugins_loaded = False


def list_platforms() -> list[PlatformInfo]:
    """All registered platforms, plugins included, sorted by name."""
    _load_plugins()
    return sorted(_registry.values(), key=lambda p: p.name)


def plugin_errors() -> list[str]:
    """Messages for plugin files that failed to load."""
    _load_plugins()
    return list(_plugin_errors)


def resolve_platform(spec: ModelSpec) -> str:
    """Turn ``auto`` into a concrete platform name."""
    if spec.platform != "auto":
        return spec.platform
    if spec.script:
        return "scripted"
    if os.environ.get(spec.api_key_env) or spec.base_url:
        return "openai"
    return "local"  # offline by default: the embedded model


def _names_local_model(model: str) -> bool:
    return model.removeprefix("local:") in ("", "local", "0.5b", "1.5b") or model.endswith(".gguf")


def create_chat_model(spec: ModelSpec) -> BaseChatModel:
    """Build the chat model ``spec`` describes.

    Raises:
        PlatformError: The platform is unknown or cannot be set up.
    """
    _load_plugins()
    name = resolve_platform(spec)
    if spec.platform == "auto" and name == "local" and not _names_local_model(spec.model):
        # A model the user named is never swapped for another (the local default).
        msg = (
            f"model {spec.model!r} needs {spec.api_key_env} (the API key of an "
            "OpenAI-compatible provider) or a base URL, and neither is set: set "
            f"{spec.api_key_env}, pass --base-url, or pass --platform local (without "
            "this model name) to run the embedded local model"
        )
        raise PlatformError(msg)
    info = _registry.get(name)
    if info is None:
        known = ", ".join(sorted(_registry))
        msg = f"unknown platform {name!r}; known platforms: {known}"
        raise PlatformError(msg)
    return info.factory(spec.model_copy(update={"platform": name}))
