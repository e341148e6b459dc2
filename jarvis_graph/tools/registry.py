"""Tools from outside the package: user tool folders and MCP servers.

A :class:`ToolRegistry` is built once per process for a workspace and its tool settings:
it holds the imported user tool files and the MCP sessions (server processes), which
outlive one run, and is closed with :func:`close_registries`. MCP tools get
``<server>__<tool>`` names (see :mod:`jarvis_graph.tools.naming`). Tool groups select a
subset of a run's tools by name or glob.
"""

from __future__ import annotations

import atexit
import fnmatch
import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool

from jarvis_graph.config import ConfigError, McpServerSpec, Settings, jarvis_home
from jarvis_graph.tools.mcp_config import mcp_servers
from jarvis_graph.tools.naming import SEPARATOR, clean
from jarvis_graph.tools.protected import arg_values
from jarvis_graph.tools.tool_repo import central_repo_dir, sync_central_repo
from jarvis_graph.tools.user_tools import load_tool_dirs

if TYPE_CHECKING:
    from jarvis_graph.tools.mcp_hub import McpHub

logger = logging.getLogger(__name__)


@dataclass
class ToolRegistry:
    """The user and MCP tools of a workspace, and the MCP sessions behind some of them."""

    user_tools: dict[str, BaseTool] = field(default_factory=dict)
    mcp_tools: dict[str, BaseTool] = field(default_factory=dict)
    user_problems: list[str] = field(default_factory=list)
    """User tool files left out and why."""
    mcp_problems: list[str] = field(default_factory=list)
    """MCP servers that did not start, and why."""
    hub: McpHub | None = None
    """The :class:`McpHub` holding the MCP sessions (``None`` without MCP servers)."""

    @property
    def tools(self) -> dict[str, BaseTool]:
        """The user tools, then the MCP tools, by name."""
        return {**self.user_tools, **self.mcp_tools}

    @property
    def problems(self) -> list[str]:
        """Everything that was left out, and why."""
        return [*self.user_problems, *self.mcp_problems]

    def close(self) -> None:
        """End the MCP sessions (stdio servers exit)."""
        if self.hub is not None:
            self.hub.close()
            self.hub = None


def user_tool_dirs(settings: Settings) -> list[Path]:
    """``~/.jarvis/tools``, the configured folders, then the central repository's clone."""
    dirs = [jarvis_home() / "tools", *(Path(d).expanduser() for d in settings.tool_load_dirs)]
    if settings.central_tool_repo:
        dirs.append(central_repo_dir())
    return dirs


def build_registry(settings: Settings, workspace: Path) -> ToolRegistry:
    """Load the user tool folders and start the MCP servers for ``workspace``.

    Raises:
        ConfigError: An ``mcp.json`` file is broken, or the tool group is not defined.
    """
    patterns = group_patterns(settings)
    registry = ToolRegistry()
    if settings.central_tool_repo:
        note = sync_central_repo(settings.central_tool_repo)
        if note:
            registry.user_problems.append(note)
    loaded = load_tool_dirs(user_tool_dirs(settings))
    registry.user_problems += loaded.problems
    for tool in loaded.tools:
        if tool.name in registry.user_tools:
            registry.user_problems.append(skipped_note(tool))
            continue
        registry.user_tools[tool.name] = tool
    servers = [s for s in mcp_servers(settings, workspace) if _may_match(s, patterns)]
    if servers:
        try:
            _add_mcp(registry, servers, settings, workspace)
        except BaseException:
            registry.close()
            raise
    return registry


def skipped_note(tool: BaseTool) -> str:
    """What a user is told about a tool left out because its name is taken."""
    source = (tool.metadata or {}).get("source", "a user file")
    return f"tool {tool.name!r} from {source} was skipped: that name is already taken"


def _add_mcp(
    registry: ToolRegistry, servers: list[McpServerSpec], settings: Settings, workspace: Path
) -> None:
    # deferred: the MCP SDK (and its anyio/httpx stack) loads only when a server is configured
    from jarvis_graph.tools.mcp_hub import McpHub
    from jarvis_graph.tools.mcp_tools import build_mcp_tools

    hub = McpHub(
        servers,
        workspace / ".jarvis" / "mcp_logs",
        start_timeout=settings.mcp_start_timeout,
        call_timeout=settings.mcp_timeout,
    )
    registry.hub = hub
    for name, reason in hub.start().items():
        note = f"MCP server {name!r} failed to start and is left out of this run: {reason}"
        registry.mcp_problems.append(note)
        logger.warning("%s", note)
    for tool in build_mcp_tools(hub, set(registry.user_tools)):
        registry.mcp_tools[tool.name] = tool


