"""Security scanner engine for C/C++ and Rust (pure: no langgraph or langchain imports).

``scan_path`` runs the direct scan; ``render`` writes JSON, Markdown or SARIF; ``score``
evaluates a scan on a Juliet subset.
"""

from __future__ import annotations

from jarvis_graph.security.juliet import score
from jarvis_graph.security.model import Issue, ScanResult
from jarvis_graph.security.report import FORMATS, render
from jarvis_graph.security.rules import RULES
from jarvis_graph.security.scanner import (
    DEFAULT_MIN_CONFIDENCE,
    LANGUAGES,
    ScanInputError,
    scan_path,
)

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
