"""Images: ``analyze_image`` for runs whose model takes images.

The tool sends a workspace image (confined like every file tool, scaled down as
:mod:`jarvis_graph.images` does) with a question to the run's own model and returns its
answer. Runs whose model does not take images do not get it.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup, run_tool
from jarvis_graph.images import ImageError, image_part
from jarvis_graph.secrets import is_secret_path
from jarvis_graph.tools.base import ToolFailure, ToolInputError, current_env


class Images(Feature):
    """Adds ``analyze_image`` when the run's model takes images (``vision`` or its name)."""

    name = "images"
    settings = ("image_max_side", "image_max_bytes")

    def enabled(self, setup: RunSetup) -> bool:
        """On for a normal model that takes images (never the embedded one)."""
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        spec = setup.settings.model_for("normal")
        return resolve_platform(spec) not in ("local", "scripted") and spec.takes_images()

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The ``analyze_image`` tool, bound to this run's model."""

        def analyze_image(path: str, question: str) -> str:
            """Look at an image of the workspace (a screenshot, a chart) and answer about it.

            Args:
                path: The image file, relative to the workspace root (PNG, JPEG, GIF, WebP).
                question: What to find out from the image.
            """
            env = current_env()
            full = env.resolve(path)
            inside = full.is_relative_to(env.workspace)
            if is_secret_path(str(full.relative_to(env.workspace)) if inside else full.name):
                msg = f"{path} looks like a secret file; it is not read"
                raise ToolInputError(msg)
            settings = setup.settings
            try:
                part = image_part(full, settings.image_max_side, settings.image_max_bytes)
            except ImageError as exc:
                raise ToolFailure(str(exc)) from None
            message = HumanMessage(content=[{"type": "text", "text": question}, part])
            reply = setup.chat_model("normal").invoke([message])
            return str(reply.text).strip() or "(the model said nothing about the image)"

        return [run_tool(analyze_image, parse_docstring=True)]