def group_patterns(settings: Settings) -> list[str] | None:
    """The name patterns of the active tool group (``None``: every tool).

    Raises:
        ConfigError: The group is not defined.
    """
    if not settings.tool_group:
        return None
    patterns = settings.tool_groups.get(settings.tool_group)
    if patterns is None:
        known = ", ".join(sorted(settings.tool_groups)) or "none defined"
        msg = (
            f"tool group {settings.tool_group!r} is not defined (known groups: {known}); "
            "define it under tool_groups in config.yaml"
        )
        raise ConfigError(msg)
    return patterns


def in_group(name: str, patterns: list[str] | None) -> bool:
    """Whether tool ``name`` belongs to a group given by ``patterns``."""
    return patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _may_match(server: McpServerSpec, patterns: list[str] | None) -> bool:
    """Whether any pattern could select a tool of ``server`` (else it is not started)."""
    if patterns is None:
        return True
    prefix = clean(server.name) + SEPARATOR
    for pattern in patterns:
        literal = pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
        if literal.startswith(prefix) or prefix.startswith(literal):
            return True
    return False


def filter_group(tools: dict[str, BaseTool], settings: Settings) -> dict[str, BaseTool]:
    """The tools of the active group."""
    patterns = group_patterns(settings)
    return {name: tool for name, tool in tools.items() if in_group(name, patterns)}


# --- per-process cache --------------------------------------------------------------------

_registries: dict[str, ToolRegistry] = {}
_lock = threading.Lock()


def _key(settings: Settings, workspace: Path) -> str:
    """What the registry depends on; secrets enter only through a digest."""
    parts = {
        "workspace": str(workspace),
        "dirs": settings.tool_load_dirs,
        "repo": settings.central_tool_repo,
        "group": settings.tool_group,
        "groups": settings.tool_groups,
        "mcp": [s.model_dump(mode="json") for s in settings.mcp],
        "secrets": [
            {k: v.get_secret_value() for k, v in {**s.env, **s.headers}.items()}
            for s in settings.mcp
        ],
        "timeouts": [settings.mcp_timeout, settings.mcp_start_timeout],
        "home": str(jarvis_home()),
        "env_dirs": os.environ.get("JARVIS_TOOL_LOAD_DIRS", ""),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def get_registry(settings: Settings, workspace: Path | None = None) -> ToolRegistry:
    """The registry for ``workspace`` (default: cwd) and ``settings``, built on first use."""
    ws = (workspace or Path.cwd()).resolve()
    key = _key(settings, ws)
    with _lock:
        registry = _registries.get(key)
        if registry is None:
            registry = _registries[key] = build_registry(settings, ws)
        return registry


def close_registries() -> None:
    """Close every registry of this process (MCP sessions end); the next lookup rebuilds."""
    with _lock:
        registries = list(_registries.values())
        _registries.clear()
    for registry in registries:
        try:
            registry.close()
        except Exception:
            logger.warning("closing a tool registry failed", exc_info=True)


atexit.register(close_registries)


def is_risky(tool: BaseTool, args: Any = None) -> bool:
    """Whether a call has side effects that the ``risky`` confirm mode asks about.

    A tool is risky by its ``risky`` metadata, or, called with ``args``, when one of its
    ``risky_when`` argument paths holds a listed value: ``save_memory`` is risky only
    when it saves a global memory, which reaches the prompt of every later session.
    """
    meta = tool.metadata or {}
    if meta.get("risky"):
        return True
    when = meta.get("risky_when") or {}
    return args is not None and any(
        value in risky for spec, risky in when.items() for value in arg_values(args, spec)
    )


def asks_user(tool: BaseTool) -> bool:
    """Whether a tool asks the user a question (answered through an interrupt)."""
    return bool((tool.metadata or {}).get("asks_user"))
