"""LangGraph's PostgreSQL saver, fit for a connection pool and for an API server's event loop.

Imported only when a ``postgresql://`` session store is opened (the ``postgres`` extra).

Two changes to the stock ``PostgresSaver``, nothing else:

- The stock saver holds one lock around every statement, which one shared connection needs.
  On a pool each call borrows a connection of its own, so the lock would only queue the runs
  of different threads behind each other (a server runs many at once).
- Its async methods run the sync ones in worker threads. The stock sync saver has none, and
  ``AsyncPostgresSaver`` decodes checkpoints on the event loop: the compact serializer reads
  and writes its parts (``checkpoint_parts.PostgresParts``) with blocking calls, which must
  not stall a server's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Cursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool


class PooledPostgresSaver(PostgresSaver):
    """A ``PostgresSaver`` on a ``ConnectionPool``: no process-wide lock, async in threads."""

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        if self.pipe is not None or not isinstance(self.conn, ConnectionPool):
            with super()._cursor(pipeline=pipeline) as cur:
                yield cur
            return
        with self.conn.connection() as conn:
            if pipeline:  # several statements that belong together: one transaction
                with conn.transaction(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            else:
                with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur

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

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune`` in a worker thread."""
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))
