"""LangGraph's PostgreSQL saver, fit for a connection pool and for an API server's event loop.

Imported only when a ``postgresql://`` session store is opened (the ``postgres`` extra).

Three changes to the stock ``PostgresSaver``, nothing else:

- The stock saver holds one lock around every statement, which one shared connection needs.
  On a pool each call borrows a connection of its own, so the lock would only queue the runs
  of different threads behind each other (a server runs many at once).
- Its async methods run the sync ones in worker threads (``checkpoint_async``): the stock
  sync saver has none, and ``AsyncPostgresSaver`` decodes checkpoints on the event loop,
  where the compact serializer's blocking calls (``checkpoint_parts.PostgresParts``) would
  stall a server's loop.
- :meth:`PooledPostgresSaver.transaction` makes several writes one (a session imported
  whole or not at all).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Cursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from jarvis_graph.checkpoint_async import ThreadedAsyncSaver


class PooledPostgresSaver(ThreadedAsyncSaver, PostgresSaver):
    """A ``PostgresSaver`` on a ``ConnectionPool``: no process-wide lock, async in threads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._batches: dict[int, Any] = {}
        """Per thread inside :meth:`transaction`: the connection its writes go to."""

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write of the block (in this thread) in one transaction: all kept, or none.

        The block's statements run on one pooled connection, in a transaction the server
        rolls back if this process dies; other threads go on with connections of their own,
        in blocks of their own too.
        """
        if not isinstance(self.conn, ConnectionPool):
            msg = "PooledPostgresSaver.transaction needs a connection pool"
            raise TypeError(msg)
        me = threading.get_ident()
        with self.conn.connection() as conn, conn.transaction():
            self._batches[me] = conn
            try:
                yield
            finally:
                del self._batches[me]

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        batch = self._batches.get(threading.get_ident())
        if batch is not None:
            with batch.cursor(binary=True, row_factory=dict_row) as cur:
                yield cur
            return
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
