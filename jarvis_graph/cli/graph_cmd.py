"""``jarvis graph draw``: the topology of a graph, as Mermaid or ASCII."""

from __future__ import annotations

import importlib
import shutil
import textwrap
from typing import Any

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
    width: int | None = typer.Option(
        None,
        "--width",
        min=0,
        help="Columns the ASCII drawing may take (default: the terminal's; 0: no limit).",
    ),
) -> None:
    """Print a graph's drawing.

    An ASCII drawing wider than ``--width`` is printed as its list of edges instead.
    """
    if name not in GRAPHS:
        typer.echo(f"error: unknown graph {name!r}; known graphs: {', '.join(GRAPHS)}", err=True)
        raise typer.Exit(2)
    if fmt not in ("mermaid", "ascii"):
        typer.echo(f"error: --format must be mermaid or ascii, not {fmt!r}", err=True)
        raise typer.Exit(2)
    graph = importlib.import_module(GRAPHS[name]).graph.get_graph(xray=xray)
    if fmt == "mermaid":
        typer.echo(graph.draw_mermaid(with_styles=False))
        return
    limit = shutil.get_terminal_size().columns if width is None else width
    typer.echo(_ascii(graph, limit))


def _ascii(graph: Any, limit: int) -> str:
    """The box drawing when it fits in ``limit`` columns (0: any), else the edges, wrapped."""
    drawing = [line.rstrip() for line in graph.draw_ascii().splitlines()]
    wide = max((len(line) for line in drawing), default=0)
    if not limit or wide <= limit:
        return "\n".join(drawing)
    note = (
        f"(the drawing is {wide} columns wide, more than {limit}: its edges instead; "
        "--width 0 draws it anyway, --format mermaid for a viewer)"
    )
    out = textwrap.wrap(note, limit)
    targets: dict[tuple[str, bool], list[str]] = {}
    for edge in graph.edges:
        targets.setdefault((edge.source, bool(edge.conditional)), []).append(edge.target)
    for node in graph.nodes:
        for conditional in (False, True):
            if (node, conditional) in targets:
                head = f"{node} {'-.->' if conditional else '-->'} "
                text = head + ", ".join(targets[node, conditional])
                indent = " " * min(len(head), limit // 2)
                out += textwrap.wrap(text, limit, subsequent_indent=indent)
    out.append("(--> always, -.-> depending on the state)")
    return "\n".join(out)
