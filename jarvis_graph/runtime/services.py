"""Per-process services looked up by the names in the run context, and cached."""

from __future__ import annotations

import functools
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jarvis_graph.config import ModelSpec
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import EventBus, get_event_bus
from jarvis_graph.marker import COMPLETE_MARKER
from jarvis_graph.memory.hooks import install_memory_hooks
from jarvis_graph.multi.handoff import agent_prompt, agent_tools
from jarvis_graph.platforms.registry import create_chat_model, resolve_platform
from jarvis_graph.prompts import load_prompt, tool_use_line
from jarvis_graph.runtime.registry import (
    ToolRegistry,
    get_registry,
    get_tools,
    group_patterns,
    in_group,
)
from jarvis_graph.tools.code_tools import CODE_TOOLS

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime


def context_of(runtime: Runtime[JarvisContext] | None) -> JarvisContext:
    """The run context, whatever form the caller passed it in."""
    ctx: Any = getattr(runtime, "context", None)
    if isinstance(ctx, dict):
        return JarvisContext(**ctx)
    return ctx if isinstance(ctx, JarvisContext) else JarvisContext()


def current_context() -> JarvisContext:
    """The context of the graph run in progress.

    Defaults outside a run, and in ``update_state``, where routers get no runtime.
    """
    from langgraph.runtime import get_runtime

    runtime: Any
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a runnable context
        runtime = None
    return context_of(runtime)


def bus_for(ctx: JarvisContext) -> EventBus:
    """The event bus named in the context.

    It has the configured after-tool-call callbacks and the memory hooks
    (force_save_memory, episodic archive).
    """
    bus = get_event_bus(ctx.event_bus, resolve_settings(ctx).after_tool_call_cb_dirs)
    install_memory_hooks(bus, normal_model)
    return bus


def normal_model(ctx: JarvisContext) -> BaseChatModel:
    """The run's ``normal`` chat model, not bound to tools."""
    return create_chat_model(resolve_settings(ctx).model_for("normal"))


def tool_registry_for(ctx: JarvisContext) -> ToolRegistry:
    """The tool registry of the run's workspace and settings (all groups)."""
    return get_registry(resolve_settings(ctx), ctx.workspace_path())


def tools_for(ctx: JarvisContext) -> dict[str, BaseTool]:
    """Tools of the run, by name.

    The code tool set adds the editing tools; a multi-agent run gets the agent's tools and
    ``send_message``.
    """
    settings = resolve_settings(ctx)
    tools = {t.name: t for t in get_tools(settings, ctx.workspace_path())}
    if ctx.toolset == "code":
        patterns = group_patterns(settings)
        tools.update({t.name: t for t in CODE_TOOLS if in_group(t.name, patterns)})
    if ctx.agent and ctx.agents_file:
        tools = agent_tools(ctx.agents_file, ctx.agent, tools)
    return tools


def model_for(
    ctx: JarvisContext, role: str = "normal", tool_names: Sequence[str] | None = None
) -> Runnable[Any, Any]:
    """The chat model for ``role``, bound to the run's tools; cached per process.

    Args:
        ctx: The run context.
        role: Model role in the active group (``normal``, ``cheap``).
        tool_names: Bind only these tools (unknown names are skipped; ``()``: no tools);
            ``None`` binds every tool of the run.
    """
    spec = resolve_settings(ctx).model_for(role)
    stamp = 0
    if resolve_platform(spec) == "scripted" and spec.script and Path(spec.script).is_file():
        stamp = Path(spec.script).stat().st_mtime_ns  # a rewritten script is reloaded
    available = tools_for(ctx)
    wanted = available if tool_names is None else [n for n in tool_names if n in available]
    return _bound_model(spec.model_dump_json(), stamp, tuple(sorted(wanted)), ctx)


@functools.lru_cache(maxsize=16)
def _bound_model(
    spec_json: str, _stamp: int, tool_names: tuple[str, ...], ctx: JarvisContext
) -> Runnable[Any, Any]:
    model: BaseChatModel = create_chat_model(ModelSpec.model_validate_json(spec_json))
    if "workspace" in type(model).model_fields:  # a model that reads the workspace itself
        model = model.model_copy(update={"workspace": str(ctx.workspace_path())})
    tools = tools_for(ctx)
    return model.bind_tools([tools[name] for name in tool_names]) if tool_names else model


def system_prompt(ctx: JarvisContext) -> str:
    """The system prompt for a run in ``ctx``."""
    # deferred: the memory tiers load the vector store (numpy) only when a prompt is built
    from jarvis_graph.memory.tiers import memory_prompt

    interaction = (
        "- Nobody is watching this run: do not ask questions, decide and state your assumptions."
        if ctx.non_interactive
        else "- Use ask_user when you need information only the user has."
    )
    prompt = load_prompt("system") + (load_prompt("code") if ctx.toolset == "code" else "")
    spec = resolve_settings(ctx).model_for("normal")
    prompt = prompt.format(
        tool_use=tool_use_line(resolve_platform(spec), spec.tool_protocol),
        workspace=ctx.workspace_path(),
        date=time.strftime("%Y-%m-%d"),
        os=platform.system(),
        interaction=interaction,
        marker=COMPLETE_MARKER,
        tool_names=", ".join(sorted(tools_for(ctx))),
        memory=memory_prompt(ctx.workspace_path()),
    )
    if ctx.agent and ctx.agents_file:
        prompt = f"{prompt}\n{agent_prompt(ctx.agents_file, ctx.agent)}\n"
    return prompt
