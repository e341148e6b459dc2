"""Memory subscribers on the event bus: ``force_save_memory`` and the episodic archive.

The memory feature (:mod:`jarvis_graph.features.memory`) subscribes them to each run's own
bus. Each reads the run's context when an event arrives, or the context it was built with
when the event is emitted outside a graph run.

``force_save_memory`` follows Jarvis: before the history is cleared, or when the task
completes, the model is asked once per task — in a separate call bound to
``save_memory`` only, over the conversation of the event — to save what is worth
remembering, and the saves it asks for are carried out. The "asked" marker of a thread
is kept in the project's memory store, so a task resumed in another process is not
asked twice; TASK_STARTED clears it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from pydantic import ValidationError

from jarvis_graph.checkpointing import run_position
from jarvis_graph.config import Settings
from jarvis_graph.context import JarvisContext, running_context
from jarvis_graph.events import Event, EventBus, Subscriber
from jarvis_graph.memory.background import after_run, submit
from jarvis_graph.memory.records import now_iso
from jarvis_graph.memory.tools import SaveMemoryArgs, current_thread, save_memory, save_memory_impl
from jarvis_graph.prompts import load_prompt
from jarvis_graph.tools.base import ToolEnv, ToolFailure
from jarvis_graph.tools.registry import is_risky

logger = logging.getLogger(__name__)

ModelFactory = Callable[[JarvisContext], BaseChatModel]
MARKERS = ("force_save_memory",)
"""Namespace of the per-thread "asked this task" markers in the project store."""


def run_context(default: JarvisContext | None = None) -> JarvisContext:
    """The context of the graph run this call belongs to, else ``default``."""
    return running_context() or default or JarvisContext()


def _thread_of(payload: dict[str, Any]) -> str:
    return str(payload.get("thread_id") or current_thread())


def _messages_of(payload: dict[str, Any]) -> list[AnyMessage]:
    raw = payload.get("messages") or []
    if not isinstance(raw, list | tuple):
        msg = f"the event's 'messages' must be a list of messages, got {type(raw).__name__}"
        raise TypeError(msg)
    return cast(list[AnyMessage], convert_to_messages(raw))


@dataclass
class ForceSaveResult:
    """What one forced save did (for logs and tests)."""

    thread_id: str
    reply: str = ""
    saved: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class ForceSaveMemory:
    """Subscriber of TASK_STARTED, BEFORE_HISTORY_CLEAR and TASK_COMPLETED.

    Args:
        model_factory: Builds the chat model of a run (its ``normal`` model).
        context: Context for events emitted outside a graph run.
    """

    def __init__(self, model_factory: ModelFactory, context: JarvisContext | None = None) -> None:
        self.model_factory = model_factory
        self.context = context

    def subscriptions(self) -> list[tuple[Event, Subscriber]]:
        """The three events and what handles each."""
        return [
            (Event.TASK_STARTED, self.on_task_started),
            (Event.BEFORE_HISTORY_CLEAR, self),
            (Event.TASK_COMPLETED, self),
        ]

    def subscribe(self, bus: EventBus) -> None:
        """Subscribe to the three events on ``bus``."""
        for event, callback in self.subscriptions():
            bus.subscribe(event, callback)

    def on_task_started(self, _event: Event, payload: dict[str, Any]) -> None:
        """A new task in the thread: it may be asked again."""
        ctx = run_context(self.context)
        if _settings(ctx).force_save_memory:
            self._mark(ctx, _thread_of(payload), asked=False)

    def __call__(self, event: Event, payload: dict[str, Any]) -> None:
        """Subscriber form of :meth:`handle`."""
        self.handle(event, payload)

    def handle(self, event: Event, payload: dict[str, Any]) -> ForceSaveResult | None:
        """Ask the model to save memories, unless it was asked already in this task."""
        ctx = run_context(self.context)
        if not _settings(ctx).force_save_memory:
            return None
        thread = _thread_of(payload)
        if self._asked(ctx, thread):
            return None
        self._mark(ctx, thread, asked=True)  # before the call: a failing model is not retried
        result = self.prompt(ctx, thread, _messages_of(payload))
        logger.info(
            "force_save_memory on %s in thread %s: %d saves, %d problems",
            event.value,
            thread,
            len(result.saved),
            len(result.errors),
        )
        return result

    def prompt(
        self, ctx: JarvisContext, thread: str, messages: list[AnyMessage]
    ) -> ForceSaveResult:
        """One model call over ``messages`` bound to ``save_memory``; run the saves asked for."""
        from langgraph.constants import TAG_NOSTREAM

        from jarvis_graph.memory.tiers import memory_prompt

        result = ForceSaveResult(thread)
        workspace = ctx.workspace_path()
        system = load_prompt("force_save_memory").format(
            workspace=workspace, memory=memory_prompt(workspace)
        )
        request = [
            SystemMessage(system),
            *paired(messages),
            HumanMessage(load_prompt("force_save_memory_ask")),
        ]
        try:
            model = self.model_factory(ctx).bind_tools([save_memory])
            # nostream: the reply is not part of the answer the user watches
            reply = model.invoke(request, config={"tags": [TAG_NOSTREAM]})
        except Exception as exc:  # the run goes on without the save
            result.errors.append(f"the model call failed: {type(exc).__name__}: {exc}")
            logger.warning("force_save_memory: %s", result.errors[-1])
            return result
        result.reply = str(getattr(reply, "text", "") or "")
        unasked = _settings(ctx).confirm == "never"
        for call in getattr(reply, "tool_calls", []) or []:
            self._run_save(workspace, thread, call, result, unasked)
        return result

    def _run_save(
        self,
        workspace: Any,
        thread: str,
        call: dict[str, Any],
        result: ForceSaveResult,
        unasked: bool,
    ) -> None:
        from jarvis_graph.memory.tiers import MemoryTiers

        if call.get("name") != "save_memory":
            result.errors.append(f"ignored a call to {call.get('name')!r}: only save_memory runs")
            return
        try:
            args = SaveMemoryArgs.model_validate(call.get("args") or {})
            items = [m.model_dump() for m in args.memories]
            if not unasked:  # nobody can be asked here: a memory that needs a yes is not saved
                items = self._confirmable(items, result)
            if items:
                result.saved.append(save_memory_impl(MemoryTiers(workspace, thread), items))
        except (ValidationError, ToolFailure) as exc:
            result.errors.append(f"save_memory was not run: {exc}")

    @staticmethod
    def _confirmable(items: list[dict[str, Any]], result: ForceSaveResult) -> list[dict[str, Any]]:
        """The memories that need no confirmation; the others are reported, not saved.

        The forced save is a call outside the graph that cannot ask the user, so a memory
        the model's own ``save_memory`` call would be asked about (a global one) is left to
        the task itself, unless the run confirms nothing (``confirm: never``, ``--yes``).
        """
        kept = [m for m in items if not is_risky(save_memory, {"memories": [m]})]
        for _ in range(len(items) - len(kept)):
            result.errors.append(
                "a global memory was not saved: it reaches every later prompt and needs the "
                "user's confirmation, which a forced save cannot ask (confirm is not never)"
            )
        return kept

    def _asked(self, ctx: JarvisContext, thread: str) -> bool:
        item = _marker_store(ctx).get(MARKERS, thread)
        return bool(item and item.value.get("asked"))

    def _mark(self, ctx: JarvisContext, thread: str, *, asked: bool) -> None:
        value = {"asked": asked, "updated_at": now_iso()}
        _marker_store(ctx).put(MARKERS, thread, value, index=False)


def _marker_store(ctx: JarvisContext) -> Any:
    from jarvis_graph.memory.router import project_store

    # the run's store (the memory store outside a run), below the project's namespace
    return project_store(ctx.workspace_path())


def _settings(ctx: JarvisContext) -> Settings:
    """The run's settings, as its services read them (a subscriber runs at every task)."""
    return ToolEnv.from_context(ctx).settings


