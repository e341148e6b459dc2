"""The console's Markdown: formatting becomes HTML, the model's own HTML stays text."""

from __future__ import annotations

import pytest

from jarvis_graph.ui.markdown import render_markdown


def test_formatting_becomes_html() -> None:
    html = render_markdown("Found **two**:\n\n- `a.csv`\n- b\n\n```python\nprint(1)\n```\n")

    assert "<strong>two</strong>" in html
    assert "<li><code>a.csv</code></li>" in html
    assert '<pre><code class="language-python">print(1)\n</code></pre>' in html


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
        ("<div>\n<b>block</b>\n</div>", "&lt;div&gt;"),
        ("[go](javascript:alert(1))", "[go](javascript:alert(1))"),
    ],
)
def test_html_and_code_links_from_the_model_stay_text(given: str, shown: str) -> None:
    html = render_markdown(given)

    assert shown in html
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert 'href="javascript' not in html


def test_a_link_opens_a_new_tab_and_an_image_is_a_link_never_loaded() -> None:
    html = render_markdown("[docs](https://example.org) ![chart](https://example.org/c.png)")

    assert (
        '<a href="https://example.org" target="_blank" rel="noopener noreferrer">docs</a>' in html
    )
    assert (
        '<a href="https://example.org/c.png" target="_blank" rel="noopener noreferrer">'
        "image: chart</a>"
    ) in html
    assert "<img" not in html
