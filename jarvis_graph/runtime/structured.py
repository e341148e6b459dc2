"""Ask the run's model for a structured decision (a pydantic object), failing softly."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

T = TypeVar("T", bound=BaseModel)
QUOTED_REPLY = 80
"""Characters of a reply that was not JSON quoted in the reason."""


def ask_structured(
    model: BaseChatModel, schema: type[T], instructions: str, request: str
) -> tuple[T | None, str]:
    """Ask ``model`` to fill ``schema``.

    Returns:
        The object, or ``None`` and the reason in one line ("its reply was not JSON: ..."):
        the caller says what it was asking for and what it does instead (a safe default,
        never a failed run). Nothing is logged here.
    """
    try:
        structured = model.with_structured_output(schema)
        request_messages = [SystemMessage(content=instructions), HumanMessage(content=request)]
        out = structured.invoke(request_messages)
        if isinstance(out, dict):
            out = schema.model_validate(out)
    except GraphBubbleUp:
        raise
    except ValidationError as exc:
        return None, invalid_reply(exc)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, f"the call failed: {type(exc).__name__}" + (f": {first}" if first else "")
    if not isinstance(out, schema):
        return None, f"its reply was not a {schema.__name__}"
    return out, ""


def invalid_reply(exc: ValidationError) -> str:
    """What was wrong with a reply that did not fit the schema, in one line."""
    errors = exc.errors()
    if errors and errors[0]["type"] == "json_invalid":
        reply = " ".join(str(errors[0].get("input", "")).split())
        if len(reply) > QUOTED_REPLY:
            reply = reply[:QUOTED_REPLY] + "..."
        return f"its reply was not JSON: {reply!r}"
    missing = [".".join(map(str, e["loc"])) for e in errors if e["type"] == "missing"]
    if missing:
        return f"its reply has no {', '.join(missing)}"
    first = errors[0] if errors else None
    if first is None:
        return "its reply did not fit the schema"
    where = ".".join(map(str, first["loc"])) or "the reply"
    return f"its reply's {where} is wrong: {first['msg']}"
