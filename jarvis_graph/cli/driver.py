"""Drive an agent thread from the terminal: stream, answer interrupts, handle Ctrl-C."""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import Command
from rich.markup import escape

from jarvis_graph.checkpointing import CheckpointError, open_checkpointer
from jarvis_graph.cli import approval
from jarvis_graph.cli.preflight import RunSetupError, check_model, check_task, check_thread
from jarvis_graph.cli.render import RunRenderer, TerminalConsole, short
from jarvis_graph.cli.streaming import StreamThread
from jarvis_graph.config import ConfigError
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.graphs.agent import RECURSION_LIMIT, build_agent_graph
from jarvis_graph.memory.pg_store import shared_store, store_url
from jarvis_graph.memory.records import MemoryStoreError
from jarvis_graph.memory.router import memory_store
from jarvis_graph.messages import not_run_answers, pending_tool_calls
from jarvis_graph.platforms.errors import PlatformError, ProviderError
from jarvis_graph.script_groups import end_orphans, scripts_db
from jarvis_graph.secrets import strip_userinfo
from jarvis_graph.thread_lock import ThreadBusyError, hold_thread, release_all

EXIT_OK, EXIT_ERROR, EXIT_CAPPED, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 3, 4, 130
DRAIN_WAIT = 120.0  # seconds a Ctrl-C'd step may take to finish before the user's instruction
WAITING = -1  # drive() in chat mode: the agent waits for the next message
STREAM_MODES = ["messages", "updates", "custom"]
NESTED_EVENTS = frozenset({"chain_step_finished"})
"""Events of runs nested in a tool call (a chain's steps) shown as they happen; the rest of
a nested run (a sub-agent's tokens and tool calls) is summed up by its tool's result."""

console = TerminalConsole(highlight=False, soft_wrap=True)
logger = logging.getLogger(__name__)


def new_thread_id() -> str:
    """A sortable, readable thread id."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def build_graph(ctx: dict[str, Any], kind: str = "agent") -> tuple[Any, str]:
    """The uncompiled graph a session runs, and its name.

    ``kind``: ``agent``, ``planner``, ``code_agent``, ``multi_agent`` or ``expert_router``
    (the last two read their agents from ``ctx["agents_file"]``).

    Raises:
        ConfigError: The agents file is invalid.
    """
    if kind == "planner":
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.graphs.planner import build_planner_graph

        return build_planner_graph(), kind
    if kind == "code_agent":
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.graphs.code_agent import build_code_agent_graph

        return build_code_agent_graph(), kind
    if kind in ("multi_agent", "expert_router"):
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.graphs.multi_agent import build_multi_agent_graph
        from jarvis_graph.multi.config import load_agents

        config = load_agents(ctx["agents_file"]) if ctx.get("agents_file") else None
        return build_multi_agent_graph(config, route=kind == "expert_router"), kind
    return build_agent_graph(), "agent"


@contextmanager
def open_agent(ctx: dict[str, Any], kind: str = "agent") -> Iterator[Any]:
    """The session's graph (the agent by default) compiled with the project's session store.

    The run's tools (and MCP sessions) are closed when the block ends.
    """
    builder, name = build_graph(ctx, kind)
    with open_graph(ctx, builder, name) as graph:
        yield graph


@contextmanager
def open_graph(ctx: dict[str, Any], builder: Any, name: str) -> Iterator[Any]:
    """``builder`` compiled as ``name`` with the project's session and memory stores.

    The run's tools (and MCP sessions) are closed when the block ends.
    """
    settings = resolve_settings(JarvisContext(**ctx))
    with open_checkpointer(Path(ctx["workspace"]), settings.checkpoint_url) as saver:
        url = store_url()
        if url:  # a shared memory store that cannot be used stops the run before it starts
            shared_store(url)
        try:
            yield builder.compile(checkpointer=saver, store=memory_store(), name=name)
        finally:
            # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
            from jarvis_graph.memory.background import wait_for_background
            from jarvis_graph.tools.registry import close_registries

            wait_for_background()  # the answer is shown; the archive is written before we end
            close_registries()


def prepare_tools(ctx: dict[str, Any], show_sandbox: bool = True) -> dict[str, Any]:
    """Load the run's tools now (MCP servers start) and say what was left out.

    With ``show_sandbox`` (once per run: a check made before the run passes ``False``) it
    also shows the sandbox level the run's scripts get, or the warning when it is off.

    Returns:
        The tools a run with ``ctx`` has, by name.

    Raises:
        ConfigError: A tool group or an ``mcp.json`` file is invalid.
    """
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.doctor_cmd import start_line
    from jarvis_graph.runtime.services import RunServices

    services = RunServices(JarvisContext(**ctx))  # an undefined tool group fails here
    if show_sandbox:
        style, text = start_line(services.settings)
        console.print(f"[{style}]{escape(text)}[/]", markup=True, highlight=False)
    for note in services.problems:
        console.print(f"[yellow]warning:[/] {escape(note)}", markup=True, highlight=False)
    return services.tools


def thread_config(thread_id: str, ctx: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run config for a thread; the context is kept in checkpoint metadata for resume."""
    config: dict[str, Any] = {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": RECURSION_LIMIT,
    }
    if ctx is not None:
        # Stored in every checkpoint: URLs lose their user:password@ (this run still uses it).
        stored = {k: strip_userinfo(v) if isinstance(v, str) else v for k, v in ctx.items()}
        config["metadata"] = {"jarvis_context": json.dumps(stored, sort_keys=True)}
    return config


