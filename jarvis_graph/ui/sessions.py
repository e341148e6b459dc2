"""The console's API server keeps its sessions in the project's session store.

``jarvis ui`` starts ``langgraph dev`` with this checkpointer (``checkpointer.path`` in the
``langgraph.json`` it writes), so a session made in the console is one of the project's
sessions: ``jarvis sessions list`` shows it and ``jarvis run --thread ID`` continues it.
The store is the one the CLI uses for the workspace (``.jarvis/sessions.sqlite``, or
``checkpoint_url``). The server's own list of threads stays in a private folder of the
Jarvis home (``launch.state_dir``), where a repository cannot put files.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from jarvis_graph.checkpointing import open_checkpointer
from jarvis_graph.context import JarvisContext, resolve_settings

WORKSPACE_ENV = "JARVIS_UI_WORKSPACE"
"""The workspace whose session store the console's API server opens."""
CHECKPOINTER_PATH = "jarvis_graph.ui.sessions.checkpointer"
"""Import path of :func:`checkpointer` in the form ``langgraph-api`` loads (dots only)."""


@asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    """The session store of the workspace ``JARVIS_UI_WORKSPACE`` names.

    ``langgraph-api`` enters this once per server process; opening and closing run in a
    worker thread, off the server's event loop.

    Raises:
        RuntimeError: ``JARVIS_UI_WORKSPACE`` is not set (the server was not started by
            ``jarvis ui``).
    """
    workspace = os.environ.get(WORKSPACE_ENV, "")
    if not workspace:
        msg = f"the console's session store needs {WORKSPACE_ENV}: start it with jarvis ui"
        raise RuntimeError(msg)
    # deferred: LangGraph's savers load in the server process only
    from jarvis_graph.checkpoint_async import entered_in_thread

    path = Path(workspace)
    url = resolve_settings(JarvisContext(workspace=str(path))).checkpoint_url
    async with entered_in_thread(open_checkpointer(path, url)) as saver:
        yield saver
