"""EventBus: Jarvis' lifecycle events, delivered to subscribers and to the graph stream.

A subscriber that raises is logged and skipped; the others still run. When an event is
emitted inside a graph run it is also written to the ``custom`` stream as
``{"event": name, "payload": {...}}``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


class Event(StrEnum):
    """Names of the events nodes emit; the comment says what each payload holds.

    Fields in :data:`SUBSCRIBER_ONLY` reach subscribers but are not written to the stream.
    """

    TASK_STARTED = "task_started"  # task, max_iterations
    # status, final_answer, iterations; thread_id, checkpoint_id, messages
    TASK_COMPLETED = "task_completed"
    BEFORE_MODEL_CALL = "before_model_call"  # iteration, message_count
    AFTER_MODEL_CALL = "after_model_call"  # iteration, tool_calls, text_chars
    BEFORE_TOOL_CALL = "before_tool_call"  # name, args, tool_call_id
    AFTER_TOOL_CALL = "after_tool_call"  # ... status, output, output_path
    BEFORE_SUMMARY = "before_summary"  # message_count, removed
    AFTER_SUMMARY = "after_summary"  # message_count, summary
    # message_count, removed, messages (about to go), first_index; thread_id
    BEFORE_HISTORY_CLEAR = "before_history_clear"
    AFTER_HISTORY_CLEAR = "after_history_clear"  # message_count, removed
    BEFORE_TOOL_FILTER = "before_tool_filter"  # available
    TOOL_FILTERED = "tool_filtered"  # available, selected
    INTERRUPT_TRIGGERED = "interrupt_triggered"  # kind, thread_id
    PLAN_UPDATED = "plan_updated"
    PLAN_STEP_FINISHED = "plan_step_finished"
    HANDOFF = "handoff"
    # chain, step, tool, status, attempts, result (the step's result, shortened)
    CHAIN_STEP_FINISHED = "chain_step_finished"


Subscriber = Callable[[Event, dict[str, Any]], None]

SUBSCRIBER_ONLY = frozenset({"messages", "thread_id", "checkpoint_id"})
"""Payload fields delivered to subscribers but not written to the stream: its reader
already has the conversation (``values``/``messages`` modes) and knows its thread."""


class EventBus:
    """Synchronous publish/subscribe with per-subscriber error isolation.

    Args:
        channel: A bus whose subscribers also get every event emitted here (a run's own
            bus forwards to the named bus its caller listens on); the stream gets it once.
    """

    def __init__(self, channel: EventBus | None = None) -> None:
        self._subs: dict[Event, list[Subscriber]] = {}
        self._lock = threading.Lock()
        self.channel = channel

    def subscribe(self, event: Event | str, callback: Subscriber) -> Callable[[], None]:
        """Register ``callback`` for ``event``; returns a function that unsubscribes it."""
        ev = Event(event)
        with self._lock:
            self._subs.setdefault(ev, []).append(callback)
        return lambda: self.unsubscribe(ev, callback)

    def unsubscribe(self, event: Event | str, callback: Subscriber) -> None:
        """Remove ``callback`` from ``event``; unknown callbacks are ignored."""
        with self._lock:
            subs = self._subs.get(Event(event), [])
            if callback in subs:
                subs.remove(callback)

    def emit(self, event: Event | str, payload: dict[str, Any] | None = None) -> None:
        """Deliver ``event`` to every subscriber, then to the graph's custom stream."""
        ev = Event(event)
        data = dict(payload or {})
        bus: EventBus | None = self
        while bus is not None:
            bus.deliver(ev, data)
            bus = bus.channel
        _write_to_stream(ev, {k: v for k, v in data.items() if k not in SUBSCRIBER_ONLY})

    def deliver(self, event: Event, data: dict[str, Any]) -> None:
        """Call this bus's own subscribers of ``event`` (not its channel, not the stream)."""
        with self._lock:
            subs = list(self._subs.get(event, []))
        for callback in subs:
            try:
                callback(event, data)
            except Exception:
                logger.exception("event subscriber %r failed on %s", callback, event.value)


def _write_to_stream(event: Event, payload: dict[str, Any]) -> None:
    if "langgraph" not in sys.modules:  # not inside a graph run
        return
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a runnable context
        return
    writer({"event": event.value, "payload": payload})


_buses: dict[str, EventBus] = {}
_buses_lock = threading.Lock()


def get_event_bus(name: str = "default", cb_dirs: list[str] | None = None) -> EventBus:
    """The process-wide bus called ``name`` (created on first use).

    Args:
        name: Name of the bus.
        cb_dirs: Folders of after-tool-call callbacks to subscribe when the bus is created
            (``None``: ``JARVIS_AFTER_TOOL_CALL_CB_DIRS``); ignored for an existing bus.
    """
    with _buses_lock:
        bus = _buses.get(name)
        if bus is None:
            bus = _buses[name] = EventBus()
            dirs = _cb_dirs_from_env() if cb_dirs is None else cb_dirs
            for cb in load_after_tool_call_callbacks(dirs):
                bus.subscribe(Event.AFTER_TOOL_CALL, _adapt_tool_callback(cb))
        return bus


def reset_event_buses() -> None:
    """Forget every bus (tests, or after the callback folders change)."""
    with _buses_lock:
        _buses.clear()


def _cb_dirs_from_env() -> list[str]:
    raw = os.environ.get("JARVIS_AFTER_TOOL_CALL_CB_DIRS", "")
    return [d for d in raw.split(os.pathsep) if d]


def _adapt_tool_callback(cb: Callable[..., Any]) -> Subscriber:
    def subscriber(_event: Event, payload: dict[str, Any]) -> None:
        cb(payload)

    return subscriber


def load_after_tool_call_callbacks(dirs: list[str]) -> list[Callable[..., Any]]:
    """Load after-tool-call callbacks from the ``*.py`` files in ``dirs``.

    A module may export ``after_tool_call_cb`` (a callable), ``get_after_tool_call_cb()``
    (returning one) or ``register_after_tool_call_cb()`` (returning one or a list).
    A module that fails to import is logged and skipped.
    """
    callbacks: list[Callable[..., Any]] = []
    for folder in dirs:
        for path in sorted(Path(folder).expanduser().glob("*.py")):
            try:
                callbacks.extend(_callbacks_from(path))
            except Exception:
                logger.exception("could not load after-tool-call callback from %s", path)
    return callbacks


def _callbacks_from(path: Path) -> list[Callable[..., Any]]:
    spec = importlib.util.spec_from_file_location(f"jarvis_cb_{path.stem}", path)
    if spec is None or spec.loader is None:
        return []
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if callable(getattr(module, "after_tool_call_cb", None)):
        return [module.after_tool_call_cb]
    for factory in ("get_after_tool_call_cb", "register_after_tool_call_cb"):
        if callable(getattr(module, factory, None)):
            got = getattr(module, factory)()
            items = got if isinstance(got, list | tuple) else [got]
            return [cb for cb in items if callable(cb)]
    return []
