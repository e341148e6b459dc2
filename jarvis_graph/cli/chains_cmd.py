"""``jarvis chains``: list, show, run and resume tool chains (YAML sequences of tool calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    help="Tool chains: named sequences of tool calls in .jarvis/chains/ and ~/.jarvis/chains/.",
    no_args_is_help=True,
)

EXIT_USAGE = 2


def _ctx(
    workspace: Path | None, yes: bool = False, non_interactive: bool = False
) -> dict[str, Any]:
    return o.context_kwargs(workspace, None, None, None, None, None, yes, None, non_interactive)


def _usable(ctx: dict[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
    """The catalog, the chains a run of ``ctx`` can use, and the problems of the others."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.chains.catalog import load_catalog
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.features.chains import tool_schema
    from jarvis_graph.runtime.services import RunServices

    catalog = load_catalog(Path(ctx["workspace"]))
    tools = RunServices(JarvisContext(**ctx)).tools
    schemas = {name: tool_schema(t) for name, t in tools.items() if name not in catalog.chains}
    usable, problems = catalog.usable(schemas)
    return catalog, usable, [*catalog.errors, *problems]


def _source(catalog: Any, name: str, workspace: Path) -> str:
    path = catalog.chains[name].path
    if catalog.builtin(name):
        return "built-in"
    return str(path.relative_to(workspace)) if path.is_relative_to(workspace) else str(path)


@app.command("list")
def list_chains(workspace: Path | None = o.Workspace) -> None:
    """List the chains: name, source, steps, description; then the ones that cannot run."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import console

    ctx = _ctx(workspace)
    catalog, usable, problems = _closing(_usable, ctx)
    ws = Path(ctx["workspace"])
    for name, chain in sorted(catalog.chains.items()):
        steps = " → ".join(f"{s.id}:{s.tool}" for s in chain.steps)
        mark = "" if name in usable else "  (cannot run: see below)"
        source = _source(catalog, name, ws)
        echo(f"{name}\t{source}\t{steps}\t{chain.description}{mark}")
    if not catalog.chains:
        console.print("no chains; put YAML files in .jarvis/chains/ (README: Tool chains)")
    for problem in problems:
        # text, never markup: a problem quotes the chain file ("[link=...]" would be a link)
        console.print(f"[yellow]problem:[/] {escape(str(problem))}", highlight=False)


@app.command("show")
def show(
    name: str = typer.Argument(..., help="Chain name."), workspace: Path | None = o.Workspace
) -> None:
    """Show a chain: inputs, steps (tool, condition, error policy, arguments) and output."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.chains.catalog import load_catalog
    from jarvis_graph.cli.driver import console

    ctx = _ctx(workspace)
    catalog = load_catalog(Path(ctx["workspace"]))
    chain = _named(catalog, name)
    out = [f"{chain.name} ({_source(catalog, name, Path(ctx['workspace']))})", chain.description]
    out.append("input:")
    for p in chain.inputs:
        default = "required" if p.required else f"default {json.dumps(p.default)}"
        out.append(
            f"  {p.name}: {p.type}, {default}" + (f" — {p.description}" if p.description else "")
        )
    if not chain.inputs:
        out.append("  (none)")
    out.append("steps:")
    for i, step in enumerate(chain.steps, 1):
        extra = f" if {step.condition.text}" if step.condition else ""
        policy = f"retry {step.retries}" if step.on_error == "retry" else step.on_error
        out.append(f"  {i}. {step.id}: {step.tool}{extra} (on error: {policy})")
        out.append(f"     {json.dumps(step.args, ensure_ascii=False)}")
    if chain.output is not None:
        out += ["output:", *("  " + line for line in chain.output.splitlines())]
    console.print("\n".join(out), markup=False)


def _named(catalog: Any, name: str) -> Any:
    if name not in catalog.chains:
        known = ", ".join(sorted(catalog.chains)) or "none"
        echo(f"error: no chain named {name!r}; chains: {known} (jarvis chains list)", err=True)
        for error in catalog.errors:
            echo(f"  {error}", err=True)
        raise typer.Exit(EXIT_USAGE)
    return catalog.chains[name]


