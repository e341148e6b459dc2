"""Run ``graph.stream`` in a worker thread so Ctrl-C reaches the terminal at once.

LangGraph runs nodes in a thread pool when it streams messages; a Ctrl-C in the main
thread would otherwise wait for the model call or script in flight to finish before the
stream unwinds. Here the main thread only reads a queue: on Ctrl-C it kills running
scripts, asks the run to drain (stop after the current step) and gets control back.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl

from jarvis_graph.tools.builtin import ScriptInterrupted, kill_running_scripts

_DONE = object()


class StreamThread:
    """One ``graph.stream`` call running in the background."""

    def __init__(self, graph: Any, graph_input: Any, config: dict[str, Any], **kwargs: Any) -> None:
        self.control = RunControl()
        self._items: queue.Queue[Any] = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(graph, graph_input, config, kwargs), daemon=True
        )
        self._thread.start()

    def _run(self, graph: Any, graph_input: Any, config: dict[str, Any], kwargs: Any) -> None:
        try:
            for item in graph.stream(graph_input, config, control=self.control, **kwargs):
                self._items.put(item)
        except (GraphDrained, ScriptInterrupted):
            pass  # stopped on request; the unfinished step is not recorded
        except BaseException as exc:
            self._error = exc
        finally:
            self._items.put(_DONE)

    def __iter__(self) -> Iterator[Any]:
        """Yield stream items; re-raise the stream's error in the caller's thread."""
        while True:
            try:
                item = self._items.get(timeout=0.2)  # short waits keep Ctrl-C responsive
            except queue.Empty:
                continue
            if item is _DONE:
                break
            yield item
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Kill running scripts and let the run end after the current step."""
        kill_running_scripts()
        self.control.request_drain("interrupted by the user")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the run to end; ``True`` when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
