"""Servers we did not write: npm's server-everything (stdio, streamable HTTP) and mcp-server-time.

server-everything is installed by ``make mcp-test-servers`` (part of ``make test``) into
``.cache/mcp-npm``; these tests never download anything themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from jarvis_graph.config import Settings
from jarvis_graph.tools.registry import build_registry
from tests.support.mcp_servers import everything_http, everything_stdio


@pytest.fixture(params=["stdio", "streamable"])
def everything(request: pytest.FixtureRequest, workspace: Path) -> Iterator[dict[str, BaseTool]]:
    if request.param == "stdio":
        yield from _tools(workspace, everything_stdio())
        return
    with everything_http() as url:
        yield from _tools(workspace, {"name": "everything", "type": "streamable", "base_url": url})


def _tools(workspace: Path, entry: dict[str, Any]) -> Iterator[dict[str, BaseTool]]:
    registry = build_registry(Settings.model_validate({"mcp": [entry]}), workspace)
    try:
        assert registry.problems == []
        yield {n: t for n, t in registry.tools.items() if n.startswith("everything__")}
    finally:
        registry.close()


def test_lists_tools_and_resources(everything: dict[str, BaseTool]) -> None:
    assert {"everything__echo", "everything__get-sum", "everything__list_resources"} <= set(
        everything
    )
    assert "everything__get_resource" in everything
    listing = everything["everything__list_resources"].invoke({}).splitlines()
    static = [line for line in listing if line.startswith("demo://resource/static/document/")]
    assert len(static) == 7
    assert any("(template)" in line for line in listing)


def test_calls_echo_and_add(everything: dict[str, BaseTool]) -> None:
    assert everything["everything__echo"].invoke({"message": "hi"}) == "Echo: hi"
    # this release names its `add` tool `get-sum`
    assert "5" in everything["everything__get-sum"].invoke({"a": 2, "b": 3})


def test_reads_a_resource(everything: dict[str, BaseTool]) -> None:
    uri = "demo://resource/static/document/architecture.md"
    text = everything["everything__get_resource"].invoke({"uri": uri})
    assert text.startswith("# Everything Server") and "Architecture" in text


def test_mcp_server_time_from_pypi(workspace: Path) -> None:
    pytest.importorskip("mcp_server_time")
    entry = {
        "name": "time",
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    }
    registry = build_registry(Settings.model_validate({"mcp": [entry]}), workspace)
    try:
        assert registry.problems == []
        out = registry.tools["time__get_current_time"].invoke({"timezone": "UTC"})
        assert '"timezone": "UTC"' in out and "datetime" in out
    finally:
        registry.close()
