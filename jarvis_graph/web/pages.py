"""A fetched page as Markdown: the main text of HTML (menus, scripts and footers dropped)."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_graph.web.fetch import Page, WebError

MIN_MAIN_TEXT = 25
"""Characters of main text below which a page's whole text is taken instead."""
BINARY_SAMPLE = 8192
"""Bytes from the start of a body looked at to tell text from binary."""
MAX_ODD_SHARE = 0.10
"""Share of control bytes (or, with no charset declared, bytes that are not UTF-8) above
which a body is binary: text has almost none, compressed or machine data about a tenth
to a half."""
_CONTROL_BYTES = bytes(range(32)).translate(None, b"\t\n\r\f\x1b")


@dataclass(frozen=True)
class Document:
    """A page's title and its text as Markdown."""

    url: str
    title: str
    markdown: str


def looks_binary(body: bytes, charset: str | None = None) -> bool:
    """Whether ``body`` is binary data rather than text, whatever type it was served as.

    A NUL byte, or more than :data:`MAX_ODD_SHARE` of control bytes or (when no charset
    was declared) of bytes that are not UTF-8, in the first :data:`BINARY_SAMPLE` bytes.
    """
    sample = body[:BINARY_SAMPLE]
    if not sample:
        return False
    if b"\0" in sample:
        return True
    limit = MAX_ODD_SHARE * len(sample)
    if len(sample) - len(sample.translate(None, _CONTROL_BYTES)) > limit:
        return True
    if charset is None:
        # a sample cut inside a character leaves at most 3 undecodable bytes at its end
        undecodable = sample.decode("utf-8", errors="replace").count("\ufffd")
        return undecodable > 3 and undecodable > limit
    return False


def to_document(page: Page) -> Document:
    """The page's title and Markdown (HTML through trafilatura; text types as they are).

    Raises:
        WebError: trafilatura is not installed, or the page has no text at all.
    """
    if looks_binary(page.body, page.charset):
        # bytes decoded as text are noise to the model (and may hold terminal escapes)
        return Document(page.url, "", f"binary content, {len(page.body):,} bytes, not shown")
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
