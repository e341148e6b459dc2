"""Memory work that is not on the answer's path: one background worker per process.

Indexing a finished task in the episodic archive embeds every message; it runs here, after
the run has returned its answer. Readers of the archive in the same process call
:func:`wait_for_background` first, and the process waits for the worker before it exits
(before the memory stores close), so nothing is lost.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

logger = logging.getLogger(__name__)

_worker: ThreadPoolExecutor | None = None
_pending: set[Future[Any]] = set()
_lock = threading.Lock()


def submit(job: Callable[[], Any]) -> Future[Any]:
    """Run ``job`` on the background worker (jobs run one at a time, in order)."""
    global _worker
    with _lock:
        if _worker is None:
            # deferred: the stores' exit handler must be registered before ours, so that
            # ours (run first: exit handlers run last-in first-out) finishes the writes
            import jarvis_graph.memory.backends  # noqa: F401

            _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jarvis-memory")
            atexit.register(wait_for_background)
        future = _worker.submit(job)
        _pending.add(future)
    future.add_done_callback(_done)
    return future


def _done(future: Future[Any]) -> None:
    with _lock:
        _pending.discard(future)
    if not future.cancelled() and future.exception() is not None:
        logger.warning("background memory work failed: %s", future.exception())


def wait_for_background(timeout: float | None = None) -> bool:
    """Wait until every job submitted so far has run; ``False`` if ``timeout`` ran out."""
    with _lock:
        pending = list(_pending)
    for future in pending:
        try:
            future.result(timeout=timeout)
        except TimeoutError:
            return False
        except Exception:  # reported by _done
            continue
    return True
