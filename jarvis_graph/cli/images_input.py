"""``jarvis run --image PATH``: a task with images, for a vision model or through OCR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape

from jarvis_graph.cli.driver import console
from jarvis_graph.runtime.task_input import task_with_images


def task_input(ctx: dict[str, Any], task: str, paths: list[Path]) -> dict[str, Any]:
    """The graph input of ``task`` with the images at ``paths`` (see ``task_with_images``).

    Raises:
        ImageError: A file that is not an image that can be sent, or a model without
            vision and no tesseract.
        ConfigError: The config cannot be read.
    """
    graph_input, note = task_with_images(ctx, task, paths)
    if note:
        console.print(f"[yellow]{escape(note)}[/]")
    return graph_input
