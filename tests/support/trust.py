"""Trusting a test's workspace, as the user does with ``jarvis trust``.

A project's settings that can run code or reach secrets (``SETTING_TRUST`` in
:mod:`jarvis_graph.config`) apply only in a folder the user trusts. A test that writes such
settings as the user's own calls :func:`trust` after writing them (trust covers the
files' contents: rewriting them makes it lapse, so call it again).
"""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.config import trust_project


def trust(workspace: Path) -> Path:
    """Record the user's trust in ``workspace``'s ``.jarvis`` files as they are now."""
    trust_project(workspace)
    return workspace
