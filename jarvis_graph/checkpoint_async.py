"""Session stores an API server's event loop can use: the sync savers' calls in worker threads.

LangGraph's API server (``langgraph dev`` behind ``jarvis ui``, ``jarvis serve``) calls a
saver's async methods. The stock ``SqliteSaver`` has none, and the async savers decode
checkpoints on the event loop, where the compact serializer's blocking reads and writes of
its parts (``checkpoint_parts``) would stall every other request. :class:`ThreadedAsyncSaver`
gives a sync saver async methods that run its sync ones in worker threads.

Imported when a session store is opened (it loads LangGraph's SQLite saver).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.sqlite import SqliteSaver


class ThreadedAsyncSaver(BaseCheckpointSaver[str]):
    """Async methods that run a sync saver's own in worker threads (a mixin: list it first)."""

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> ThreadedAsyncSaver:
        """This saver, unchanged: its serializer's types are the one list.

        The serializer's list (``checkpoint_serde.JARVIS_TYPES``) is not widened with the
        types of each graph's schema. LangGraph calls this when a graph is compiled under
        ``LANGGRAPH_STRICT_MSGPACK``.
        """
        return self

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` in a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002 (the saver API's name)
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list`` in a worker thread (read whole, then yielded)."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put`` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes`` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread`` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """``get_delta_channel_history`` in a worker thread."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


class ThreadedSqliteSaver(ThreadedAsyncSaver, SqliteSaver):
    """The stock ``SqliteSaver`` with async methods in worker threads.

    Its one connection is shared by those threads under the saver's own lock.
    """

    _batch_thread: int | None = None
    """The thread inside :meth:`transaction`, whose writes are not committed one by one."""

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write of the block in one transaction: all of them are kept, or none.

        The saver's lock is held for the whole block, so another thread's write (which the
        stock saver commits at once, on the same connection) waits instead of committing
        half of this block.
        """
        with self.lock:
            self.setup()
            if self.conn.in_transaction:
                self.conn.commit()
            self._batch_thread = threading.get_ident()
            try:
                self.conn.execute("BEGIN IMMEDIATE")  # the write lock now: no busy error later
                yield
            except BaseException:
                self.conn.rollback()
                raise
            else:
                self.conn.commit()
            finally:
                self._batch_thread = None

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """The stock cursor; in :meth:`transaction`'s thread, one that commits nothing."""
        if self._batch_thread != threading.get_ident():
            with super().cursor(transaction) as cur:
                yield cur
            return
        cur = self.conn.cursor()  # the lock is held by transaction()
        try:
            yield cur
        finally:
            cur.close()


_SERVED: list[BaseCheckpointSaver[Any]] = []
"""The session stores this process opened for an API server (:func:`entered_in_thread`)."""


@asynccontextmanager
async def entered_in_thread(
    opened: AbstractContextManager[BaseCheckpointSaver[Any]],
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """A sync context manager of a saver, entered and left in a worker thread.

    Opening and closing block (connections, table set-up): not on the event loop. While
    open, the saver is the one runs nested in the server's runs use (:func:`nested_config`).
    """
    saver = await asyncio.to_thread(opened.__enter__)
    _SERVED.append(saver)
    try:
        yield saver
    finally:
        _SERVED.remove(saver)
        await asyncio.to_thread(opened.__exit__, None, None, None)


def nested_config(config: RunnableConfig | None = None) -> RunnableConfig:
    """``config`` for a sync run nested in the current one, with a saver it can use.

    Nested runs are sub-agents, plan steps and tool chains.

    A nested run checkpoints with its parent's saver. Under an API server that saver is the
    server's wrapper around the session store, which has async methods only: a nested sync
    run would fail at its first checkpoint. It gets the session store itself instead.
    """
    # deferred: langgraph's run context, loaded by any run this is called in
    from langgraph.config import get_config
    from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER

    merged: dict[str, Any] = dict(config or {})
    try:
        lent = get_config().get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER)
    except RuntimeError:  # not inside a run
        return merged  # type: ignore[return-value]
    if lent is None or type(lent).get_tuple is not BaseCheckpointSaver.get_tuple or not _SERVED:
        return merged  # type: ignore[return-value]
    merged[CONF] = {**merged.get(CONF, {}), CONFIG_KEY_CHECKPOINTER: _SERVED[-1]}
    return merged  # type: ignore[return-value]
