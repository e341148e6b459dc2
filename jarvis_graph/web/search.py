"""Web search through the configured backend: SearxNG's JSON API, Tavily or Brave.

The backend is the user's choice (``web.search`` in the config) and so is its URL: a
self-hosted SearxNG on loopback is the common set-up, and is not refused. Keys come from
the variable ``web.api_key_env`` names, read here and never given to a tool's process.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from jarvis_graph.config import WebSettings
from jarvis_graph.web.fetch import WebError, user_agent

SNIPPET_CHARS = 400
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Hit:
    """One search result."""

    title: str
    url: str
    snippet: str


def _clean(text: Any, limit: int = SNIPPET_CHARS) -> str:
    plain = " ".join(html.unescape(_TAG.sub("", str(text or ""))).split())
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def search(
    settings: WebSettings, query: str, limit: int, environ: Mapping[str, str] | None = None
) -> list[Hit]:
    """Up to ``limit`` results for ``query`` from the configured backend.

    Raises:
        WebError: No backend, no key, the backend unreachable, refusing or answering
            something that is not its JSON.
    """
    backend = settings.search
    if backend is None:
        msg = "web search is off: set `web.search` (searxng, tavily or brave) in the config"
        raise WebError(msg)
    base = settings.base_url()
    key = None
    if (name := settings.key_env()) is not None:
        key = (os.environ if environ is None else environ).get(name)
        if not key and backend != "searxng":
            msg = f"web.search is {backend} but ${name} (its API key) is not set"
            raise WebError(msg)
    headers = {"User-Agent": user_agent(), "Accept": "application/json"}
    if backend == "searxng":
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = httpx.Request(
            "GET", f"{base}/search", params={"q": query, "format": "json"}, headers=headers
        )
    elif backend == "tavily":
        headers["Authorization"] = f"Bearer {key}"
        body = {"query": query, "max_results": limit}
        request = httpx.Request("POST", f"{base}/search", json=body, headers=headers)
    else:
        headers["X-Subscription-Token"] = str(key)
        params: dict[str, str | int] = {"q": query, "count": min(limit, 20)}
        request = httpx.Request("GET", f"{base}/res/v1/web/search", params=params, headers=headers)
    data = _send(request, backend, base, settings.timeout)
    return _hits(backend, data)[:limit]


def _send(request: httpx.Request, backend: str, base: str, timeout: float) -> Any:
    try:
        with httpx.Client(timeout=timeout) as client:
            response = client.send(request)
    except httpx.TimeoutException:
        msg = f"the {backend} search at {base} did not answer within {timeout:g} s"
        raise WebError(msg) from None
    except httpx.HTTPError as exc:
        msg = f"the {backend} search at {base} cannot be reached: {exc or type(exc).__name__}"
        raise WebError(msg) from None
    if response.status_code in (401, 403):
        hint = (
            " (SearxNG answers 403 when its JSON format is off: add `json` to search.formats "
            "in its settings.yml)"
            if backend == "searxng"
            else ": check the key"
        )
        msg = f"the {backend} search refused the request (HTTP {response.status_code}){hint}"
        raise WebError(msg)
    if response.status_code >= 400:
        msg = f"the {backend} search failed: HTTP {response.status_code} {response.reason_phrase}"
        raise WebError(msg)
    try:
        return response.json()
    except ValueError:
        msg = f"the {backend} search at {base} did not answer JSON (is it the right URL?)"
        raise WebError(msg) from None


def _hits(backend: str, data: Any) -> list[Hit]:
    if not isinstance(data, dict):
        msg = f"the {backend} search answered an unexpected shape ({type(data).__name__})"
        raise WebError(msg)
    if backend == "brave":
        web = data.get("web")
        rows = web.get("results") if isinstance(web, dict) else []
    else:
        rows = data.get("results")
    text_key = "description" if backend == "brave" else "content"
    hits = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and row.get("url"):
            title, snippet = _clean(row.get("title"), 200), _clean(row.get(text_key))
            hits.append(Hit(title, str(row["url"]), snippet))
    return hits


def format_hits(query: str, hits: list[Hit]) -> str:
    """The results as the model reads them: numbered title, URL and snippet."""
    if not hits:
        return f"No results for {query!r}."
    lines = [f"{len(hits)} result{'s' if len(hits) != 1 else ''} for {query!r}:"]
    for number, hit in enumerate(hits, 1):
        lines += [f"{number}. {hit.title or '(no title)'}", f"   {hit.url}"]
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    lines.append("Read a result with read_webpage(url).")
    return "\n".join(lines)
