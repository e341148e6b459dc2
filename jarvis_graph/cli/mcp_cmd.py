"""``jarvis mcp``: the configured MCP servers; call one of their tools by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

if TYPE_CHECKING:
    from jarvis_graph.config import McpServerSpec
    from jarvis_graph.tools.mcp_hub import McpHub, Session

app = typer.Typer(help="MCP servers from config.yaml and mcp.json files.", no_args_is_help=True)


def _servers(workspace: Path | None) -> tuple[Path, list[McpServerSpec], Any]:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import load_settings
    from jarvis_graph.tools.mcp_config import mcp_servers

    ws = (workspace or Path.cwd()).resolve()
    settings = load_settings(ws)
    return ws, mcp_servers(settings, ws), settings


def _hub(ws: Path, specs: list[McpServerSpec], settings: Any) -> McpHub:
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.tools.mcp_hub import McpHub

    return McpHub(
        specs,
        ws / ".jarvis" / "mcp_logs",
        start_timeout=settings.mcp_start_timeout,
        call_timeout=settings.mcp_timeout,
    )


def _fail(message: str) -> typer.Exit:
    echo(f"error: {message}", err=True)
    return typer.Exit(1)


@app.command("list")
def list_servers(workspace: Path | None = o.Workspace) -> None:
    """Start each server and list its tools, resources and prompts."""
    from rich.markup import escape

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.cli.render import TerminalConsole
    from jarvis_graph.config import ConfigError
    from jarvis_graph.secrets import redact_url

    console = TerminalConsole(highlight=False)
    try:
        ws, specs, settings = _servers(workspace)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if not specs:
        console.print("no MCP servers configured (mcp: in config.yaml, or mcpServers in mcp.json)")
        return
    hub = _hub(ws, specs, settings)
    failures: dict[str, str] = {}
    try:
        failures = hub.start()
        for spec in specs:
            where = spec.command if spec.type == "stdio" else redact_url(spec.base_url or "")
            console.print(f"[bold]{spec.name}[/] [dim]({spec.type}: {escape(str(where))})[/]")
            if spec.name in failures:
                console.print(f"  [red]failed to start:[/] {escape(failures[spec.name])}")
                continue
            for line in hub.run(_describe(hub, spec.name)):
                console.print(f"  {line}", markup=False)
    finally:
        hub.close()
    if failures:
        names = ", ".join(failures)
        raise _fail(
            f"{len(failures)} of {len(specs)} MCP servers failed to start ({names}); "
            "the reasons are above, the servers' output in "
            f"{ws / '.jarvis' / 'mcp_logs'}"
        )


async def _describe(hub: McpHub, name: str) -> list[str]:
    sess = hub.current(name)
    assert sess is not None
    caps = sess.init.capabilities
    info = sess.init.serverInfo
    lines = [f"server: {info.name} {info.version}"]
    lines.append(f"tools ({len(sess.tools)}): " + ", ".join(t.name for t in sess.tools))
    if caps.resources is not None:
        lines.append(_resources_line(await sess.session.list_resources()))
    if caps.prompts is not None:
        prompts = (await sess.session.list_prompts()).prompts
        lines.append(f"prompts ({len(prompts)}): " + ", ".join(p.name for p in prompts))
    return lines


def _resources_line(result: Any) -> str:
    return f"resources ({len(result.resources)}): " + ", ".join(
        str(r.uri) for r in result.resources
    )


@app.command("call")
def call(
    server: str = typer.Argument(..., help="Server name."),
    tool: str = typer.Argument(..., help="Tool name as the server calls it."),
    args: str = typer.Option("{}", "--args", "-a", help="Arguments as a JSON object."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Call TOOL on SERVER and print the result (exit code 1 on failure)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError
    from jarvis_graph.tools.base import ToolFailure
    from jarvis_graph.tools.mcp_tools import call_mcp_tool

    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        msg = f"--args is not valid JSON ({exc}); pass an object such as '{{\"a\": 1}}'"
        raise _fail(msg) from None
    if not isinstance(arguments, dict):
        raise _fail(f"--args must be a JSON object, not {type(arguments).__name__}")
    try:
        ws, specs, settings = _servers(workspace)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    spec = next((s for s in specs if s.name == server), None)
    if spec is None:
        known = ", ".join(s.name for s in specs) or "none configured"
        raise _fail(f"no MCP server named {server!r} (known: {known})")
    hub = _hub(ws, [spec], settings)
    try:
        failure = hub.start().get(server)
        if failure:
            raise _fail(f"MCP server {server!r} failed to start: {failure}")
        sess: Session | None = hub.current(server)
        if sess is not None and tool not in {t.name for t in sess.tools}:
            offered = ", ".join(t.name for t in sess.tools) or "none"
            raise _fail(f"MCP server {server!r} has no tool {tool!r} (it offers: {offered})")
        try:
            echo(hub.run(call_mcp_tool(hub, server, tool, arguments)))
        except ToolFailure as exc:
            raise _fail(str(exc)) from None
    finally:
        hub.close()
