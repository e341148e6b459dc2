"""``jarvis chat`` with several open sessions: each new message goes to the one it belongs to.

On with ``thread_routing: true``. Before a message is sent, the open sessions (a
checkpoint in the last ``thread_routing_hours``) are scored against it
(:mod:`jarvis_graph.runtime.thread_router`; the ``cheap`` model breaks ties). When the
closest is another session, or none is close enough and the current one already has a
conversation, the choice is shown with one key to answer: Enter goes there, ``k`` keeps
the current session, ``n`` starts a new one.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.markup import escape

from jarvis_graph.cli.driver import console, new_thread_id
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.runtime.thread_router import (
    ThreadProfile,
    ThreadRouter,
    model_tie_break,
    open_threads,
)


class ChatRouter:
    """Chooses the session of each message of one chat."""

    def __init__(self, graph: Any, ctx: dict[str, Any]) -> None:
        self.graph = graph
        self.ctx = ctx
        self.settings = resolve_settings(JarvisContext(**ctx))
        self._router: ThreadRouter | None = None

    @property
    def enabled(self) -> bool:
        """Whether ``thread_routing`` is on."""
        return self.settings.thread_routing

    def _make_router(self) -> ThreadRouter:
        if self._router is None:
            # deferred: the embedder (onnxruntime) and the run's services load on first use
            from jarvis_graph.memory.embedder import default_embedder
            from jarvis_graph.runtime.services import RunServices

            services = RunServices(JarvisContext(**self.ctx))
            self._router = ThreadRouter(
                default_embedder(),
                threshold=self.settings.thread_routing_threshold,
                tie_break=model_tie_break(services.chat_model("cheap")),
            )
        return self._router

    def threads(self) -> list[ThreadProfile]:
        """The open sessions, newest first."""
        return open_threads(self.graph.checkpointer, self.settings.thread_routing_hours)

    def choose(self, message: str, current: str) -> str:
        """The session ``message`` goes to (``current``, another, or a new id)."""
        threads = self.threads()
        has_history = any(t.thread_id == current for t in threads)
        if not threads or (len(threads) == 1 and has_history):
            return current
        route = self._make_router().route(message, threads)
        if route.thread_id == current or (route.thread_id is None and not has_history):
            return current
        if route.thread_id is None:
            shown = f"→ a new session (no open session is close: best {route.score:.2f})"
            options = {"enter": new_thread_id(), "k": current}
            hint = "Enter: new session · k: keep this one"
        else:
            task = next(t.task for t in threads if t.thread_id == route.thread_id)
            shown = f"→ session {route.thread_id} · {task[:70]} ({route.score:.2f}, {route.how})"
            options = {"enter": route.thread_id, "k": current, "n": new_thread_id()}
            hint = "Enter: send there · k: keep this session · n: new session"
        console.print(f"[cyan]{escape(shown)}[/]")
        chosen = options.get(_one_key(f"{hint} "), options["enter"])
        if chosen != current:
            console.print(f"[dim]{escape(f'session {chosen}')}[/]")
        return chosen


def _one_key(prompt: str) -> str:
    """One key pressed (a terminal), or the first letter of a typed line; ``enter`` for Enter."""
    console.print(prompt, end="", markup=False)
    if sys.stdin.isatty():
        key = click.getchar()
        console.print()
    else:
        key = sys.stdin.readline().strip()[:1]
    return "enter" if key in ("", "\r", "\n") else key.lower()


def print_open_threads(graph: Any, ctx: dict[str, Any]) -> int:
    """``jarvis chat --threads``: the open sessions, newest first; the exit code."""
    router = ChatRouter(graph, ctx)
    threads = router.threads()
    if not threads:
        hours = router.settings.thread_routing_hours
        console.print(f"no open sessions (none used in the last {hours:g} h)", markup=False)
        return 0
    for t in threads:
        when = t.updated[:19].replace("T", " ")
        click.echo(f"{t.thread_id}\t{when}\t{t.task[:80]}")
    return 0
