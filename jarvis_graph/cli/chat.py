"""``jarvis chat``: a REPL over one thread, with Jarvis' input handlers.

``!cmd`` runs a shell command in the workspace and shows its output; ``@path`` adds a
file's contents to the message; ``/help``, ``/tools``, ``/sessions``, ``/clear``,
``/exit`` are built in.
"""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from langgraph.types import Command
from rich.markup import escape

from jarvis_graph.checkpointing import CheckpointError, list_threads
from jarvis_graph.cli.chat_routing import ChatRouter, print_open_threads
from jarvis_graph.cli.driver import (
    EXIT_ERROR,
    WAITING,
    console,
    drive,
    held_thread,
    new_thread_id,
    open_agent,
    prepare_tools,
)
from jarvis_graph.cli.feedback_cmd import rate
from jarvis_graph.cli.images_input import task_input
from jarvis_graph.cli.picker import pick_start
from jarvis_graph.cli.preflight import RunSetupError, check_model, check_thread
from jarvis_graph.config import ConfigError
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.images import ImageError, is_image_path
from jarvis_graph.memory.records import MemoryStoreError
from jarvis_graph.multi.definitions import AgentDefinition
from jarvis_graph.platforms.registry import PlatformError
from jarvis_graph.thread_lock import ThreadBusyError

HELP = """\
  !cmd        run a shell command in the workspace and show its output
  /good       rate this session's task good (what worked is kept for similar tasks)
  /bad [why]  rate it bad: a lesson is written for similar tasks
  /threads    list the open sessions (thread_routing sends each message to its own)
  @path       add the contents of a workspace file to your message
  /tools      list the tools the agent can use
  /sessions   list saved sessions
  /clear      start a new session (the old one stays saved)
  /help       this help
  /exit       leave (Ctrl-D works too)"""

_AT_PATH = re.compile(r"(?<!\S)@([^\s]+)")
MAX_ATTACH = 100_000


def start_choice(ctx: dict[str, Any]) -> tuple[AgentDefinition | None, str | None]:
    """The picker's choice when it applies (a terminal, ``chat_picker`` on), else nothing.

    Returns:
        The agent definition to run (``None``: the Jarvis agent) and the first message
        (``None``: the user types it).
    """
    if not (sys.stdin.isatty() and console.is_terminal):
        return None, None
    try:
        if not resolve_settings(JarvisContext(**ctx)).chat_picker:
            return None, None
    except ConfigError:
        return None, None  # the chat reports a broken config where it starts
    choice = pick_start(Path(ctx["workspace"]))
    return choice.definition, choice.task


