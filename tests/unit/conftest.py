"""Reset the per-process caches of the package between unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def fresh_process_caches() -> Iterator[None]:
    """Event buses, platform plugins and bound models start empty in every test."""
    from jarvis_graph.events import reset_event_buses
    from jarvis_graph.nodes.services import _bound_model
    from jarvis_graph.platforms.registry import reset_plugins

    reset_event_buses()
    reset_plugins()
    _bound_model.cache_clear()
    yield
    reset_event_buses()
    reset_plugins()
    _bound_model.cache_clear()
