"""Compiled graphs by name, for the features that start a run of their own (sub-agents).

``chain`` is the one entry that is not a graph but the function compiling a tool chain's
graph (a chain is data; its graph is built for it).

Features sit below ``graphs/`` and may not import it; each graph module registers its
compiled graph here when it is imported, which every run has done before a tool of it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_GRAPHS: dict[str, Callable[[], Any]] = {}


def register(name: str, graph: Callable[[], Any]) -> None:
    """Make ``graph()`` (a compiled graph) reachable as ``name``."""
    _GRAPHS[name] = graph


def graph_named(name: str) -> Any:
    """The compiled graph registered as ``name``.

    Raises:
        LookupError: No graph module registered that name (it was not imported).
    """
    if name not in _GRAPHS:
        known = ", ".join(sorted(_GRAPHS)) or "none"
        msg = f"no graph named {name!r} is loaded (loaded: {known})"
        raise LookupError(msg)
    return _GRAPHS[name]()