@app.command("run")
def run(
    name: str = typer.Argument(..., help="Chain name."),
    args: str = typer.Option("{}", "--args", "-a", help="The chain's input as a JSON object."),
    workspace: Path | None = o.Workspace,
    yes: bool = o.Yes,
    non_interactive: bool = typer.Option(False, "--non-interactive", "-n"),
    verbose: bool = o.Verbose,
) -> None:
    """Run a chain by hand; risky steps are confirmed as in ``jarvis run``."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import new_thread_id

    ctx = _ctx(workspace, yes, non_interactive)
    try:
        given = json.loads(args)
    except json.JSONDecodeError as exc:
        example = '--args \'{"path": "src"}\''
        echo(f"error: --args is not valid JSON ({exc}); for example {example}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    if not isinstance(given, dict):
        echo("error: --args must be a JSON object of the chain's inputs", err=True)
        raise typer.Exit(EXIT_USAGE)
    catalog, usable, problems = _closing(_usable, ctx)
    chain = _named(catalog, name)
    if name not in usable:
        mine = [str(p) for p in problems if str(p).startswith(f"{chain.path}:")]
        echo(f"error: chain {name} cannot run:", err=True)
        for problem in mine or [str(p) for p in problems]:
            echo(f"  {problem}", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        values = chain.arguments(given)
    except ValueError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    state = {"chain": chain.name, "input": values, "status": "running"}
    raise typer.Exit(drive_chain(chain, ctx, state, new_thread_id(), verbose))


@app.command("resume")
def resume(
    thread_id: str = typer.Argument(..., help="The chain run's session id."),
    workspace: Path | None = o.Workspace,
    yes: bool = o.Yes,
    non_interactive: bool = typer.Option(False, "--non-interactive", "-n"),
    verbose: bool = o.Verbose,
) -> None:
    """Continue a chain run from the step that did not finish (steps done are not run again)."""
    raise typer.Exit(resume_chain(thread_id, workspace, yes, non_interactive, verbose))


def resume_chain(
    thread_id: str, workspace: Path | None, yes: bool, non_interactive: bool, verbose: bool
) -> int:
    """Resume the chain run ``thread_id``; the exit code (see :func:`drive_chain`)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.chains.catalog import load_catalog
    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.cli.driver import thread_config
    from jarvis_graph.context import JarvisContext, resolve_settings

    ctx = _ctx(workspace, yes, non_interactive)
    settings = resolve_settings(JarvisContext(**ctx))
    with open_checkpointer(Path(ctx["workspace"]), settings.checkpoint_url) as saver:
        saved = saver.get_tuple(thread_config(thread_id))  # type: ignore[arg-type]
    values = saved.checkpoint["channel_values"] if saved else {}
    if saved is None or "chain" not in values:
        hint = "jarvis sessions list shows the sessions"
        echo(f"error: {thread_id} is not a chain run of this project ({hint})", err=True)
        raise typer.Exit(EXIT_USAGE)
    chain = _named(load_catalog(Path(ctx["workspace"])), str(values["chain"]))
    return drive_chain(chain, ctx, None, thread_id, verbose)


def _closing(fn: Any, *args: Any) -> Any:
    """``fn(*args)``, then the tools it started (MCP servers) closed."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.tools.registry import close_registries

    try:
        return fn(*args)
    finally:
        close_registries()


def drive_chain(
    chain: Any, ctx: dict[str, Any], graph_input: Any, thread_id: str, verbose: bool
) -> int:
    """Run (or resume) ``chain`` on ``thread_id``, printing each step as it ends.

    Returns:
        The exit code: 0 when the chain completed, 1 when a step stopped it, 130 on Ctrl-C.
    """
    from langgraph.types import Command
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.driver import (
        EXIT_ERROR,
        EXIT_INTERRUPTED,
        EXIT_OK,
        ThreadBusyError,
        answer_interrupt,
        console,
        held_thread,
        open_graph,
        thread_config,
    )
    from jarvis_graph.cli.render import LiveLine
    from jarvis_graph.graphs.chain import build_chain_graph

    config = thread_config(thread_id, ctx)
    config["metadata"]["jarvis_graph"] = "chain"  # jarvis sessions resume hands it here
    config["metadata"]["jarvis_chain"] = chain.name
    console.print(f"[dim]chain {escape(chain.name)} · session {escape(thread_id)}[/]")
    pending = graph_input
    live = LiveLine(console)
    with open_graph(ctx, build_chain_graph(chain), f"chain_{chain.name}") as graph:
        try:
            with held_thread(graph, ctx, thread_id):
                while True:
                    try:
                        for mode, chunk in graph.stream(
                            pending,
                            config,
                            context=ctx,
                            stream_mode=["tasks", "updates"],
                            durability="sync",
                        ):
                            _show_progress(live, chain, mode, chunk, verbose)
                    finally:
                        live.stop()  # before a question, an error or the result
                    state = graph.get_state(config)
                    if not state.interrupts:
                        break
                    pending = Command(resume=answer_interrupt(state.interrupts[0].value))
        except ThreadBusyError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}")
            return EXIT_ERROR
        except (KeyboardInterrupt, EOFError):
            hint = f"stopped; resume with: jarvis chains resume {thread_id}"
            console.print(f"\n[dim]{escape(hint)}[/]")
            return EXIT_INTERRUPTED
    values = state.values
    console.print(values.get("output") or "", markup=False)
    return EXIT_OK if values.get("status") == "completed" else EXIT_ERROR


def _show_progress(live: Any, chain: Any, mode: str, chunk: Any, verbose: bool) -> None:
    """A step starting: the live line names it; a step done: its line (see ``_print_step``)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import Working

    tools = {s.id: s.tool for s in chain.steps}
    if mode == "tasks":
        if "input" in chunk and chunk.get("name") in tools:  # a step's task starts
            live.show(Working(f"{chunk['name']} ({tools[chunk['name']]}) running"))
        return
    live.stop()
    for data in chunk.values():
        if not isinstance(data, dict):
            continue  # an interrupt: answered by drive_chain
        for sid, result in (data.get("steps") or {}).items():
            _print_step(live.console, chain, sid, result, verbose)


def _print_step(console: Any, chain: Any, sid: str, result: dict[str, Any], verbose: bool) -> None:
    """One line per finished step; its result when it did not succeed (all of it with -v)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import chain_step_line
    from jarvis_graph.messages import shorten

    tool = next((s.tool for s in chain.steps if s.id == sid), "?")
    line = chain_step_line(sid, tool, result["status"], result.get("attempts", 0))
    console.print(line, markup=False)
    text = result["result"].strip()
    if text and (verbose or result["status"] != "succeeded"):
        shown = text if verbose else shorten(text, 300)
        console.print("  " + shown.replace("\n", "\n  "), markup=False, style="dim")
