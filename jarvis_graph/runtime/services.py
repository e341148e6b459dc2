"""One services object per run: settings, tools, models, events, composed from features.

:class:`RunServices` is built once per run (one graph invocation), at its first node, and
kept on the run's context object, so every node reaches it through ``runtime.context``
with :func:`services_of`; no node rebuilds tools or models.
The features a run enables (:data:`FEATURES`) each add their tools, prompt section and
event subscribers; they know nothing of each other.
"""

from __future__ import annotations

import platform
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jarvis_graph.citations import DECLARES_TASK
from jarvis_graph.context import JarvisContext, resolve_settings, running_context
from jarvis_graph.events import EventBus, get_event_bus
from jarvis_graph.features.answer_check import AnswerCheck
from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.features.builtin import BuiltinTools
from jarvis_graph.features.chains import Chains
from jarvis_graph.features.code import CodeTools
from jarvis_graph.features.compute import Compute
from jarvis_graph.features.documents import Documents
from jarvis_graph.features.files import FileTools
from jarvis_graph.features.focused_answer import FocusedAnswer
from jarvis_graph.features.handoff import Handoff
from jarvis_graph.features.images import Images
from jarvis_graph.features.lessons import Lessons
from jarvis_graph.features.mcp import McpTools
from jarvis_graph.features.memory import Memory
from jarvis_graph.features.methodology import Methodology
from jarvis_graph.features.planner import Planner
from jarvis_graph.features.sub_agents import SubAgents
from jarvis_graph.features.task_graph import TaskGraph
from jarvis_graph.features.user_tools import UserTools
from jarvis_graph.features.web import Web
from jarvis_graph.marker import COMPLETE_MARKER
from jarvis_graph.platforms.registry import create_chat_model, resolve_platform
from jarvis_graph.prompts import CONTEXT_HEADING, load_prompt, tool_use_line
from jarvis_graph.tools.base import TOOL_ENV_ATTRIBUTE, ToolEnv
from jarvis_graph.tools.registry import group_patterns, in_group, skipped_note

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime
    from langgraph.store.base import BaseStore

    from jarvis_graph.config import Settings

FEATURES: tuple[Feature, ...] = (
    BuiltinTools(),
    FileTools(),
    Compute(),
    Memory(),
    Lessons(),
    Methodology(),
    TaskGraph(),
    CodeTools(),
    UserTools(),
    McpTools(),
    Web(),
    Images(),
    Documents(),
    SubAgents(),
    Planner(),
    Handoff(),
    FocusedAnswer(),
    AnswerCheck(),
    Chains(),
)
"""Every feature, in the order their tools, prompt sections and subscribers are added."""

_ATTRIBUTE = "_jarvis_services"
"""Where a run's services are kept on its context object (not a dataclass field)."""


