"""``typer.echo`` for untrusted text: control characters shown as escapes, never obeyed.

What is escaped and why: :mod:`jarvis_graph.visible_text`. The CLI's own colours are
added after escaping (see ``render.TerminalConsole``). Light on purpose (no rich):
commands that print with ``typer.echo`` use :func:`echo`.
"""

from __future__ import annotations

import typer

from jarvis_graph.visible_text import visible

__all__ = ["echo", "visible"]


def echo(message: object = "", err: bool = False) -> None:
    """``typer.echo`` for text that holds untrusted parts (see :func:`visible`)."""
    typer.echo(visible(str(message)), err=err)
