"""Ask the run's model for a structured decision (a pydantic object), failing softly."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)


def ask_structured(
    model: BaseChatModel, schema: type[T], instructions: str, request: str
) -> tuple[T | None, str]:
    """Ask ``model`` to fill ``schema``.

    Returns:
        The object, or ``None`` and a readable reason when the model could not give one
        (the callers then fall back to a safe default instead of failing the run).
    """
    try:
        structured = model.with_structured_output(schema)
        request_messages = [SystemMessage(content=instructions), HumanMessage(content=request)]
        out = structured.invoke(request_messages)
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