class RunServices:
    """What the nodes of one run use, built once from the run's context.

    Args:
        ctx: The run context.
        store: The run's LangGraph store (``runtime.store``), if it has one.
        features: The features to compose (default: :data:`FEATURES`); each decides
            whether the run enables it.
    """

    def __init__(
        self,
        ctx: JarvisContext,
        store: BaseStore | None = None,
        features: Sequence[Feature] | None = None,
    ) -> None:
        self.context = ctx
        self.settings = resolve_settings(ctx)
        self.workspace = ctx.workspace_path()
        self.env = ToolEnv(self.workspace, self.settings, ctx.non_interactive)
        object.__setattr__(ctx, TOOL_ENV_ATTRIBUTE, self.env)  # tool calls of the run use it
        self._models: dict[
            tuple[str, tuple[str, ...] | None, str, tuple[str, ...] | None, bool], Any
        ] = {}
        self._chat: dict[str, tuple[int, BaseChatModel]] = {}
        self.store = store
        self.setup = RunSetup(
            ctx, self.settings, self.workspace, self.chat_model, self._tools, store
        )
        self.features = [f for f in features or FEATURES if f.enabled(self.setup)]
        self.tools, self.problems = compose_tools(self.features, self.setup)
        self.unavailable = {
            name: hint
            for feature in self.features
            for name, hint in feature.unavailable(self.setup).items()
            if name not in self.tools
        }
        """Tools this run lacks that a setting would add, with how to turn each on."""
        channel = get_event_bus(ctx.event_bus, self.settings.after_tool_call_cb_dirs)
        self.bus = EventBus(channel=channel)  # the run's subscribers, then the caller's
        for feature in self.features:
            for event, callback in feature.subscribers(self.setup):
                self.bus.subscribe(event, callback)

    def _tools(self) -> dict[str, BaseTool]:
        return self.tools

    def chat_model(self, role: str = "normal") -> BaseChatModel:
        """The run's chat model for ``role``, not bound to tools (built once per run).

        A scripted model's script that was rewritten since is read again.
        """
        spec = self.settings.model_for(role)
        stamp = 0
        if resolve_platform(spec) == "scripted" and spec.script and Path(spec.script).is_file():
            stamp = Path(spec.script).stat().st_mtime_ns
        cached = self._chat.get(role)
        if cached is None or cached[0] != stamp:
            model = create_chat_model(spec)
            if "workspace" in type(model).model_fields:  # a model that reads the workspace
                model = model.model_copy(update={"workspace": str(self.workspace)})
            cached = self._chat[role] = (stamp, model)
            self._models = {k: v for k, v in self._models.items() if k[0] != role}
        return cached[1]

    def model(
        self,
        role: str = "normal",
        tool_names: Sequence[str] | None = None,
        tool_choice: Literal["auto", "none", "required"] = "auto",
        only: Sequence[str] | None = None,
        one_call: bool = False,
    ) -> Runnable:
        """The chat model for ``role`` bound to the run's tools (built once per run).

        Args:
            role: Model role in the active group (``normal``, ``cheap``).
            tool_names: Bind only these tools (unknown names are skipped; ``()``: none);
                ``None`` binds every tool of the run.
            tool_choice: ``none``: the reply must be an answer (the tools are shown, not
                callable); ``required``: the reply must call a tool; ``auto``: either.
            only: This turn may call only these of them. A model that can limit its calls
                by name (the local platform: a prompt listing other tools would be
                processed again) is shown all of ``tool_names``; any other is bound to
                these alone.
            one_call: The reply makes one call at most (``parallel_tool_calls=False``).
        """
        base = self.chat_model(role)
        names = None if tool_names is None else tuple(n for n in tool_names if n in self.tools)
        limited = None if only is None else tuple(n for n in only if n in self.tools)
        key = (role, names, tool_choice, limited, one_call)
        bound = self._models.get(key)
        if bound is None:
            chosen = list(self.tools) if names is None else list(names)
            extra: dict[str, Any] = {} if tool_choice == "auto" else {"tool_choice": tool_choice}
            if one_call:
                extra["parallel_tool_calls"] = False
            if limited and getattr(base, "limits_calls_by_name", False):
                extra["callable_tools"] = list(limited)
            elif limited:
                chosen = list(limited)
            tools = [self.tools[name] for name in chosen]
            bound = self._models[key] = base.bind_tools(tools, **extra) if tools else base
        return bound

    def tools_marked(self, *keys: str) -> list[str]:
        """The run's tools whose metadata sets one of ``keys`` (``DECLARES_TASK`` ...)."""
        return [n for n, t in self.tools.items() if any((t.metadata or {}).get(k) for k in keys)]

    def system_prompt(self, task: str = "") -> str:
        """The system prompt: the base text and each feature's section, then the context.

        The context (under ``CONTEXT_HEADING``) is what changes from task to task: the
        workspace, the date and each feature's context section for ``task``. It comes last
        so that the text above it is the same for every task of a configuration.
        """
        ctx = self.context
        interaction = (
            "- Nobody is watching this run: do not ask questions, decide and state your "
            "assumptions."
            if ctx.non_interactive
            else "- Use ask_user when you need information only the user has."
        )
        spec = self.settings.model_for("normal")
        prompt = load_prompt("system").format(
            tool_use=tool_use_line(resolve_platform(spec), spec.tool_protocol),
            interaction=interaction,
            finish=_finish_line(self.tools_marked(DECLARES_TASK)),
            tool_names=", ".join(sorted(self.tools)),
        )
        sections = [f.prompt_section(self.setup, task) for f in self.features]
        if ctx.role_prompt:
            sections.insert(0, f"\n# Your role\n{ctx.role_prompt.strip()}\n")
        context = load_prompt("context").format(
            workspace=self.workspace, date=time.strftime("%Y-%m-%d"), os=platform.system()
        )
        varying = [f.context_section(self.setup, task) for f in self.features]
        # what changes from task to task comes last: the part above it is a stable prefix
        parts = [prompt, *sections, f"\n{CONTEXT_HEADING}\n{context}", *varying]
        return "".join(s if s.endswith("\n") else f"{s}\n" for s in parts if s)


