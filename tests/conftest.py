"""Test isolation: no test sees the real home directory, config or API keys."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HOME and JARVIS_HOME at a fresh folder and drop Jarvis/provider variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JARVIS_HOME", str(home / ".jarvis"))
    import os

    for var in list(os.environ):
        if var.startswith("JARVIS_") and var != "JARVIS_HOME":
            monkeypatch.delenv(var)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    # Local models are assembled under the test's home, never the user's cache.
    monkeypatch.setenv("JARVIS_MODELS_DIR", str(home / "models"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    from jarvis_graph.context import clear_settings_cache

    clear_settings_cache()
    yield home
    clear_settings_cache()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder for a run."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(autouse=True)
def fresh_process_caches() -> Iterator[None]:
    """Event buses, platform plugins, bound models, tool registries and memory stores start
    empty in every test."""
    from jarvis_graph.events import reset_event_buses
    from jarvis_graph.platforms.registry import reset_plugins
    from jarvis_graph.runtime.registry import close_registries
    from jarvis_graph.runtime.services import _bound_model
    from jarvis_graph.tools.tool_repo import sync_central_repo

    def reset() -> None:
        reset_event_buses()
        reset_plugins()
        _bound_model.cache_clear()
        close_registries()  # MCP sessions end: no server outlives its test
        sync_central_repo.cache_clear()
        if "jarvis_graph.memory.tiers" in sys.modules:  # stores of this test's folders
            sys.modules["jarvis_graph.memory.tiers"].close_stores()

    reset()
    yield
    reset()
