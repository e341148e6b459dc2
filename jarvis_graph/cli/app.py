"""The ``jarvis`` typer app: wires the command groups together.

Nothing here imports langchain or langgraph, so ``jarvis --help`` stays fast.
"""

from __future__ import annotations

import typer

from jarvis_graph import __version__
from jarvis_graph.cli import (
    agents_cmd,
    chains_cmd,
    code_cmd,
    config_cmd,
    docs_cmd,
    doctor_cmd,
    feedback_cmd,
    graph_cmd,
    mcp_cmd,
    memory_cmd,
    methodology_cmd,
    models_cmd,
    multi_cmd,
    run_cmd,
    sec_cmd,
    serve_cmd,
    sessions_cmd,
    tasks_cmd,
    tools_cmd,
    trust_cmd,
    ui_cmd,
)
from jarvis_graph.cli.visible import echo

app = typer.Typer(
    name="jarvis",
    help="Jarvis Graph: an agent that works on your tasks, as a LangGraph graph.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(run_cmd.run)
app.command("chat")(run_cmd.chat)
app.command("multi")(multi_cmd.multi)
app.command("code")(code_cmd.code)
app.command("serve")(serve_cmd.serve)
app.command("feedback")(feedback_cmd.feedback)
app.command("ui")(ui_cmd.ui)
app.command("trust")(trust_cmd.trust)
app.command("doctor")(doctor_cmd.doctor)
app.add_typer(sessions_cmd.app, name="sessions")
app.add_typer(config_cmd.app, name="config")
app.add_typer(models_cmd.app, name="models")
app.add_typer(graph_cmd.app, name="graph")
app.add_typer(tools_cmd.app, name="tools")
app.add_typer(mcp_cmd.app, name="mcp")
app.add_typer(memory_cmd.app, name="memory")
app.add_typer(sec_cmd.app, name="sec")
app.add_typer(methodology_cmd.app, name="methodology")
app.add_typer(tasks_cmd.app, name="tasks")
app.add_typer(agents_cmd.app, name="agents")
app.add_typer(docs_cmd.app, name="docs")
app.add_typer(chains_cmd.app, name="chains")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jarvis-graph {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Jarvis Graph command line."""


def main() -> None:
    """Console-script entry point.

    A session or shared memory store that cannot be opened or read, and a config that
    cannot be used, are a clear error in every command, not a traceback (the commands
    catch them where they can say more).
    """
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpoint_parts import CheckpointError
    from jarvis_graph.memory.records import MemoryStoreError

    try:
        app()
    except (CheckpointError, MemoryStoreError) as exc:
        echo(f"error: {exc}")  # may quote a store path, a link target, a server's answer
        raise SystemExit(1) from None
    except ValueError as exc:
        # a broken config (a project's file holds anything) where a command does not catch
        # it
        # deferred: the module is loaded when its error was raised, so this costs nothing
        from jarvis_graph.config import ConfigError

        if not isinstance(exc, ConfigError):
            raise
        echo(f"error: {exc}", err=True)
        raise SystemExit(1) from None
