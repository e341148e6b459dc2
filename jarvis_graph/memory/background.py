"""Memory work that is not on the answer's path: one background worker per process.

Archiving a finished task in the episodic archive (segmenting and storing its messages; the
vectors wait for the archive's first search) runs here, after the run has returned its
answer. A job submitted from inside a graph run waits until that run has returned (its last
checkpoints written), so it never competes with the run for the cores. Readers of the
archive in the same process call :func:`wait_for_background` first (which lets waiting jobs
start at once), and the process waits for the worker before it exits (before the memory
stores close), so nothing is lost.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

logger = logging.getLogger(__name__)

_worker: ThreadPoolExecutor | None = None
_pending: set[Future[Any]] = set()
_lock = threading.Lock()
_WORKER_NAME = "jarvis-memory"
_waiters = 0
_urgent = threading.Event()
"""Set while somebody waits for the worker: jobs stop waiting for their run to end."""

RUN_WAIT_S = 120.0
"""A job waits at most this long for the run it was submitted from to return."""
_RUN_METHODS = frozenset({"invoke", "stream"})


def _graph_run_frame(thread_id: int) -> bool:
    """Whether the thread is inside a graph's ``invoke``/``stream`` (a run in progress)."""
    pregel = sys.modules.get("langgraph.pregel.main")
    frame = sys._current_frames().get(thread_id)  # noqa: SLF001
    if pregel is None or frame is None:
        return False
    filename = pregel.__file__
    while frame is not None:
        code = frame.f_code
        if code.co_name in _RUN_METHODS and code.co_filename == filename:
            return True
        frame = frame.f_back
    return False


def after_run(job: Callable[[], Any]) -> Callable[[], Any]:
    """``job``, made to wait until the graph run of the calling thread has returned.

    Nodes of a synchronous run execute on the thread that called ``invoke``; a job queued
    there starts once that thread has left the run (or after :data:`RUN_WAIT_S`, or at once
    when somebody waits for the worker).
    """
    thread_id = threading.get_ident()
    if not _graph_run_frame(thread_id):
        return job

    def gated() -> Any:
        deadline = time.monotonic() + RUN_WAIT_S
        while not _urgent.is_set() and time.monotonic() < deadline and _graph_run_frame(thread_id):
            _urgent.wait(0.02)
        return job()

    return gated


def submit(job: Callable[[], Any]) -> Future[Any]:
    """Run ``job`` on the background worker (jobs run one at a time, in order)."""
    global _worker
    with _lock:
        if _worker is None:
            # deferred: the stores' exit handler must be registered before ours, so that
            # ours (run first: exit handlers run last-in first-out) finishes the writes
            import jarvis_graph.memory.backends  # noqa: F401

            _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_WORKER_NAME)
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
    if not pending or threading.current_thread().name.startswith(_WORKER_NAME):
        return True  # nothing queued, or a job reading memory: the jobs before it are done
    global _waiters
    with _lock:
        _waiters += 1
        _urgent.set()
    try:
        for future in pending:
            try:
                future.result(timeout=timeout)
            except TimeoutError:
                return False
            except Exception:  # reported by _done
                continue
    finally:
        with _lock:
            _waiters -= 1
            if not _waiters:
                _urgent.clear()
    return True
