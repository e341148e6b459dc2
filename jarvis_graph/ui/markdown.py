"""Answers as HTML for the console: their Markdown rendered, any HTML in them shown as text.

A model's answer may hold HTML (its own, or what a web page or a file it read put in it),
so the renderer takes none: ``<script>`` or ``onerror=`` reach the page as text. Links
whose scheme could run code (``javascript:``, ``vbscript:``, ``data:`` but for images)
stay text too (markdown-it's own check), and the rest open in a new tab. An image is a
link to it, never loaded: the console asks nothing from outside, and an image address
written by a model could carry what it read to another site.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

NEW_TAB = {"target": "_blank", "rel": "noopener noreferrer"}


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    for name, value in NEW_TAB.items():
        tokens[idx].attrSet(name, value)
    return str(self.renderToken(tokens, idx, options, env))


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = escapeHtml(str(token.attrGet("src") or ""))
    attrs = " ".join(f'{name}="{value}"' for name, value in NEW_TAB.items())
    return f'<a href="{src}" {attrs}>{escapeHtml(f"image: {alt}")}</a>'


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_MD = _renderer()


def render_markdown(text: str) -> str:
    """``text`` (Markdown) as HTML safe to put in the console's page."""
    return str(_MD.render(text))
