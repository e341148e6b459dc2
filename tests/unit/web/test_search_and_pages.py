"""Search backends against a loopback server in each one's shape, and pages as Markdown."""

from __future__ import annotations

import json

import pytest

from jarvis_graph.config import WebSettings
from jarvis_graph.web.fetch import Page, WebError
from jarvis_graph.web.pages import to_document
from jarvis_graph.web.search import format_hits, search
from tests.support.web_server import Reply, WebServer

SEARX = {
    "query": "langgraph checkpoint",
    "results": [
        {"url": "https://docs.example.org/cp", "title": "Checkpoints &amp; threads",
         "content": "A <b>checkpointer</b> saves   state.", "engine": "duckduckgo"},
        {"url": "https://blog.example.org/p", "title": "Persistence", "content": "Resume runs."},
        {"title": "no url: left out"},
    ],
}  # fmt: skip


def test_searxng_json_is_asked_for_and_read() -> None:
    with WebServer({"/search": Reply.json(SEARX)}) as web:
        settings = WebSettings(search="searxng", url=web.url("/"))
        hits = search(settings, "langgraph checkpoint", 5, environ={})
    asked = web.requests[0]
    assert asked.method == "GET" and "format=json" in asked.query and "q=langgraph" in asked.query
    assert [h.url for h in hits] == ["https://docs.example.org/cp", "https://blog.example.org/p"]
    assert hits[0].title == "Checkpoints & threads"
    assert hits[0].snippet == "A checkpointer saves state."
    text = format_hits("langgraph checkpoint", hits)
    assert text.splitlines()[:3] == [
        "2 results for 'langgraph checkpoint':",
        "1. Checkpoints & threads",
        "   https://docs.example.org/cp",
    ]


def test_the_limit_cuts_the_results() -> None:
    with WebServer({"/search": Reply.json(SEARX)}) as web:
        hits = search(WebSettings(search="searxng", url=web.url()), "q", 1, environ={})
    assert len(hits) == 1


def test_tavily_is_posted_to_with_its_key_as_bearer() -> None:
    answer = {
        "results": [{"title": "T", "url": "https://t.example/", "content": "c", "score": 0.9}]
    }
    with WebServer({"/search": Reply.json(answer)}) as web:
        settings = WebSettings(search="tavily", url=web.url())
        hits = search(settings, "what", 3, environ={"TAVILY_API_KEY": "tvly-secret-1"})
    asked = web.requests[0]
    assert asked.method == "POST" and asked.headers["Authorization"] == "Bearer tvly-secret-1"
    assert json.loads(asked.body) == {"query": "what", "max_results": 3}
    assert [h.url for h in hits] == ["https://t.example/"]


def test_brave_is_asked_with_its_subscription_token() -> None:
    row = {"title": "B", "url": "https://b.example/", "description": "<strong>d</strong>"}
    answer = {"web": {"results": [row]}}
    with WebServer({"/res/v1/web/search": Reply.json(answer)}) as web:
        settings = WebSettings(search="brave", url=web.url(), api_key_env="MY_BRAVE")
        hits = search(settings, "x", 2, environ={"MY_BRAVE": "brv-9"})
    assert web.requests[0].headers["X-Subscription-Token"] == "brv-9"
    assert "count=2" in web.requests[0].query
    assert [(h.url, h.snippet) for h in hits] == [("https://b.example/", "d")]


def test_failures_say_what_to_do() -> None:
    with pytest.raises(WebError, match="web search is off: set `web.search`"):
        search(WebSettings(), "x", 5, environ={})
    with pytest.raises(WebError, match=r"web.search is tavily but \$TAVILY_API_KEY .* is not set"):
        search(WebSettings(search="tavily"), "x", 5, environ={})
    with WebServer({"/search": Reply("forbidden", 403, "text/plain")}) as web:
        with pytest.raises(WebError, match="add `json` to search.formats"):
            search(WebSettings(search="searxng", url=web.url()), "x", 5, environ={})
        web.routes["/search"] = Reply("<html>login</html>")
        with pytest.raises(WebError, match="did not answer JSON"):
            search(WebSettings(search="searxng", url=web.url()), "x", 5, environ={})
        web.routes["/search"] = Reply.json({"results": []}, status=500)
        with pytest.raises(WebError, match="failed: HTTP 500"):
            search(WebSettings(search="searxng", url=web.url()), "x", 5, environ={})
        down = web.url()
    with pytest.raises(WebError, match="cannot be reached"):
        search(WebSettings(search="searxng", url=down), "x", 5, environ={})


def test_a_slow_backend_times_out() -> None:
    with WebServer(
        {"/search": Reply(json.dumps(SEARX), delay=2, content_type="application/json")}
    ) as web:
        settings = WebSettings(search="searxng", url=web.url(), timeout=0.3)
        with pytest.raises(WebError, match="did not answer within 0.3 s"):
            search(settings, "x", 5, environ={})


def test_searxng_needs_its_url() -> None:
    with pytest.raises(ValueError, match="web.url"):
        WebSettings(search="searxng")


HTML = """<html><head><title>Release notes 4.2</title><script>var secret = 1;</script></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<article><h1>Release notes 4.2</h1>
<p>Version 4.2 adds <b>streaming</b> to the API and fixes the cache bug of issue 311.</p>
<h2>Breaking changes</h2><ul><li>The <code>timeout</code> option is now in seconds.</li>
<li>Python 3.9 is no longer supported.</li></ul>
<p>See the <a href="https://example.org/migrate">migration guide</a>.</p></article>
<footer>Copyright 2026 Example Corp</footer></body></html>"""


def test_html_becomes_markdown_of_its_main_text() -> None:
    doc = to_document(Page("https://example.org/notes", "text/html", "utf-8", HTML.encode()))
    assert doc.title == "Release notes 4.2"
    assert "## Breaking changes" in doc.markdown
    assert "- The `timeout` option is now in seconds." in doc.markdown
    assert "[migration guide](https://example.org/migrate)" in doc.markdown
    assert "var secret" not in doc.markdown and "Home" not in doc.markdown


def test_text_is_kept_and_an_empty_page_is_an_error() -> None:
    doc = to_document(Page("https://e.org/a.txt", "text/plain", None, b"line 1\nline 2\n"))
    assert (doc.title, doc.markdown) == ("", "line 1\nline 2")
    with pytest.raises(WebError, match="has no readable text"):
        to_document(Page("https://e.org/", "text/html", None, b"<html><body></body></html>"))