def list_open(ctx: dict[str, Any]) -> int:
    """``jarvis chat --threads``: print the open sessions; the exit code."""
    try:
        with open_agent(ctx) as graph:
            return print_open_threads(graph, ctx)
    except (ConfigError, CheckpointError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_ERROR


def chat_loop(
    ctx: dict[str, Any],
    thread_id: str | None = None,
    verbose: bool = False,
    new_thread: str | None = None,
    kind: str = "agent",
    first: str | None = None,
) -> int:
    """Run the REPL until /exit or end of input; returns the exit code.

    The session id and the model are checked before the first prompt. ``kind`` is the
    graph to talk to; ``first`` is sent as the first message.
    """
    try:
        check_thread(ctx, thread_id, new_thread)
        check_model(ctx, kind)
        with open_agent(ctx, kind) as graph:
            prepare_tools(ctx)
            tid = thread_id or new_thread or new_thread_id()
            return _loop(graph, ctx, tid, verbose, first)
    except RunSetupError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return exc.code
    except (ConfigError, PlatformError, ThreadBusyError, CheckpointError, MemoryStoreError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_ERROR


def _loop(graph: Any, ctx: dict[str, Any], thread_id: str, verbose: bool, first: str | None) -> int:
    # The session is held for the whole REPL, not only while a message runs: another
    # process must not take the thread while the user types.
    with ExitStack() as held:
        held.enter_context(held_thread(graph, ctx, thread_id))
        return _repl(graph, ctx, thread_id, verbose, held, first)


def _repl(
    graph: Any,
    ctx: dict[str, Any],
    thread_id: str,
    verbose: bool,
    held: ExitStack,
    first: str | None = None,
) -> int:
    workspace = Path(ctx["workspace"])
    router = ChatRouter(graph, ctx)
    waiting = bool(graph.get_state({"configurable": {"thread_id": thread_id}}).interrupts)
    where = escape(f"session {thread_id} · workspace {workspace}")
    console.print(f"[dim]{where} · /help for commands[/]")
    while True:
        try:
            if first is not None:
                line, first = first, None
                console.print(f"[bold green]you>[/] {escape(line)}")
            else:
                line = console.input("[bold green]you>[/] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return 0
        text = line.strip()
        if not text:
            continue
        if text.startswith("!"):
            _shell(text[1:], workspace)
            continue
        if text.startswith("/"):
            command = text.split()[0]
            if command in ("/exit", "/quit"):
                return 0
            if command in ("/good", "/bad"):
                values = graph.get_state({"configurable": {"thread_id": thread_id}}).values
                if not values.get("messages"):
                    console.print("[yellow]nothing to rate yet in this session[/]")
                    continue
                comment = text[len(command) :].strip()
                rate(graph, ctx, values, thread_id, 5 if command == "/good" else 1, comment)
                continue
            if command == "/clear":
                thread_id, waiting = new_thread_id(), False
                held.close()
                held.enter_context(held_thread(graph, ctx, thread_id))
                console.print(f"[dim]new session {escape(thread_id)}[/]")
            else:
                _builtin(command, graph, ctx)
            continue
        message = expand_mentions(text, workspace)
        if router.enabled and not waiting:
            target = router.choose(text, thread_id)
            if target != thread_id:
                try:
                    held.close()
                    held.enter_context(held_thread(graph, ctx, target))
                except ThreadBusyError as exc:  # another process has it: stay here
                    console.print(f"[yellow]{escape(str(exc))}; staying in this session[/]")
                    held.enter_context(held_thread(graph, ctx, thread_id))
                else:
                    thread_id = target
                    state = graph.get_state({"configurable": {"thread_id": thread_id}})
                    waiting = bool(state.interrupts)
        pending: Any = Command(resume=message) if waiting else {"task": message}
        images = mentioned_images(text, workspace)
        if images and waiting:
            console.print("[yellow]images go with a new message, not an answer; not sent[/]")
        elif images:
            try:
                pending = task_input(ctx, message, images)
            except (ImageError, ConfigError) as exc:
                console.print(f"[red]error:[/] {escape(str(exc))}")
                continue
        code = drive(graph, ctx, pending, thread_id, verbose, chat=True)
        waiting = code == WAITING


def _builtin(command: str, graph: Any, ctx: dict[str, Any]) -> None:
    if command == "/help":
        console.print(HELP, markup=False)
    elif command == "/tools":
        # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
        from jarvis_graph.context import JarvisContext
        from jarvis_graph.runtime.services import RunServices

        for name, tool in sorted(RunServices(JarvisContext(**ctx)).tools.items()):
            first = (tool.description or "").strip().splitlines()[0:1]
            console.print(f"  [cyan]{escape(name)}[/] {escape(first[0] if first else '')}")
    elif command == "/threads":
        print_open_threads(graph, ctx)
    elif command == "/sessions":
        for row in list_threads(graph.checkpointer)[:20]:
            console.print(f"  {row.thread_id}  ({row.checkpoints} checkpoints)", markup=False)
    else:
        console.print(f"[yellow]unknown command {escape(command)}; /help lists the commands[/]")


def _shell(command: str, workspace: Path) -> None:
    if not command.strip():
        console.print("[yellow]usage: !command[/]")
        return
    try:
        proc = subprocess.run(
            command, shell=True, cwd=workspace, capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired:
        console.print("[red]command timed out after 300 s[/]")
        return
    console.print((proc.stdout + proc.stderr).rstrip(), markup=False)
    if proc.returncode:
        console.print(f"[dim]exit code {proc.returncode}[/]")


def mentioned_images(text: str, workspace: Path) -> list[Path]:
    """The image files of the workspace that ``@path`` mentions name."""
    found = []
    for match in _AT_PATH.finditer(text):
        rel = match.group(1).rstrip(".,;:!?)'\"")
        path = (workspace / rel).resolve()
        if is_image_path(path) and path.is_relative_to(workspace.resolve()) and path.is_file():
            found.append(path)
    return found


def expand_mentions(text: str, workspace: Path) -> str:
    """Append the contents of every ``@path`` that names a (non-image) file in the workspace."""
    attachments = []
    for match in _AT_PATH.finditer(text):
        rel = match.group(1).rstrip(".,;:!?)'\"")  # "what is in @notes.txt?"
        path = (workspace / rel).resolve()
        if not path.is_relative_to(workspace.resolve()) or not path.is_file():
            console.print(f"[yellow]@{escape(rel)}: no such file in the workspace; sent as text[/]")
            continue
        if is_image_path(path):
            continue  # sent as an image part (mentioned_images)
        body = path.read_text(encoding="utf-8", errors="replace")
        if len(body) > MAX_ATTACH:
            body = body[:MAX_ATTACH] + f"\n[... cut at {MAX_ATTACH} characters]"
        attachments.append(f"Contents of {rel}:\n```\n{body}\n```")
    return "\n\n".join([text, *attachments])
