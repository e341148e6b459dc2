"""Terminal rendering of a streamed agent run: tools as they run, one checked answer, events."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.status import Status
from rich.text import Text

from jarvis_graph.citations import CITES_KEY
from jarvis_graph.cli.visible import visible
from jarvis_graph.marker import strip_complete_marker
from jarvis_graph.state import CHECK_NAME

_QUIET_EVENTS = {"before_tool_call", "after_tool_call", "before_model_call", "after_model_call"}
ANSWER_NODES = frozenset({"call_model", "focus_answer"})
"""Nodes whose AI messages are the model's replies (a focused answer replaces one); a
check node may put back the model's own answer."""
CHECK_NODES = frozenset({"review_answer", "check_answer"})
"""Nodes that pass or send back an answer."""


class TerminalConsole(Console):
    """A rich console that shows control characters in printed text instead of sending them.

    Every string printed (answers, tool output, ids, titles, table cells) goes through
    :func:`~jarvis_graph.cli.visible.visible` before rich makes a ``Text`` of it, which
    would drop BEL, BS, VT, FF and CR unseen; the text of ``Text`` objects built elsewhere
    is escaped on the rendered segments, just before styles become escape codes. The
    console's own colours and cursor controls (the live status line) are added after and
    reach the terminal as they are.
    """

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """``Console.render_str`` of ``text`` escaped (markup stays markup: no ``[`` added)."""
        return super().render_str(visible(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # a control segment is rich's own (cursor moves, line clears): never text of ours
        safe = (seg if seg.control else Segment(visible(seg.text), seg.style) for seg in buffer)
        return super()._render_buffer(safe)


def short(value: Any, limit: int = 160) -> str:
    """One-line, length-capped rendering of a value."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters (``…``)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:  # else one long word (a path, a URL) fills the room: cut inside it
        cut = cut[:space].rstrip(" ,;:")
    return cut + "…"


class RunRenderer:
    """Consumes ``graph.stream(..., stream_mode=["messages", "updates", "custom"])``."""

    def __init__(self, console: TerminalConsole, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self._held = ""  # the model's text of the current reply, not shown yet
        self._candidate: tuple[str, list[Any]] | None = None  # an answer not yet checked
        self._tool_names: dict[str, str] = {}  # call id -> tool, for an answer's sources
        self._running: dict[str, str] = {}  # call id -> tool, of the calls running now
        self._live = LiveLine(console)
        self.streamed_text = ""
        """The answer shown so far (``_finish`` prints the final answer when it differs)."""
        self.progress = Progress()

    def handle(self, mode: str, chunk: Any) -> None:
        """Render one stream item."""
        if mode == "messages":
            message, meta = chunk
            if meta.get("langgraph_node") == "call_model":
                self.progress.chunk(message)
                if isinstance(message.content, str):
                    self._text(message.content)
        elif mode == "updates":
            for node, update in chunk.items():
                if isinstance(update, dict):
                    self._update(node, update)
                elif node == "__interrupt__":
                    self._show_candidate()  # the run waits for the user: it answered
        elif mode == "custom" and isinstance(chunk, dict) and "event" in chunk:
            self._event(chunk["event"], chunk.get("payload", {}))

    def close(self) -> None:
        """Show an answer still waiting (the run paused for the user after it), stop the spinner."""
        self._show_candidate()
        self._spin(False)

    def _text(self, piece: str) -> None:
        # Held, not shown: a reply is an answer only once its check passed, and the user
        # sees one answer, not every draft (a tool call's preface is shown with the call).
        self._held += piece

    def _show(self, text: str, dim: bool = False) -> None:
        text = strip_complete_marker(text).strip()
        if text:
            self._spin(False)
            style = "[dim]" if dim else ""
            self.console.print(f"{style}{escape(text)}{'[/]' if dim else ''}", soft_wrap=True)

    def _show_candidate(self) -> None:
        """The answer passed (or nothing checks answers): shown, with its sources below."""
        if self._candidate is None:
            return
        text, cites = self._candidate
        self._candidate = None
        self._show(text)
        self.streamed_text = strip_complete_marker(text).strip()
        for cite in cites:
            if isinstance(cite, dict):
                tool = self._tool_names.get(str(cite.get("source")), str(cite.get("source")))
                quote = short(str(cite.get("quote", "")), 120)
                self.console.print(f"[dim]  ↳ from {escape(tool)}: {escape(repr(quote))}[/]")

    def _update(self, node: str, update: dict[str, Any]) -> None:
        messages = update.get("messages") or []
        if node == "call_model":
            self._spin(False)
            self.progress.end_call(messages)
        if self._candidate is not None and node not in ANSWER_NODES | CHECK_NODES:
            self._show_candidate()  # a node after the answer that checks nothing
        for message in messages:  # names, arguments and output are text, never markup
            kind = getattr(message, "type", "")
            if kind == "ai" and node in ANSWER_NODES | CHECK_NODES:
                self._on_reply(message)  # a reply, a focused one, or one a check restored
            elif kind == "tool":
                self._tool_names[str(message.tool_call_id)] = str(message.name)
                colour = "red" if getattr(message, "status", "") == "error" else "green"
                self.console.print(
                    f"  [{colour}]↳ {escape(str(message.name))}[/] "
                    f"[dim]{escape(short(message.content, 200))}[/]"
                )
        if node not in CHECK_NODES:
            return
        rejected = [m for m in messages if getattr(m, "name", None) == CHECK_NAME]
        if rejected and self._candidate is not None:
            found = update.get("answer_problems") or [str(rejected[0].content).strip()]
            reason = str(found[0]).splitlines()[0]  # the first problem, not a notice's header
            self.console.print(f"[dim]draft rejected: {escape(short(reason, 160))}[/]")
            self._candidate = None
        self._show_candidate()

    def _on_reply(self, message: Any) -> None:
        """A model reply: its calls are shown now, an answer when its check passed."""
        held, self._held = self._held, ""
        calls = getattr(message, "tool_calls", []) or []
        bad = getattr(message, "invalid_tool_calls", []) or []
        if calls or bad:
            self._show(held)  # a preface to the calls, not an answer
            for call in calls:
                self.console.print(
                    f"[bold cyan]⚙ {escape(str(call['name']))}[/] "
                    f"[dim]{escape(short(call['args']))}[/]"
                )
            for call in bad:
                name = escape(str(call.get("name")))
                self.console.print(f"[red]⚙ {name} (unparsable arguments)[/]")
            return
        text = message.content if isinstance(message.content, str) else held
        cites = (getattr(message, "additional_kwargs", None) or {}).get(CITES_KEY) or []
        self._candidate = (text or held, list(cites))

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        if name == "before_model_call":
            self.progress.start_call(payload.get("iteration"))
            self._spin(True)
        elif name in ("before_tool_call", "after_tool_call"):
            self._tools_running(name == "before_tool_call", payload)
        elif name in ("plan_updated", "plan_step_finished", "handoff", "chain_step_finished"):
            self.console.print(f"[bold magenta]{escape(_describe(name, payload))}[/]")
        if self.verbose and name not in _QUIET_EVENTS:
            self.console.print(f"[dim]· {escape(name)} {escape(short(payload, 120))}[/]")
        elif self.verbose:
            self.console.print(f"[dim]· {escape(name)}[/]")

    def _tools_running(self, started: bool, payload: dict[str, Any]) -> None:
        """While tools run (a sub-agent, a chain, a long script), the live line names them."""
        call_id = str(payload.get("tool_call_id"))
        if started:
            self._running[call_id] = str(payload.get("name"))
        else:
            self._running.pop(call_id, None)
        self.progress.tools_running(bool(self._running))
        if not self._running:
            self._spin(False)
        elif isinstance(self._live.shown, Working):
            self._live.shown.label = _running_label(self._running)
        else:
            self._spin(True, Working(_running_label(self._running)))

    def _spin(self, on: bool, what: Any = None) -> None:
        if on:
            self._live.show(what or self.progress)
        else:
            self._live.stop()

    def usage(self) -> str:
        """Tokens the model generated and the time the run took, for the closing line."""
        return self.progress.usage()


class LiveLine:
    """The console's live status line (on a terminal only): what runs now, with a spinner."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown: Any = None
        self._status: Status | None = None

    def show(self, what: Any) -> None:
        """Show ``what`` (a rich renderable, re-rendered as it refreshes) until replaced."""
        if not self.console.is_terminal:
            return  # piped: no line rewritten in place
        self.shown = what
        if self._status is None:
            self._status = self.console.status(what, spinner="dots")
            self._status.start()
        else:
            self._status.update(what)

    def stop(self) -> None:
        """Take the line away."""
        if self._status is not None:
            self._status.stop()
            self._status = None
        self.shown = None


class Working:
    """Work that streams nothing while it runs: what it is and the time it has taken."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()

    def __rich__(self) -> Text:
        """``LABEL · 12.3s`` (re-rendered at every refresh, so the time keeps moving)."""
        return Text(f"{self.label} · {_duration(time.monotonic() - self.started)}")


def _running_label(running: dict[str, str]) -> str:
    names = list(dict.fromkeys(running.values()))
    return f"running {', '.join(names)}"


SPENT = (
    "model_seconds",
    "load_seconds",
    "prompt_seconds",
    "prompt_tokens_evaluated",
    "decode_seconds",
    "tools_seconds",
)
"""What :class:`Progress` adds up: the model's figures of each reply and the tools' time."""


class Progress:
    """What the model is doing: step, time on it, tokens so far (rendered live by rich)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.step: int | None = None
        self.tokens = 0  # finished calls
        self._call_started = self.started
        self._call_tokens = 0
        self.spent: dict[str, float] = dict.fromkeys(SPENT, 0.0)  # see :meth:`breakdown`
        self._tools_since: float | None = None

    def start_call(self, step: Any) -> None:
        """A model call begins (``before_model_call``)."""
        self.step = step if isinstance(step, int) else None
        self._call_started, self._call_tokens = time.monotonic(), 0

    def chunk(self, message: Any) -> None:
        """One streamed chunk of the reply: about one token for llama.cpp and most APIs."""
        if type(message).__name__ == "AIMessageChunk" and (
            message.content or getattr(message, "tool_call_chunks", None)
        ):
            self._call_tokens += 1

    def end_call(self, messages: list[Any]) -> None:
        """The call's reply arrived; the provider's count wins over counted chunks."""
        reported = sum(
            int((getattr(m, "usage_metadata", None) or {}).get("output_tokens") or 0)
            for m in messages
        )
        self.tokens += reported or self._call_tokens
        self._call_tokens = 0
        self.spent["model_seconds"] += time.monotonic() - self._call_started
        for message in messages:
            meta = getattr(message, "response_metadata", None) or {}
            for key in SPENT:
                value = meta.get(key)
                if isinstance(value, int | float):
                    self.spent[key] += value

    def tools_running(self, running: bool) -> None:
        """Tools began (``running``) or all of them ended: their wall time adds up."""
        now = time.monotonic()
        if running and self._tools_since is None:
            self._tools_since = now
        elif not running and self._tools_since is not None:
            self.spent["tools_seconds"] += now - self._tools_since
            self._tools_since = None

    def breakdown(self) -> str:
        """Where the run's time went, for ``-v``'s closing line.

        The model's load, its prompt (the tokens llama.cpp evaluated: the rest came from a
        saved state), its generation, the tools, and the rest (Jarvis' own work, helper
        models). A provider reports no load or prompt time: its part is the wait for its
        replies, from each call's start to its reply.
        """
        spent, total = self.spent, time.monotonic() - self.started
        parts = []
        if spent["load_seconds"]:
            parts.append(f"model load {_duration(spent['load_seconds'])}")
        model = spent["load_seconds"] + spent["prompt_seconds"] + spent["decode_seconds"]
        if model:  # the embedded model: its own figures
            evaluated = int(spent["prompt_tokens_evaluated"])
            prompt = _duration(spent["prompt_seconds"])
            parts.append(f"prompt {evaluated} tokens evaluated in {prompt}")
            parts.append(f"{self.tokens} tokens generated in {_duration(spent['decode_seconds'])}")
        else:  # a provider: the wait for its replies
            model = spent["model_seconds"]
            parts.append(f"model {_duration(model)} for {self.tokens} tokens")
        parts.append(f"tools {_duration(spent['tools_seconds'])}")
        rest = max(total - model - spent["tools_seconds"], 0.0)
        parts.append(f"other {_duration(rest)}")
        return "time: " + " · ".join(parts)

    def usage(self) -> str:
        """``N tokens · T`` for the whole run."""
        return f"{self.tokens} tokens · {_duration(time.monotonic() - self.started)}"

    def __rich__(self) -> Text:
        """The live line (re-rendered at every refresh, so the time keeps moving)."""
        spent = max(time.monotonic() - self._call_started, 1e-6)
        step = f"step {self.step} · " if self.step is not None else ""
        speed = self._call_tokens / spent
        return Text(
            f"thinking… {step}{_duration(spent)} · {self._call_tokens} tokens · {speed:.1f} tok/s"
        )


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


CHAIN_MARKS = {"succeeded": "✓", "failed": "✗", "skipped": "-", "declined": "✗"}


def chain_step_line(label: str, tool: Any, status: str, attempts: int) -> str:
    """``✓ LABEL (TOOL) STATUS[, N attempts]``: a finished chain step, in every front end."""
    tries = f", {attempts} attempts" if attempts > 1 else ""
    return f"{CHAIN_MARKS.get(status, '?')} {label} ({tool}) {status}{tries}"


def _describe(name: str, payload: dict[str, Any]) -> str:
    """One line for a plan, hand-off or chain step event."""
    if name == "chain_step_finished":
        status = str(payload.get("status"))
        label = f"{payload.get('chain')} · {payload.get('step')}"
        line = "  " + chain_step_line(
            label, payload.get("tool"), status, payload.get("attempts") or 0
        )
        return line if status == "succeeded" else f"{line}: {short(payload.get('result'), 100)}"
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
