"""A fetched page as Markdown: the main text of HTML (menus, scripts and footers dropped)."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_graph.web.fetch import Page, WebError

MIN_MAIN_TEXT = 25
"""Characters of main text below which a page's whole text is taken instead."""


@dataclass(frozen=True)
class Document:
    """A page's title and its text as Markdown."""

    url: str
    title: str
    markdown: str


def to_document(page: Page) -> Document:
    """The page's title and Markdown (HTML through trafilatura; text types as they are).

    Raises:
        WebError: trafilatura is not installed, or the page has no text at all.
    """
    if not page.is_html:
        return Document(page.url, "", page.text().strip())
    try:
        # deferred: trafilatura (and lxml) load only when a page is read
        import trafilatura
    except ImportError:
        msg = "reading HTML pages needs trafilatura: pip install 'jarvis-graph[web]'"
        raise WebError(msg) from None
    from trafilatura.settings import use_config

    config = use_config()
    # a short page (an answer on a docs site) is still a page: below trafilatura's default
    # of 250 characters it would fall back to all the text, menus included
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", str(MIN_MAIN_TEXT))
    html = page.text()
    markdown = trafilatura.extract(
        html,
        config=config,
        url=page.url,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_images=False,
        include_comments=False,
        favor_recall=True,
    )
    if not markdown:  # no main text found: all of the page's text
        markdown = trafilatura.html2txt(html)
    metadata = trafilatura.extract_metadata(html)
    title = (metadata.title if metadata else None) or ""
    if not markdown or not markdown.strip():
        msg = f"{page.url} has no readable text (it may be built by JavaScript)"
        raise WebError(msg)
    return Document(page.url, title.strip(), markdown.strip())