def _finish_line(declaring: list[str]) -> str:
    """How the prompt says a task starts and ends (declared, answered in words) or ends."""
    if declaring:
        return (
            f"- Call {declaring[0]} once, first in each task. When the task is done, give "
            "the final answer in plain words."
        )
    return (
        "- When the task is done, give the final answer in plain text and end it with "
        f"{COMPLETE_MARKER}"
    )


def compose_tools(
    features: Sequence[Feature], setup: RunSetup
) -> tuple[dict[str, BaseTool], list[str]]:
    """The run's tools by name, and what was left out and why.

    Features add tools in order; a name already taken is left out with a note. The active
    tool group then applies, and each feature has the last word (``select_tools``).

    Raises:
        ConfigError: The tool group is not defined.
    """
    patterns = group_patterns(setup.settings)
    tools: dict[str, BaseTool] = {}
    problems: list[str] = []
    for feature in features:
        for tool in feature.tools(setup):
            if tool.name in tools:
                problems.append(skipped_note(tool))
            else:
                tools[tool.name] = tool
    tools = {name: tool for name, tool in tools.items() if in_group(name, patterns)}
    if setup.context.only_tools is not None:
        only = setup.context.only_tools.split(",")
        tools = {name: tool for name, tool in tools.items() if in_group(name, only)}
    for feature in features:
        tools = feature.select_tools(tools, setup)
    # asked last: a feature may find its problems while choosing tools (chains)
    problems = [p for feature in features for p in feature.problems(setup)] + problems
    return tools, problems


def services_of(runtime: Runtime[JarvisContext] | None, *, starting: bool = False) -> RunServices:
    """The services of the run ``runtime`` belongs to, built at its first node.

    A run is one invocation of a graph (its ``RunControl``; subgraphs share their parent's),
    so a resumed thread builds its services again at its first node, and the planner's
    nodes and the agent inside it share one services object.

    Args:
        runtime: The node's runtime.
        starting: A run starts here (``start_task``); without a run identity from
            LangGraph, this is what tells one run from the next.
    """
    ctx = context_of(runtime)
    run = getattr(runtime, "control", None)
    with _build_lock:
        held = ctx.__dict__.get(_ATTRIBUTE)
        if held is None or held[0] is not run or (run is None and starting):
            held = (run, RunServices(ctx, getattr(runtime, "store", None)))
            object.__setattr__(ctx, _ATTRIBUTE, held)
        return held[1]


_build_lock = threading.RLock()


def context_of(runtime: Runtime[JarvisContext] | None) -> JarvisContext:
    """The run context (LangGraph turns a dict, as ``langgraph dev`` sends it, into one).

    A run without a context uses one default context object per working directory, so
    its nodes still share one services object.
    """
    ctx: Any = getattr(runtime, "context", None)
    if isinstance(ctx, dict):  # a caller that bypassed the graph's coercion
        return JarvisContext(**ctx)
    if isinstance(ctx, JarvisContext):
        return ctx
    cwd = str(Path.cwd())
    default = _defaults.get(cwd)
    if default is None:
        default = _defaults.setdefault(cwd, JarvisContext())
    return default


_defaults: dict[str, JarvisContext] = {}


def current_settings() -> Settings:
    """Settings of the graph run in progress, as its services read them at its first node.

    Routers get no runtime; outside a run (``update_state``) the settings are resolved now.
    """
    services = current_services()
    return services.settings if services is not None else resolve_settings(current_context())


def current_services() -> RunServices | None:
    """The services of the graph run in progress, for routers (which get no runtime).

    ``None`` outside a run, and in ``update_state``, where no node has built them.
    """
    # deferred: langgraph loads only when a graph runs
    from langgraph.runtime import get_runtime

    try:
        runtime: Any = get_runtime()
    except RuntimeError:
        return None
    held = context_of(runtime).__dict__.get(_ATTRIBUTE)
    if held is not None and held[0] is runtime.control:
        return held[1]  # type: ignore[no-any-return]
    return None


def current_context() -> JarvisContext:
    """The context of the graph run in progress.

    Defaults outside a run, and in ``update_state``, where routers get no runtime.
    """
    return running_context() or context_of(None)
