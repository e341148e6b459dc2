"""``jarvis graph draw``: the topology of a graph, as Mermaid or ASCII."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(help="Inspect the graphs.", no_args_is_help=True)

GRAPHS = {
    "agent": "jarvis_graph.graphs.agent",
    "planner": "jarvis_graph.graphs.planner",
    "multi_agent": "jarvis_graph.graphs.multi_agent",
    "code_agent": "jarvis_graph.graphs.code_agent",
}


@app.command("draw")
def draw(
    name: str = typer.Argument("agent", help=f"Graph name: {', '.join(GRAPHS)}."),
    xray: bool = typer.Option(False, "--xray", help="Expand subgraphs."),
    fmt: str = typer.Option("mermaid", "--format", "-f", help="mermaid or ascii."),
) -> None:
    """Print a graph's drawing."""
    if name not in GRAPHS:
        typer.echo(f"error: unknown graph {name!r}; known graphs: {', '.join(GRAPHS)}", err=True)
        raise typer.Exit(2)
    if fmt not in ("mermaid", "ascii"):
        typer.echo(f"error: --format must be mermaid or ascii, not {fmt!r}", err=True)
        raise typer.Exit(2)
    graph = importlib.import_module(GRAPHS[name]).graph.get_graph(xray=xray)
    typer.echo(graph.draw_mermaid(with_styles=False) if fmt == "mermaid" else graph.draw_ascii())