def saved_context(state: Any) -> dict[str, Any]:
    """The context a thread's snapshot was made with (kept in checkpoint metadata).

    A base URL was stored without ``user:password@``; ``JARVIS_BASE_URL`` holding the same
    URL with them gives them back.
    """
    raw = (state.metadata or {}).get("jarvis_context")
    ctx = json.loads(raw) if isinstance(raw, str) else {}
    # The sandbox comes from the settings of the process that resumes: a session store is
    # a file in the workspace, and what it holds must not turn the sandbox off.
    ctx.pop("sandbox", None)
    given = os.environ.get("JARVIS_BASE_URL", "")
    if ctx.get("base_url") and ctx["base_url"] == strip_userinfo(given):
        ctx["base_url"] = given
    return ctx


def run_task(
    ctx: dict[str, Any],
    graph_input: Any,
    thread_id: str | None = None,
    verbose: bool = False,
    kind: str = "agent",
    new_thread: str | None = None,
) -> int:
    """Open the session store and drive one thread; returns the process exit code.

    ``thread_id`` continues an existing session, ``new_thread`` names a new one. The task,
    the session id, the model and the tools are checked before the session is written.
    """
    try:
        check_task(graph_input.get("task") if isinstance(graph_input, dict) else None)
        check_thread(ctx, thread_id, new_thread)
        check_model(ctx, kind)
        with open_agent(ctx, kind) as graph:
            prepare_tools(ctx)
            tid = thread_id or new_thread or new_thread_id()
            return drive(graph, ctx, graph_input, tid, verbose)
    except RunSetupError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return exc.code
    except (ConfigError, CheckpointError, PlatformError, MemoryStoreError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", markup=True)
        return EXIT_ERROR


def drive(
    graph: Any,
    ctx: dict[str, Any],
    graph_input: Any,
    thread_id: str,
    verbose: bool = False,
    chat: bool = False,
) -> int:
    """Hold the thread (one run at a time, across processes) and drive it.

    A thread another live process holds is an error (exit 1) and nothing runs.

    With ``chat``, an ``ask_user`` interrupt returns :data:`WAITING` so the REPL reads the
    next message itself.
    """
    try:
        with held_thread(graph, ctx, thread_id):
            return _drive_thread(graph, ctx, graph_input, thread_id, verbose, chat)
    except ThreadBusyError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_ERROR


@contextmanager
def held_thread(graph: Any, ctx: dict[str, Any], thread_id: str) -> Iterator[None]:
    """Hold ``thread_id`` in the graph's session store while the block runs (re-entrant).

    Says so when the lock of a process that is gone is taken over, and ends the scripts a
    killed run of the thread left running.

    Raises:
        ThreadBusyError: Another live process holds the thread.
    """
    with hold_thread(graph.checkpointer, thread_id) as stale:
        if stale is not None:
            console.print(
                f"[dim]took over session {escape(thread_id)} from {escape(stale.describe())},"
                " which is no longer running[/]"
            )
        settings = resolve_settings(JarvisContext(**ctx))
        db = scripts_db(Path(ctx["workspace"]), settings.checkpoint_url)
        for line in end_orphans(db, thread_id):
            console.print(f"[yellow]{escape(line)}[/]")
        yield


def _drive_thread(
    graph: Any,
    ctx: dict[str, Any],
    graph_input: Any,
    thread_id: str,
    verbose: bool,
    chat: bool,
) -> int:
    """Stream the thread until it completes, stops, or fails; answer interrupts on the way."""
    config = thread_config(thread_id, ctx)
    config["metadata"]["jarvis_graph"] = graph.name  # sessions resume with the same graph
    non_interactive = bool(ctx.get("non_interactive"))
    if not chat:
        console.print(f"[dim]session {escape(thread_id)} · workspace {escape(ctx['workspace'])}[/]")
    renderer = RunRenderer(console, verbose)
    pending: Any = graph_input
    while True:
        run = StreamThread(
            graph,
            pending,
            config,
            context=ctx,
            stream_mode=STREAM_MODES,
            subgraphs=True,
            durability="sync",
        )
        try:
            for namespace, mode, chunk in run:
                if not namespace or _nested_event(mode, chunk):
                    renderer.handle(mode, chunk)
            renderer.close()
        except KeyboardInterrupt:
            run.stop()
            renderer.close()
            pending = _on_ctrl_c(graph, config, run, thread_id, non_interactive)
            if pending is _STOP:
                return EXIT_INTERRUPTED
            continue
        except (ProviderError, PlatformError) as exc:
            renderer.close()
            console.print(f"[red]error:[/] {escape(str(exc))}")
            console.print(f"[dim]resume with: jarvis sessions resume {escape(thread_id)}[/]")
            return EXIT_ERROR
        except Exception as exc:  # a bug: say so plainly, keep the session resumable
            renderer.close()
            logger.debug("run failed", exc_info=True)
            what = escape(f"{type(exc).__name__}: {exc}")
            console.print(f"[red]error:[/] the run failed: {what}")
            if verbose:
                console.print_exception()
            console.print(
                f"[dim]the session is saved at its last step; resume with: "
                f"jarvis sessions resume {escape(thread_id)} (-v shows the traceback)[/]"
            )
            return EXIT_ERROR
        state = graph.get_state(config)
        if state.interrupts and not non_interactive:
            if chat and _interrupt_type(state) == "ask_user":
                return WAITING
            try:
                pending = Command(resume=answer_interrupt(state.interrupts[0].value))
            except (KeyboardInterrupt, EOFError):
                hint = f"stopped; resume with: jarvis sessions resume {escape(thread_id)}"
                console.print(f"\n[dim]{hint}[/]")
                return EXIT_INTERRUPTED
            continue
        return _finish(state, renderer, thread_id)


def _nested_event(mode: str, chunk: Any) -> bool:
    return mode == "custom" and isinstance(chunk, dict) and chunk.get("event") in NESTED_EVENTS


def _interrupt_type(state: Any) -> str | None:
    value = state.interrupts[0].value if state.interrupts else None
    return value.get("type") if isinstance(value, dict) else None


def _finish(state: Any, renderer: RunRenderer, thread_id: str) -> int:
    values = state.values
    status = values.get("status", "running")
    answer = values.get("final_answer", "")
    if state.interrupts:
        hint = f"continue with: jarvis sessions resume {escape(thread_id)}"
        console.print(f"[yellow]waiting for input[/]; {hint}")
        return EXIT_ERROR
    if answer and answer.strip() != renderer.streamed_text.strip():
        console.print(answer, markup=False)
    colour = "green" if status == "completed" else "yellow"
    shown = "completed (unverified)" if status == "unverified" else str(status)
    for problem in values.get("answer_problems") or [] if status == "unverified" else []:
        console.print(f"[yellow]unverified:[/] {escape(problem)}")
    console.print(
        f"[{colour}]■ {escape(shown)}[/] [dim]· {values.get('iteration', 0)} model calls · "
        f"{renderer.usage()} · session {escape(thread_id)}[/]"
    )
    if renderer.verbose:
        console.print(f"[dim]{escape(renderer.progress.breakdown())}[/]")
    if status == "unverified":
        return EXIT_UNVERIFIED
    return EXIT_OK if status == "completed" else EXIT_CAPPED


_STOP = object()


def _on_ctrl_c(
    graph: Any, config: dict[str, Any], run: StreamThread, thread_id: str, non_interactive: bool
) -> Any:
    """After Ctrl-C: stop, or add the user's instruction and continue.

    Stopping abandons the step in flight (a model call, say): it is not recorded, so
    resuming runs it again. Continuing lets that step finish (up to :data:`DRAIN_WAIT`
    seconds), answers the tool calls that did not run as "not run", then adds the
    instruction.
    """
    get_event_bus().emit(Event.INTERRUPT_TRIGGERED, {"kind": "user", "thread_id": thread_id})
    hint = escape(f"resume later with: jarvis sessions resume {thread_id}")
    console.print("\n[yellow]interrupted[/]")
    text = ""
    if not non_interactive:
        try:
            text = console.input("instruction to continue (Enter to stop): ").strip()
        except (KeyboardInterrupt, EOFError):
            text = ""
    if text:
        console.print("[dim]finishing the step in progress…[/]")
    if not text or not run.wait(timeout=DRAIN_WAIT):
        console.print(f"[dim]{hint}[/]")
        _exit_now(run)
        return _STOP
    state = graph.get_state(config)
    if not state.next or "start_task" in state.next:
        return {"task": text}
    if getattr(graph, "name", "agent") != "agent":  # planner, multi-agent: no mid-run input
        console.print(f"[yellow]this run cannot take an instruction mid-way[/]; {hint}")
        return _STOP
    calls = pending_tool_calls(state.values.get("messages", []))
    answers = not_run_answers(calls, "the user interrupted before this call")
    update = {"messages": [*answers, HumanMessage(content=text)]}
    graph.update_state(config, update, as_node="run_tools")
    return None


def _exit_now(run: StreamThread) -> None:
    """Leave without waiting for a model call still in flight (it is not recorded)."""
    if run.wait(timeout=2.0):
        return
    console.file.flush()
    sys.stderr.flush()
    release_all()  # os._exit runs no cleanup: the thread would look held until taken over
    os._exit(EXIT_INTERRUPTED)


def answer_interrupt(value: Any) -> Any:
    """Ask the user what an interrupt needs; returns the resume value."""
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "ask_user":
        return console.input("[bold]next instruction[/] (Enter to finish): ").strip()
    if kind == "feedback":  # after a completed task, with use_analysis
        return console.input(f"[bold]{escape(str(value.get('question', 'feedback')))}[/] ").strip()
    if kind != "confirm_tools":
        console.print(f"[yellow]the graph is waiting for input:[/] {escape(short(value))}")
        return console.input("reply: ")
    decisions: dict[str, Any] = {}
    for request in value["requests"]:
        if request["kind"] == "question":
            console.print(f"[bold magenta]? {escape(str(request.get('question', '')))}[/]")
            decisions[request["id"]] = {"answer": console.input("answer: ")}
        else:
            decisions[request["id"]] = _confirm(request)
    return decisions


def _confirm(request: dict[str, Any]) -> dict[str, Any]:
    return approval.confirm(request, console)
