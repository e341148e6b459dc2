"""Web: ``search_web`` through the configured backend and ``read_webpage`` for a URL.

Both are off until ``web.search`` names a backend (``read_webpage`` alone with
``web.read_pages``); a run without them tells a model that asks for one how to turn it on.
``read_webpage`` reaches public addresses only (see :mod:`jarvis_graph.web.fetch`) and is
a risky tool unless ``web.confirm_reads`` is off: a URL can carry what the model read out
of the workspace.
"""

from __future__ import annotations

import re

from langchain_core.tools import BaseTool, tool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.owned_paths import OwnedPathError
from jarvis_graph.tools.base import ToolEnv, ToolFailure, current_env, save_output
from jarvis_graph.web.fetch import FetchPolicy, WebError, fetch
from jarvis_graph.web.pages import to_document
from jarvis_graph.web.search import format_hits, search

MAX_RESULTS = 10
CHUNK_CHARS = 1000
"""Target size of the parts a long page is cut into when a question picks among them."""
MAX_CHUNKS = 400
"""Parts of a long page scored against a question (the rest is in the saved page)."""
HOW_TO_TURN_ON = (
    "web tools are off; set `web.search` (searxng, tavily or brave) in .jarvis/config.yaml "
    "or ~/.jarvis/config.yaml (README: Web search and pages)"
)


@tool(parse_docstring=True)
def search_web(query: str, limit: int = 5) -> str:
    """Search the web; returns the title, URL and a snippet of each result.

    Args:
        query: What to search for.
        limit: How many results to return (1 to 10).
    """
    env = current_env()
    try:
        hits = search(env.settings.web, query, max(1, min(limit, MAX_RESULTS)))
    except WebError as exc:
        raise ToolFailure(str(exc)) from None
    return format_hits(query, hits)


@tool(parse_docstring=True)
def read_webpage(url: str, question: str = "") -> str:
    """Read a web page and return its main text as Markdown.

    Args:
        url: The page's http:// or https:// address.
        question: What you want to learn from the page; a long page is cut to the parts
            about it (the whole page is saved to a file).
    """
    return read_webpage_impl(current_env(), url, question)


def read_webpage_impl(env: ToolEnv, url: str, question: str = "") -> str:
    """Fetch ``url`` within the web settings and give its Markdown, cut to ``question``.

    Raises:
        ToolFailure: The page was refused or could not be read (the reason).
    """
    web = env.settings.web
    policy = FetchPolicy(
        allow_private=web.allow_private,
        allowed_hosts=frozenset(h.lower() for h in web.allow_hosts),
        timeout=web.timeout,
        max_bytes=web.max_page_bytes,
        max_redirects=web.max_redirects,
        ca_file=web.ca_file,
    )
    try:
        document = to_document(fetch(url, policy))
    except WebError as exc:
        raise ToolFailure(str(exc)) from None
    header = (f"# {document.title}\n" if document.title else "") + f"Source: {document.url}\n\n"
    whole = header + document.markdown
    budget = env.settings.tool_output_limit
    if not question.strip() or len(whole) <= budget:
        return whole  # a long page without a question is cut and saved by the tool node
    try:
        where = f"The whole page is saved at {save_output(whole, env, 'read_webpage')}; read "
        where += "more of it with read_code or search_files."
    except OwnedPathError as exc:  # the parts are still given, and why there is no file
        where = f"The whole page was not saved: {exc}"
    room = max(budget - len(header) - 400, CHUNK_CHARS)
    parts, shown = relevant_parts(document.markdown, question, room)
    note = (
        f"[The parts of this page closest to {question!r}: {shown:,} of "
        f"{len(document.markdown):,} characters. {where}]\n\n"
    )
    return header + note + parts


def chunks_of(markdown: str) -> list[str]:
    """The page cut at blank lines into parts of about :data:`CHUNK_CHARS` characters.

    A heading stays with the text after it.
    """
    blocks = [b.strip() for b in re.split(r"\n\s*\n", markdown) if b.strip()]
    parts: list[str] = []
    current = ""
    for block in blocks:
        lone_heading = current.startswith("#") and "\n\n" not in current
        full = len(current) + len(block) > CHUNK_CHARS
        if current and not lone_heading and (block.startswith("#") or full):
            parts.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    if current:
        parts.append(current)
    return parts


def relevant_parts(markdown: str, question: str, room: int) -> tuple[str, int]:
    """The parts of ``markdown`` most related to ``question`` that fit in ``room``.

    Parts are ranked by the project's embedder (cosine to the question) and given in the
    page's order, ``[…]`` marking what was left out.

    Returns:
        The text, and how many characters of the page it shows.
    """
    # deferred: the embedder (onnxruntime) loads only when a long page meets a question
    import numpy as np

    # deferred: as above (the memory package is imported by the memory feature only)
    from jarvis_graph.memory.embedder import EmbedderError, default_embedder

    parts = chunks_of(markdown)[:MAX_CHUNKS]
    try:
        embedder = default_embedder()
        vectors = np.asarray(embedder.embed_documents(parts))
        query = np.asarray(embedder.embed_query(question))
        order = list(np.argsort(-(vectors @ query)))
    except EmbedderError:  # no embedder: the page from its start
        order = list(range(len(parts)))
    chosen: set[int] = set()
    used = 0
    for index in order:
        size = len(parts[index]) + 6
        if used + size <= room:
            chosen.add(int(index))
            used += size
    pieces: list[str] = []
    for index in range(len(parts)):
        if index in chosen:
            pieces.append(parts[index])
        elif not pieces or pieces[-1] != "[…]":
            pieces.append("[…]")
    return "\n\n".join(pieces), sum(len(parts[i]) for i in chosen)


class Web(Feature):
    """Adds ``search_web`` and ``read_webpage`` when ``web.search`` (or ``read_pages``) is set."""

    name = "web"
    settings = ("web",)

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The web tools the settings turn on."""
        web = setup.settings.web
        tools: list[BaseTool] = []
        if web.search:
            tools.append(search_web)
        if web.search or web.read_pages:
            risky = {"risky": True} if web.confirm_reads else {}
            tools.append(read_webpage.model_copy(update={"metadata": {"source": "web", **risky}}))
        return tools

    def unavailable(self, setup: RunSetup) -> dict[str, str]:
        """Both tools, with how to turn them on."""
        return {"search_web": HOW_TO_TURN_ON, "read_webpage": HOW_TO_TURN_ON}

    def prompt_section(self, setup: RunSetup, task: str) -> str:
        """How to use the web tools, when the run has them."""
        web = setup.settings.web
        if not web.search:
            return "- read_webpage reads a page the task gives by URL.\n" if web.read_pages else ""
        return (
            "- For facts not in the workspace, search_web, then read_webpage the best "
            "results; name the URLs your answer relies on.\n"
        )
