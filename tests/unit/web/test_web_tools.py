"""The web feature: which tools a run gets, read_webpage's answer, and the key kept secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph import secrets
from jarvis_graph.config import Settings, WebSettings
from jarvis_graph.context import JarvisContext
from jarvis_graph.features.web import chunks_of, read_webpage_impl
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools.base import ToolEnv, ToolFailure
from tests.support.trust import trust
from tests.support.web_server import Reply, WebServer


def _services(workspace: Path, web: str) -> RunServices:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text(web)
    trust(workspace)
    return RunServices(JarvisContext(workspace=str(workspace)))


def test_web_tools_are_off_until_a_backend_is_set(workspace: Path) -> None:
    services = _services(workspace, "confirm: risky\n")
    assert "search_web" not in services.tools and "read_webpage" not in services.tools
    assert "set `web.search`" in services.unavailable["search_web"]
    services = _services(workspace, "web: {read_pages: true}\n")
    assert "search_web" not in services.tools and "read_webpage" in services.tools
    services = _services(workspace, "web: {search: searxng, url: 'http://127.0.0.1:9'}\n")
    assert {"search_web", "read_webpage"} <= set(services.tools)
    assert services.unavailable == {}
    assert "search_web, then read_webpage" in services.system_prompt("x")


def test_reading_a_page_is_risky_unless_turned_off(workspace: Path) -> None:
    risky = _services(workspace, "web: {read_pages: true}\n").tools["read_webpage"]
    assert risky.metadata == {"source": "web", "risky": True}
    trusted = _services(workspace, "web: {read_pages: true, confirm_reads: false}\n")
    assert not (trusted.tools["read_webpage"].metadata or {}).get("risky")


def test_the_backend_key_is_kept_from_tools_and_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(web=WebSettings(search="tavily", api_key_env="MY_SEARCH_ACCESS"))
    environ = {"MY_SEARCH_ACCESS": "tvly-abcdef", "PATH": "/bin"}
    assert "MY_SEARCH_ACCESS" not in secrets.tool_environment(settings, environ=environ)
    assert secrets.secret_values(settings, environ=environ) == ["tvly-abcdef"]


def _env(workspace: Path, limit: int = 20_000) -> ToolEnv:
    web = WebSettings(read_pages=True, allow_hosts=["127.0.0.1"], timeout=5)
    return ToolEnv(workspace, Settings(web=web, tool_output_limit=limit))


ARTICLE = "<html><head><title>Guide</title></head><body><article>{}</article></body></html>"


def test_a_page_is_given_as_markdown_with_its_title_and_source(workspace: Path) -> None:
    page = ARTICLE.format("<h2>Install</h2><p>Run <code>make setup</code> first, then go on.</p>")
    with WebServer({"/guide": Reply(page)}) as web:
        text = read_webpage_impl(_env(workspace), web.url("/guide"))
    assert text.startswith(f"# Guide\nSource: {web.url('/guide')}\n\n")
    assert "## Install" in text and "Run `make setup` first" in text


def test_refusals_are_tool_failures(workspace: Path) -> None:
    with pytest.raises(ToolFailure, match="is a file: URL"):
        read_webpage_impl(_env(workspace), "file:///etc/passwd")
    with WebServer({}) as web:
        with pytest.raises(ToolFailure, match="localhost resolves to"):
            read_webpage_impl(_env(workspace), web.url("/", host="localhost"))


def test_a_question_cuts_a_long_page_to_its_parts_about_it(workspace: Path) -> None:
    filler = [
        f"<h2>Chapter {n}</h2><p>The garden party of year {n} had music, cake and lanterns "
        f"along the river, and everyone stayed until the evening bells of the town.</p>"
        for n in range(60)
    ]
    answer = (
        "<h2>Database settings</h2><p>The PostgreSQL connection pool holds at most 40 "
        "connections; raise pool_max_size in settings.toml for more.</p>"
    )
    page = ARTICLE.format("".join(filler[:37] + [answer] + filler[37:]))
    with WebServer({"/long": Reply(page)}) as web:
        text = read_webpage_impl(
            _env(workspace, limit=2000), web.url("/long"), "how many database connections?"
        )
    assert len(text) <= 2000
    assert "at most 40 connections" in text and "[…]" in text
    saved = next((workspace / ".jarvis" / "tool_outputs").glob("*read_webpage*.txt"))
    assert "Chapter 59" in saved.read_text() and str(saved) in text


def test_a_long_page_is_cut_at_blank_lines_with_headings_kept_with_their_text() -> None:
    markdown = "# Title\n\nintro\n\n## A\n\n" + "a " * 600 + "\n\n## B\n\nb text"
    parts = chunks_of(markdown)
    assert parts[0] == "# Title\n\nintro"
    assert parts[1].startswith("## A\n\na a") and parts[-1] == "## B\n\nb text"