def paired(messages: list[AnyMessage]) -> list[AnyMessage]:
    """The conversation without system prompts and unpaired tool calls or results.

    Providers reject a tool call without its result, or a result without its call.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    called: set[str] = set()
    out: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            calls = [c for c in message.tool_calls if c.get("id") in answered]
            called |= {str(c["id"]) for c in calls}
            if len(calls) != len(message.tool_calls) or message.invalid_tool_calls:
                message = message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})
        elif isinstance(message, ToolMessage) and message.tool_call_id not in called:
            continue
        out.append(message)
    return out


class EpisodeIndexer:
    """Subscriber of TASK_COMPLETED and BEFORE_HISTORY_CLEAR: index in the episodic archive.

    Messages about to be cleared are indexed then, or they never would be. The anchor's
    checkpoint is the payload's ``checkpoint_id``, else the one the running step started
    from; a cleared block's indices start at its ``first_index`` (default: right after the
    system prompt).

    Args:
        context: Context for events emitted outside a graph run.
    """

    def __init__(self, context: JarvisContext | None = None) -> None:
        self.context = context

    def __call__(self, _event: Event, payload: dict[str, Any]) -> None:
        """Subscriber form: the archive is written in the background, off the answer's path."""
        job = self.prepare(payload)
        if job is not None:
            submit(after_run(job))

    def index(self, payload: dict[str, Any]) -> int | None:
        """Index the payload's messages now; returns the segments written (``None``: off)."""
        job = self.prepare(payload)
        return None if job is None else job()

    def prepare(self, payload: dict[str, Any]) -> Callable[[], int | None] | None:
        """The indexing of ``payload`` as a job (``None``: the archive is off).

        What depends on the running step (its context, thread, checkpoint and store) is
        read here; the job itself may run on another thread.
        """
        # deferred: the archive loads the embedder and the vector store only when it is used
        from jarvis_graph.memory.episodic import open_archive
        from jarvis_graph.memory.router import run_store

        ctx = run_context(self.context)
        if not _settings(ctx).episodic_archive:
            return None
        thread = _thread_of(payload)
        checkpoint = payload.get("checkpoint_id") or run_position()["checkpoint_id"]
        workspace, store = ctx.workspace_path(), run_store()
        secrets = ToolEnv.from_context(ctx).secret_values  # masked, however short

        def job() -> int | None:
            try:
                messages = _messages_of(payload)
                first = payload.get("first_index")
                if first is None and messages and not isinstance(messages[0], SystemMessage):
                    first = 1  # what is cleared starts after the system prompt
                archive = open_archive(workspace, store)
                return archive.index_task(thread, checkpoint, messages, first or 0, secrets)
            except Exception as exc:  # archiving never stops a run from completing
                logger.warning("episodic archive: thread %s not indexed: %s", thread, exc)
                return None

        return job
