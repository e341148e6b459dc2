"""Terminal rendering of a streamed agent run: text as it arrives, tools, events, spinner."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from jarvis_graph.nodes.marker import split_settled, strip_complete_marker

_QUIET_EVENTS = {"before_tool_call", "after_tool_call", "before_model_call", "after_model_call"}


def short(value: Any, limit: int = 160) -> str:
    """One-line, length-capped rendering of a value."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RunRenderer:
    """Consumes ``graph.stream(..., stream_mode=["messages", "updates", "custom"])``."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self._buffer = ""
        self._in_text = False
        self._status: Status | None = None
        self.streamed_text = ""

    def handle(self, mode: str, chunk: Any) -> None:
        """Render one stream item."""
        if mode == "messages":
            message, meta = chunk
            if meta.get("langgraph_node") == "call_model" and isinstance(message.content, str):
                self._text(message.content)
        elif mode == "updates":
            for node, update in chunk.items():
                if isinstance(update, dict):
                    self._update(node, update)
        elif mode == "custom" and isinstance(chunk, dict) and "event" in chunk:
            self._event(chunk["event"], chunk.get("payload", {}))

    def close(self) -> None:
        """Flush pending text and stop the spinner."""
        self._end_text()
        self._spin(False)

    def _text(self, piece: str) -> None:
        if not piece:
            return
        self._spin(False)
        if not self._in_text:
            self._in_text, self.streamed_text = True, ""
        # The marker, and near misses of it, never reach the screen: a tail that may still
        # become one is held until the next piece or the end of the text.
        out, self._buffer = split_settled(self._buffer + piece)
        self._write(out)

    def _write(self, text: str) -> None:
        if text:
            self.streamed_text += text
            self.console.print(text, end="", markup=False, highlight=False, soft_wrap=True)

    def _end_text(self) -> None:
        if self._in_text:
            self._write(strip_complete_marker(self._buffer))
            self._buffer, self._in_text = "", False
            self.console.print()

    def _update(self, node: str, update: dict[str, Any]) -> None:
        messages = update.get("messages") or []
        if node == "call_model":
            self._end_text()
        for message in messages:
            kind = getattr(message, "type", "")
            if kind == "ai" and node == "call_model":
                for call in getattr(message, "tool_calls", []):
                    self.console.print(
                        f"[bold cyan]⚙ {call['name']}[/] [dim]{short(call['args'])}[/]"
                    )
                for bad in getattr(message, "invalid_tool_calls", []):
                    self.console.print(f"[red]⚙ {bad.get('name')} (unparsable arguments)[/]")
            elif kind == "tool":
                colour = "red" if getattr(message, "status", "") == "error" else "green"
                self.console.print(
                    f"  [{colour}]↳ {message.name}[/] [dim]{short(message.content, 200)}[/]"
                )

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        if name == "before_model_call":
            self._spin(True)
        elif name in ("plan_updated", "plan_step_finished", "handoff"):
            self._end_text()
            self.console.print(f"[bold magenta]{escape(_describe(name, payload))}[/]")
        if self.verbose and name not in _QUIET_EVENTS:
            self.console.print(f"[dim]· {name} {short(payload, 120)}[/]")
        elif self.verbose:
            self.console.print(f"[dim]· {name}[/]")

    def _spin(self, on: bool) -> None:
        if on and self._status is None and self.console.is_terminal:
            self._status = self.console.status("thinking…", spinner="dots")
            self._status.start()
        elif not on and self._status is not None:
            self._status.stop()
            self._status = None


def _describe(name: str, payload: dict[str, Any]) -> str:
    """One line for a plan or hand-off event."""
    if name == "handoff":
        return f"⇄ {payload.get('sender')} -> {payload.get('to')} (hand-off {payload.get('count')})"
    if name == "plan_step_finished":
        mark = "✓" if payload.get("status") == "completed" else "✗"
        answer = short(payload.get("answer"), 100)
        return f"  {mark} [{payload.get('id')}] {payload.get('status')}: {answer}"
    steps = payload.get("steps") or []
    listing = "; ".join(
        f"[{s['id']}] {short(s['task'], 60)}"
        + (f" after {','.join(s['depends_on'])}" if s.get("depends_on") else "")
        for s in steps
    )
    return f"▤ plan ({len(steps)} steps): {listing}"
