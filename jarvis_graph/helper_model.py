"""Failures of the helper (``cheap``) model: one warning line, and the run goes on.

The ``cheap`` model selects methodologies and tools, writes summaries and hand-off notes
and analyzes finished tasks. None of that is the task itself, so when it fails the run
continues without it; the user sees one line saying what was skipped and why (the
traceback is logged at debug level, for ``-v`` and log files).
"""

from __future__ import annotations

import logging

REASON_CHARS = 300


def helper_failure(exc: BaseException) -> str:
    """A one-line reason for ``exc``: its type and message, blanks collapsed, capped."""
    text = " ".join(str(exc).split())
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def warn_helper_failure(logger: logging.Logger, task: str, exc: BaseException) -> None:
    """Log that the helper model failed at ``task`` (a verb phrase), on one line."""
    logger.warning(
        "warning: the helper (cheap) model could not %s, so the run goes on without it: %s",
        task,
        helper_failure(exc),
    )
    logger.debug("helper model failure", exc_info=exc)
