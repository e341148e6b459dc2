"""``jarvis ui``: the local web console, in front of the project's LangGraph API server."""

from __future__ import annotations

from pathlib import Path

import typer

from jarvis_graph.cli import options as o
from jarvis_graph.cli.visible import echo

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def ui(
    port: int = typer.Option(8024, "--port", "-p", help="Port of the console."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow --host to be an address other machines reach."
    ),
    api: str = typer.Option(
        "", "--api", help="Use this running LangGraph API server (langgraph dev, jarvis serve)."
    ),
    open_browser: bool = typer.Option(False, "--open", help="Open the console in a browser."),
    workspace: Path | None = o.Workspace,
) -> None:
    """Serve the web console: chat, approvals, sessions, memory, scan reports, graphs.

    Starts a LangGraph API server for the project (``langgraph dev`` on a free loopback
    port, accepting only this console) unless --api names one (its token, if it needs one,
    in JARVIS_API_TOKEN), and prints the console's address with its one-time token.
    """
    import secrets

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.ui.launch import ApiServerError, api_server, serve_console

    if host not in LOOPBACK and not allow_remote:
        typer.echo(
            f"error: --host {host} lets other machines reach the console; add --allow-remote "
            "if that is what you want",
            err=True,
        )
        raise typer.Exit(2)
    ws = (workspace or Path.cwd()).resolve()
    token = secrets.token_urlsafe(24)
    try:
        with api_server(ws, api) as started:
            url = f"http://{'127.0.0.1' if host in LOOPBACK else host}:{port}/?token={token}"
            typer.echo(f"Jarvis console: {url}")
            typer.echo(f"LangGraph API: {started.url} · workspace {ws} · Ctrl-C stops")
            if host not in LOOPBACK:
                typer.echo(
                    f"warning: listening on {host}: anyone who can reach it and has the token "
                    "can run tools in this workspace",
                    err=True,
                )
            if open_browser:
                import webbrowser

                webbrowser.open(url)
            serve_console(started, token, ws, host, port)
    except ApiServerError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
