"""Run one tool call and turn every failure into text for the model.

Shared by the ``run_tools`` node and the ``run_task_graph`` tool, so a task of a plan fails
the same way a call of the model does. Every call passes here, so here an argument the
tool's schema does not name is refused: pydantic models drop unknown fields and schemas
given as JSON pass them on unchecked, so a misspelt ``timout`` would otherwise be ignored
without a word, and a tool would receive keys it never declared.

A built-in tool made with ``response_format="content_and_artifact"`` is called with a
tool call, so LangChain hands back its artifact (see :mod:`jarvis_graph.tools.artifacts`);
only artifacts of that module are kept, so the value stored with the message is always
plain data. Any other tool is called with its arguments, as before, and has none.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, ParentCommand
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from jarvis_graph.tools import artifacts
from jarvis_graph.tools.artifacts import ARTIFACT_KIND, Artifact
from jarvis_graph.tools.base import ToolFailure

logger = logging.getLogger(__name__)


class ToolOutcome(NamedTuple):
    """What one tool call gave: the text for the model, its status and its artifact."""

    text: str
    status: str
    """``success`` or ``error``."""
    artifact: Artifact | None = None
    """What the call did, as data (``None``: a tool without artifacts, or a call that
    failed before the tool ran)."""


def invoke_tool(
    tool: BaseTool, args: dict[str, Any], config: RunnableConfig, call_id: str = ""
) -> ToolOutcome:
    """Run ``tool`` with ``args``.

    Returns:
        The text for the model, the status and the call's artifact.

    Raises:
        ParentCommand: The tool handed the turn over (a hand-off); the graph above routes it.
    """
    unknown, accepted = unknown_arguments(tool, args)
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        text = (
            f"Invalid arguments for {tool.name}: it has no parameter {names}. Its parameters: "
            f"{', '.join(accepted) or 'none'}. Send the call again with those only."
        )
        return ToolOutcome(text, "error")
    if call_id:  # execute_script records its process group under the call's id
        config = merge_configs(config, {"metadata": {"jarvis_tool_call_id": call_id}})
    kind = str((tool.metadata or {}).get(ARTIFACT_KIND, ""))
    artifact: Artifact | None = None
    try:
        if tool.response_format == "content_and_artifact":
            # called as a tool call: LangChain returns a ToolMessage carrying the artifact
            call_as = call_id or f"jarvis-{uuid.uuid4().hex}"  # a plan's task has no id
            call = ToolCall(name=tool.name, args=args, id=call_as, type="tool_call")
            result = tool.invoke(call, config)
        else:
            result = tool.invoke(args, config)
    except GraphBubbleUp:
        raise
    except ToolFailure as exc:
        return ToolOutcome(f"Error: {exc}", "error", artifacts.failed(kind, str(exc)))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        expected = list(tool.args)
        text = f"Invalid arguments for {tool.name}: {problems}. Expected parameters: {expected}"
        return ToolOutcome(text, "error")
    except Exception as exc:
        logger.exception("tool %s raised", tool.name)
        error = f"tool {tool.name} failed: {type(exc).__name__}: {exc}"
        return ToolOutcome(f"Error: {error}", "error", artifacts.failed(kind, error))
    if isinstance(result, ToolMessage):
        if artifacts.is_artifact(result.artifact):  # a user tool's own artifact is not kept
            artifact = result.artifact
        result = result.content
    if isinstance(result, Command) and result.graph == Command.PARENT:
        raise ParentCommand(result)  # a hand-off: the graph above routes it
    return ToolOutcome(result if isinstance(result, str) else str(result), "success", artifact)


def unknown_arguments(tool: BaseTool, args: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The keys of ``args`` that ``tool``'s schema does not have, and the ones it has.

    A schema that says it takes more (``additionalProperties`` in JSON Schema, a pydantic
    model with ``extra="allow"``) accepts every key.
    """
    schema = tool.args_schema
    if isinstance(schema, dict):
        if schema.get("additionalProperties") not in (None, False):
            return [], []
        accepted = list(schema.get("properties") or {})
    else:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            if schema.model_config.get("extra") == "allow":
                return [], []
        accepted = list(tool.args)
    return [key for key in args if key not in accepted], accepted
