"""Ask the run's model for a structured decision (a pydantic object), failing softly."""

from __future__ import annotations

import logging
from typing import TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.platforms.registry import create_chat_model

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


def ask_structured(
    ctx: JarvisContext, schema: type[T], instructions: str, request: str, role: str = "normal"
) -> tuple[T | None, str]:
    """Ask the ``role`` model to fill ``schema``.

    Returns:
        The object, or ``None`` and a readable reason when the model could not give one
        (the callers then fall back to a safe default instead of failing the run).
    """
    spec = resolve_settings(ctx).model_for(role)
    try:
        model = create_chat_model(spec).with_structured_output(schema)
        out = model.invoke([SystemMessage(content=instructions), HumanMessage(content=request)])
    except GraphBubbleUp:
        raise
    except Exception as exc:
        logger.warning("structured %s call failed: %s", schema.__name__, exc)
        return None, f"the model gave no {schema.__name__}: {type(exc).__name__}: {exc}"
    if isinstance(out, dict):
        try:
            out = schema.model_validate(out)
        except ValueError as exc:
            return None, f"the model's {schema.__name__} was not valid: {exc}"
    if not isinstance(out, schema):
        return None, f"the model gave no {schema.__name__}"
    return out, ""
