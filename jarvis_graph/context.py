"""Per-run settings passed to graphs as ``context=``.

``langgraph dev`` sends the context as a plain dict; LangGraph turns it into
:class:`JarvisContext` because the class is a dataclass. Every field is optional:
``None`` means "take it from the merged config" (see :mod:`jarvis_graph.config`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.config import Settings, load_settings


@dataclass(frozen=True)
class JarvisContext:
    """Run-scoped settings. Strings and numbers only, so it stays hashable and serialisable."""

    workspace: str | None = None
    model_group: str | None = None
    platform: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    script: str | None = None
    confirm: str | None = None
    sandbox: str | None = None
    """Where the run's scripts run (``auto``, ``bwrap``, ``landlock``, ``off``; ``--sandbox``).
    Never set by an API caller (not in ``api_auth.REMOTE_CONTEXT_FIELDS``)."""
    max_iterations: int | None = None
    tool_group: str | None = None
    non_interactive: bool = False
    event_bus: str = "default"
    depth: int = 0
    """Nesting level of a planner child run (0: the task the user gave)."""
    plan_max_depth: int | None = None
    agents_file: str | None = None
    """Multi-agent runs: the agents YAML file and the agent this run acts as."""
    agent: str | None = None
    toolset: str = "agent"
    """``agent`` (the built-in tools) or ``code`` (adds edit_file, rewrite_file, search_code)."""
    only_tools: str | None = None
    """Only these tools: comma-separated names or globs (a sub-agent's, an agent
    definition's); ``None``: every tool the run would have."""
    role_prompt: str | None = None
    """An agent definition's instructions, added to the system prompt."""

    def workspace_path(self) -> Path:
        """The workspace root, resolved (current directory when unset)."""
        return Path(self.workspace or Path.cwd()).resolve()


def running_context() -> JarvisContext | None:
    """The context of the graph run this call belongs to (``None`` outside a run).

    Also ``None`` for a run given no context, or one that is not a :class:`JarvisContext`.
    """
    # deferred: langgraph loads only when a graph runs (the CLI starts without it)
    from langgraph.runtime import get_runtime

    try:
        ctx: Any = getattr(get_runtime(), "context", None)
    except RuntimeError:  # not inside a runnable context
        return None
    if isinstance(ctx, dict):
        return JarvisContext(**ctx)
    return ctx if isinstance(ctx, JarvisContext) else None


def resolve_settings(context: JarvisContext | dict[str, Any] | None) -> Settings:
    """Settings for a run: config files and env, overridden by the context's fields."""
    if isinstance(context, dict):
        context = JarvisContext(**context)
    return _resolve(context or JarvisContext())


def _resolve(context: JarvisContext) -> Settings:
    # Not cached: a run reads its settings once (its services keep them), and a
    # long-lived process (chat, ``langgraph dev``) sees edited config files at the next run.
    values = asdict(context)
    overrides: dict[str, Any] = {
        key: values[key]
        for key in (
            "model_group",
            "confirm",
            "sandbox",
            "max_iterations",
            "tool_group",
            "plan_max_depth",
        )
        if values[key] is not None
    }
    model = {
        key: values[key]
        for key in ("platform", "model", "base_url", "api_key_env", "script")
        if values[key] is not None
    }
    workspace = context.workspace_path()
    settings = load_settings(workspace, overrides=overrides or None)
    if model:
        group = settings.model_groups.get(settings.model_group, {})
        roles = {role: spec.model_copy(update=model) for role, spec in group.items()} or {
            "normal": settings.model_for("normal").model_copy(update=model)
        }
        groups = {**settings.model_groups, settings.model_group: roles}
        settings = settings.model_copy(update={"model_groups": groups})
    return _anchor_scripts(settings, workspace)


def _anchor_scripts(settings: Settings, workspace: Path) -> Settings:
    """Relative ``script:`` paths are relative to the workspace, not the process's cwd."""
    groups = {
        name: {
            role: spec.model_copy(update={"script": str(workspace / spec.script)})
            if spec.script and not Path(spec.script).is_absolute()
            else spec
            for role, spec in roles.items()
        }
        for name, roles in settings.model_groups.items()
    }
    return settings.model_copy(update={"model_groups": groups})
