"""Security scanner engine for C/C++ and Rust (pure: no langgraph or langchain imports).

``scan_path`` runs the direct scan; ``render`` writes JSON, Markdown or SARIF; ``score``
evaluates a scan on a Juliet subset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jarvis_graph.security.model import Issue, ScanResult
from jarvis_graph.security.report import FORMATS, render
from jarvis_graph.security.rules import RULES
from jarvis_graph.security.scanner import (
    DEFAULT_MIN_CONFIDENCE,
    LANGUAGES,
    ScanInputError,
    scan_path,
)

if TYPE_CHECKING:
    from jarvis_graph.security.juliet import score


def __getattr__(name: str) -> Any:
    """``score`` is imported on first use: a scan does not need the evaluation code."""
    if name == "score":
        from jarvis_graph.security.juliet import score

        return score
    raise AttributeError(name)


__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "FORMATS",
    "LANGUAGES",
    "RULES",
    "Issue",
    "ScanInputError",
    "ScanResult",
    "render",
    "scan_path",
    "score",
]
