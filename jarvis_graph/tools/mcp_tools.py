"""MCP tools, resources and prompts as langchain tools over an :class:`McpHub`.

Each tool keeps only names (server, original tool name); the session is looked up in the
hub at call time, so a reconnected server is used transparently. The conversion of MCP
tools and of their results into langchain content blocks is langchain-mcp-adapters'; the
blocks are then turned into the plain text the model reads.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import AnyUrl

from jarvis_graph.tools.base import ToolFailure
from jarvis_graph.tools.mcp_hub import McpError, McpHub, Session, describe_error
from jarvis_graph.tools.naming import assign_names

LIST_RESOURCES = "list_resources"
GET_RESOURCE = "get_resource"
_GET_RESOURCE_SCHEMA = {
    "type": "object",
    "properties": {"uri": {"type": "string", "description": "URI from list_resources"}},
    "required": ["uri"],
}
_NO_ARGS_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def blocks_to_text(content: Any) -> str:
    """Plain text for a tool result: text blocks joined, other blocks summarised."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") in ("image", "file"):
            where = block.get("url") or f"{len(block.get('base64') or '') * 3 // 4} bytes inline"
            parts.append(f"[{block['type']} {block.get('mime_type') or ''} {where}]".strip())
        else:
            parts.append(str(block))
    return "\n".join(parts) if parts else "(the tool returned no content)"


def _adapter_tool(sess: Session, server: str, tool: str) -> BaseTool:
    """langchain-mcp-adapters' tool for ``tool`` of this session (made once per session)."""
    from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool

    cache = sess.adapters
    if tool not in cache:
        found = next((t for t in sess.tools if t.name == tool), None)
        if found is None:
            offered = ", ".join(t.name for t in sess.tools) or "none"
            msg = f"MCP server {server!r} no longer offers a tool {tool!r} (it offers: {offered})"
            raise ToolFailure(msg)
        cache[tool] = convert_mcp_tool_to_langchain_tool(
            sess.session, found, server_name=server, handle_tool_errors=False
        )
    tool_: BaseTool = cache[tool]
    return tool_


async def call_mcp_tool(hub: McpHub, server: str, tool: str, args: dict[str, Any]) -> str:
    """Call ``tool`` on ``server`` in the hub's loop; the result as text.

    Raises:
        ToolFailure: The server reported an error, is down, or the call timed out.
    """

    async def work(sess: Session) -> str:
        try:
            content = await _adapter_tool(sess, server, tool).ainvoke(args)
        except ToolException as exc:  # the tool ran and reported isError
            msg = f"{server}/{tool} reported an error: {exc}"
            raise ToolFailure(msg) from None
        return blocks_to_text(content)

    return await _guarded(hub, server, f"tool {tool!r}", work)


async def _guarded(
    hub: McpHub, server: str, what: str, work: Callable[[Session], Awaitable[str]]
) -> str:
    timeout = hub.spec(server).timeout or hub.default_timeout
    try:
        return await hub.with_session(server, what, work, timeout)
    except ToolFailure:
        raise
    except McpError as exc:  # down, timed out, could not be restarted
        raise ToolFailure(str(exc)) from None
    except Exception as exc:  # a protocol error the server answered with
        msg = f"{what} on MCP server {server!r} failed: {describe_error(exc)}"
        raise ToolFailure(msg) from exc


async def list_resources_text(hub: McpHub, server: str) -> str:
    """The server's resources (and resource templates), one per line."""

    async def work(sess: Session) -> str:
        result = await sess.session.list_resources()
        lines = [
            f"{r.uri} — {r.name}"
            + (f" ({r.mimeType})" if r.mimeType else "")
            + (f": {r.description}" if r.description else "")
            for r in result.resources
        ]
        templates = await sess.session.list_resource_templates()
        lines += [f"{t.uriTemplate} — {t.name} (template)" for t in templates.resourceTemplates]
        return "\n".join(lines) if lines else f"MCP server {server!r} lists no resources"

    return await _guarded(hub, server, "list_resources", work)


