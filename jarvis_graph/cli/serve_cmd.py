"""``jarvis serve``: the project's graphs behind LangGraph's API server, shared by workers."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from jarvis_graph.cli.visible import echo


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(2024, "--port", "-p", help="Port to listen on."),
    database_url: str = typer.Option(
        "",
        "--database-url",
        help="PostgreSQL for runs, threads and checkpoints.",
        show_default="$JARVIS_CHECKPOINT_URL",
    ),
    redis_url: str = typer.Option(
        "",
        "--redis-url",
        help="Redis for run streams and worker heartbeats.",
        show_default="$JARVIS_REDIS_URL",
    ),
    jobs: int = typer.Option(10, "--jobs", "-j", help="Runs one worker process runs at once."),
    workers: int = typer.Option(1, "--workers", help="Worker processes on this port."),
    heartbeat: float = typer.Option(
        10.0, "--heartbeat", help="Seconds between a run's heartbeats (a dead worker's runs move)."
    ),
    config: str = typer.Option(
        "langgraph.json", "--config", "-c", help="The graphs to serve (langgraph.json)."
    ),
    allow_unauthenticated: bool = typer.Option(
        False,
        "--allow-unauthenticated",
        help="Listen on a non-loopback --host without a token (JARVIS_API_TOKEN).",
    ),
) -> None:
    """Serve the graphs to LangGraph's SDK and Studio, on PostgreSQL and Redis.

    Start it on several machines or ports with one database and one Redis: the workers
    share assistants, threads, runs and memory; a dead worker's runs go to another.
    Every request needs the token of JARVIS_API_TOKEN (header x-api-key) when it is set;
    a --host other than loopback needs one, or --allow-unauthenticated.
    Needs the server environment: make serve-env.
    """
    # deferred: the server's packages are heavy, and only this command needs them
    from jarvis_graph.serve import ServeError, ServeOptions
    from jarvis_graph.serve import serve as run_serve

    options = ServeOptions(
        config=Path(config),
        database_url=database_url or os.environ.get("JARVIS_CHECKPOINT_URL", ""),
        redis_url=redis_url or os.environ.get("JARVIS_REDIS_URL", ""),
        host=host,
        port=port,
        jobs=jobs,
        workers=workers,
        heartbeat=heartbeat,
        allow_unauthenticated=allow_unauthenticated,
    )
    try:
        run_serve(options)
    except ServeError as exc:
        echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
