"""``jarvis run --image PATH``: a task with images, for a vision model or through OCR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from jarvis_graph.cli.driver import console
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.images import ImageError, image_part, ocr_text
from jarvis_graph.platforms.registry import resolve_platform


def task_input(ctx: dict[str, Any], task: str, paths: list[Path]) -> dict[str, Any]:
    """The graph input of ``task`` with the images at ``paths``.

    A model that takes images gets them as content parts of the task message; another
    gets the text ``tesseract`` reads in them (said on screen), or the run is refused.

    Raises:
        ImageError: A file that is not an image that can be sent, or a model without
            vision and no tesseract.
        ConfigError: The config cannot be read.
    """
    settings = resolve_settings(JarvisContext(**ctx))
    spec = settings.model_for("normal")
    parts = [
        image_part(p.expanduser().resolve(), settings.image_max_side, settings.image_max_bytes)
        for p in paths
    ]
    platform = resolve_platform(spec)  # "auto" with no key is the embedded model
    if platform not in ("local", "scripted") and spec.takes_images():
        content: list[str | dict[str, Any]] = [{"type": "text", "text": task}, *parts]
        return {"task": task, "messages": [HumanMessage(content=content)]}
    name = f"{platform}:{spec.model or 'default'}"
    texts = []
    for path in paths:
        text = ocr_text(path.expanduser().resolve())
        if text is None:
            msg = (
                f"the model {name} does not take images (set `vision: true` in its model "
                "config if it does, or choose a vision model), and tesseract is not installed "
                "to read the text in them"
            )
            raise ImageError(msg)
        texts.append(
            f"Text read from the image {path.name} by OCR (you cannot see the image):\n"
            f"{text or '(no text found)'}"
        )
    console.print(
        f"[yellow]the model {name} does not take images: sending the text tesseract read in them[/]"
    )
    return {"task": "\n\n".join([task, *texts])}
