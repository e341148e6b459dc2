"""Held-out tasks of the local-agent bench (part zh): written before any change they measure.

Never used to decide a rule of the answer check; see ``bench/local_agent.py`` (``--split``).
"""

from __future__ import annotations

from bench.task_kit import Task


def tasks() -> list[Task]:
    """This part's held-out tasks (their ``split`` is set by the runner)."""
    return []
