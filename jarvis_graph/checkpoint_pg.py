"""LangGraph's PostgreSQL saver, fit for a connection pool and for an API server's event loop.

Imported only when a ``postgresql://`` session store is opened (the ``postgres`` extra).

Two changes to the stock ``PostgresSaver``, nothing else:

- The stock saver holds one lock around every statement, which one shared connection needs.
  On a pool each call borrows a connection of its own, so the lock would only queue the runs
  of different threads behind each other (a server runs many at once).
- Its async methods run the sync ones in worker threads (``checkpoint_async``): the stock
  sync saver has none, and ``AsyncPostgresSaver`` decodes checkpoints on the event loop,
  where the compact serializer's blocking calls (``checkpoint_parts.PostgresParts``) would
  stall a server's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Cursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from jarvis_graph.checkpoint_async import ThreadedAsyncSaver


class PooledPostgresSaver(ThreadedAsyncSaver, PostgresSaver):
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

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune`` in a worker thread."""
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))