async def read_resource_text(hub: McpHub, server: str, uri: str) -> str:
    """The contents of resource ``uri``: text as is, binary data summarised."""

    async def work(sess: Session) -> str:
        result = await sess.session.read_resource(AnyUrl(uri))
        parts = []
        for item in result.contents:
            text = getattr(item, "text", None)
            if text is not None:
                parts.append(text)
            else:
                blob = getattr(item, "blob", "")
                parts.append(f"[binary {item.mimeType or 'data'}, {len(blob) * 3 // 4} bytes]")
        return "\n".join(parts) if parts else f"resource {uri} is empty"

    return await _guarded(hub, server, f"get_resource({uri!r})", work)


def _as_tool(
    hub: McpHub,
    name: str,
    description: str,
    schema: dict[str, Any],
    make: Callable[..., Any],
    metadata: dict[str, Any],
) -> BaseTool:
    """A langchain tool running ``make(**args)`` (a coroutine) in the hub's loop."""

    def run_sync(**kwargs: Any) -> str:
        try:
            return hub.run(make(**kwargs))
        except McpError as exc:
            raise ToolFailure(str(exc)) from None

    async def run_async(**kwargs: Any) -> str:
        try:
            return await hub.arun(make(**kwargs))
        except McpError as exc:
            raise ToolFailure(str(exc)) from None

    return StructuredTool(
        name=name,
        description=description,
        args_schema=schema,
        func=run_sync,
        coroutine=run_async,
        metadata=metadata,
    )


def build_mcp_tools(hub: McpHub, taken: set[str]) -> list[BaseTool]:
    """Langchain tools for every open session of ``hub`` (resources as two extra tools)."""
    origins: list[tuple[str, str]] = []
    described: dict[tuple[str, str], Any] = {}
    for server in hub.names():
        sess = hub.current(server)
        if sess is None:
            continue
        for tool in sess.tools:
            origins.append((server, tool.name))
            described[(server, tool.name)] = tool
        if sess.init.capabilities.resources is not None:
            origins += [(server, LIST_RESOURCES), (server, GET_RESOURCE)]
    names = assign_names(origins, frozenset(taken))
    tools: list[BaseTool] = []
    for server, original in origins:
        name = names.name_of(server, original)
        assert name is not None
        meta: dict[str, Any] = {"source": f"mcp:{server}", "mcp_server": server}
        tool = described.get((server, original))
        if tool is None:  # one of the two resource tools
            tools.append(_resource_tool(hub, server, original, name, meta))
            continue
        read_only = bool(tool.annotations and tool.annotations.readOnlyHint)
        meta |= {"mcp_tool": original, "risky": not read_only}
        schema = tool.inputSchema or _NO_ARGS_SCHEMA
        make = functools.partial(_call_kwargs, hub, server, original)
        desc = tool.description or f"Tool {original} of MCP server {server}."
        tools.append(_as_tool(hub, name, desc, schema, make, meta))
    return tools


def _call_kwargs(hub: McpHub, server: str, tool: str, **kwargs: Any) -> Any:
    return call_mcp_tool(hub, server, tool, kwargs)


def _resource_tool(
    hub: McpHub, server: str, kind: str, name: str, meta: dict[str, Any]
) -> BaseTool:
    meta = {**meta, "mcp_tool": kind, "risky": False}
    if kind == LIST_RESOURCES:
        return _as_tool(
            hub,
            name,
            f"List the resources (URIs, names, types) MCP server {server} offers.",
            _NO_ARGS_SCHEMA,
            lambda: list_resources_text(hub, server),
            meta,
        )
    return _as_tool(
        hub,
        name,
        f"Read one resource of MCP server {server} by its URI (see its list_resources).",
        _GET_RESOURCE_SCHEMA,
        lambda uri: read_resource_text(hub, server, uri),
        meta,
    )
