"""The MCP registry against a real FastMCP server over stdio, SSE and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from jarvis_graph.config import Settings
from jarvis_graph.tools.base import ToolFailure
from jarvis_graph.tools.registry import ToolRegistry, build_registry
from tests.support.mcp_servers import fixture_http, fixture_stdio


def registry_with(workspace: Path, *servers: dict[str, Any], **settings: Any) -> ToolRegistry:
    return build_registry(Settings.model_validate({"mcp": list(servers), **settings}), workspace)


@pytest.fixture(params=["stdio", "sse", "streamable"])
def fixture_server(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The fixture server's config entry, over each transport."""
    if request.param == "stdio":
        yield fixture_stdio()
        return
    transport = "sse" if request.param == "sse" else "streamable-http"
    with fixture_http(transport) as url:
        yield {"name": "fixture", "type": request.param, "base_url": url}


@pytest.fixture
def tools(workspace: Path, fixture_server: dict[str, Any]) -> Iterator[dict[str, BaseTool]]:
    registry = registry_with(workspace, fixture_server)
    try:
        assert registry.problems == []
        yield registry.tools
    finally:
        registry.close()


def test_tools_are_named_server__tool(tools: dict[str, BaseTool]) -> None:
    mcp_names = sorted(n for n in tools if n.startswith("fixture__"))
    assert mcp_names == [
        "fixture__add",
        "fixture__counter",
        "fixture__crash",
        "fixture__dotted_name",
        "fixture__echo",
        "fixture__fail",
        "fixture__get_resource",
        "fixture__hang",
        "fixture__list_resources",
        "fixture__pid",
        "fixture__sleep",
    ]
    assert set(tools) == set(mcp_names)  # the registry holds only what outlives a run
    assert tools["fixture__dotted_name"].invoke({}) == "dotted ok"
    assert tools["fixture__dotted_name"].metadata["mcp_tool"] == "dotted.name"


def test_calls_return_text(tools: dict[str, BaseTool]) -> None:
    assert tools["fixture__echo"].invoke({"message": "hello"}) == "hello"
    assert tools["fixture__add"].invoke({"a": 2, "b": 40}) == "42"


def test_one_session_for_the_whole_run(tools: dict[str, BaseTool]) -> None:
    counter = tools["fixture__counter"]
    assert [counter.invoke({}) for _ in range(3)] == ["1", "2", "3"]
    # from another event loop (an async node) the same session answers
    assert asyncio.run(counter.ainvoke({})) == "4"


def test_resources_are_tools(tools: dict[str, BaseTool]) -> None:
    listing = tools["fixture__list_resources"].invoke({})
    assert "fixture://greeting" in listing
    text = tools["fixture__get_resource"].invoke({"uri": "fixture://greeting"})
    assert text == "hello from the fixture"


def test_a_tool_error_is_a_tool_failure(tools: dict[str, BaseTool]) -> None:
    with pytest.raises(ToolFailure, match="fixture/fail reported an error: .*disk is full"):
        tools["fixture__fail"].invoke({"reason": "disk is full"})
    assert tools["fixture__echo"].invoke({"message": "still here"}) == "still here"


def test_a_slow_call_times_out_and_the_session_survives(workspace: Path) -> None:
    registry = registry_with(workspace, fixture_stdio(timeout=1))
    try:
        tools = registry.tools
        assert tools["fixture__counter"].invoke({}) == "1"
        with pytest.raises(ToolFailure, match="MCP tool 'sleep' on server 'fixture' timed out"):
            tools["fixture__sleep"].invoke({"seconds": 30})
        assert tools["fixture__counter"].invoke({}) == "2"  # same session: state kept
    finally:
        registry.close()


def test_a_killed_server_gives_an_error_then_reconnects(workspace: Path) -> None:
    registry = registry_with(workspace, fixture_stdio())
    try:
        tools = registry.tools
        counter = tools["fixture__counter"]
        assert [counter.invoke({}), counter.invoke({})] == ["1", "2"]
        pid = int(tools["fixture__pid"].invoke({}))
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ToolFailure, match="MCP server 'fixture' stopped while running"):
            counter.invoke({})
        assert counter.invoke({}) == "1"  # a new session with a new server process
        assert int(tools["fixture__pid"].invoke({})) != pid
        assert registry.hub is not None and registry.hub.starts("fixture") == 2
    finally:
        registry.close()


def test_a_server_that_fails_to_start_is_reported_and_left_out(workspace: Path) -> None:
    broken = {"name": "broken", "type": "stdio", "command": str(workspace / "no-such-server")}
    registry = registry_with(workspace, broken, fixture_stdio())
    try:
        assert len(registry.problems) == 1
        assert "MCP server 'broken' failed to start" in registry.problems[0]
        assert "no-such-server" in registry.problems[0]
        assert not any(name.startswith("broken__") for name in registry.tools)
        assert registry.tools["fixture__echo"].invoke({"message": "on"}) == "on"
    finally:
        registry.close()


def test_prompts_are_listable(workspace: Path) -> None:
    registry = registry_with(workspace, fixture_stdio())
    try:
        hub = registry.hub
        assert hub is not None
        sess = hub.current("fixture")
        assert sess is not None

        async def prompts() -> list[str]:
            return [p.name for p in (await sess.session.list_prompts()).prompts]

        assert hub.run(prompts()) == ["review"]
    finally:
        registry.close()


def test_closing_ends_the_server_process(workspace: Path) -> None:
    registry = registry_with(workspace, fixture_stdio())
    pid = int(registry.tools["fixture__pid"].invoke({}))
    registry.close()
    with pytest.raises(ToolFailure, match="closed"):
        registry.tools["fixture__pid"].invoke({})
    with pytest.raises(ProcessLookupError):  # exited and reaped
        os.kill(pid, 0)
