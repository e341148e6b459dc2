"""A task with images as graph input, for a vision model or through OCR.

Shared by ``jarvis run --image``, ``@pic.png`` in ``jarvis chat`` and the web console's
attachments, so every front end sends images the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.images import ImageError, image_part, ocr_text
from jarvis_graph.platforms.registry import resolve_platform


def task_with_images(
    ctx: dict[str, Any], task: str, paths: list[Path]
) -> tuple[dict[str, Any], str | None]:
    """The graph input of ``task`` with the images at ``paths``, and a note for the user.

    A model that takes images gets them as content parts of the task message; another
    gets the text ``tesseract`` reads in them (the note says so), or the task is refused.

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
        return {"task": task, "messages": [HumanMessage(content=content)]}, None
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
    note = f"the model {name} does not take images: sending the text tesseract read in them"
    return {"task": "\n\n".join([task, *texts])}, note
