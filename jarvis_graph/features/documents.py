"""Documents: ``ask_document`` and ``read_document`` over PDF, Word, spreadsheets, HTML, Markdown.

``ask_document`` gives the model the passages of a document (or of every indexed one) that
are closest to a question, each with its anchor (file, page or sheet and rows, heading),
never whole files; a document not indexed yet, or changed since, is indexed first.
``read_document`` gives the text of some pages of a PDF, some rows of a sheet, or a whole
smaller document.
"""

from __future__ import annotations

import re

from langchain_core.tools import BaseTool

from jarvis_graph.documents.extract import DocumentError, extract, limits_of
from jarvis_graph.features.base import Feature, RunSetup, run_tool
from jarvis_graph.memory.documents import DocumentIndex
from jarvis_graph.tools.base import ToolEnv, ToolFailure, ToolInputError

PASSAGES = 5


class Documents(Feature):
    """Adds ``ask_document`` and ``read_document`` to agent runs."""

    name = "documents"
    settings = ("docs_max_bytes", "docs_max_pages", "docs_max_rows")

    def enabled(self, setup: RunSetup) -> bool:
        """On for ``jarvis run``/``chat`` runs."""
        return setup.context.toolset == "agent"

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The two document tools, bound to this run."""

        def ask_document(path: str, question: str) -> str:
            """Find the passages of a document (PDF, Word, spreadsheet, HTML) about a question.

            Args:
                path: The document, relative to the workspace; "*" for every indexed document.
                question: What you want to know, in words.
            """
            index = DocumentIndex(setup.workspace, setup.store)
            paths = None
            if path.strip() != "*":
                full = ToolEnv(setup.workspace, setup.settings).resolve(path)
                try:
                    index.add(full, limits_of(setup.settings))
                except DocumentError as exc:
                    raise ToolFailure(str(exc)) from None
                paths = [index.relative(full)]
            elif not index.entries():
                msg = "no documents are indexed; give a document's path (or `jarvis docs add`)"
                raise ToolInputError(msg)
            found = index.search(question, paths, PASSAGES)
            if not found:
                return f"No passage of {path} is about {question!r}."
            lines = [
                f"Passages for {question!r}, best first. Answer only from them, citing file "
                "and page/sheet/section; if they do not contain the answer, say so.",
            ]
            for number, hit in enumerate(found, 1):
                lines.append(f"[{number}] {hit.path}, {hit.anchor} (score {hit.score:.2f}):")
                lines.append(hit.text)
            return "\n".join(lines)

        def read_document(path: str, pages: str = "", sheet: str = "") -> str:
            """Read a document's text: some pages of a PDF, a sheet of a spreadsheet, or all.

            Args:
                path: The document, relative to the workspace.
                pages: PDF pages, e.g. "3" or "2-5" (all when empty).
                sheet: The sheet of a spreadsheet (all when empty).
            """
            full = ToolEnv(setup.workspace, setup.settings).resolve(path)
            try:
                document = extract(full, limits_of(setup.settings))
            except DocumentError as exc:
                raise ToolFailure(str(exc)) from None
            sections = document.sections
            if pages.strip():
                wanted = _pages(pages)
                sections = [s for s in sections if _page_of(s.anchor) in wanted]
            if sheet.strip():
                sections = [s for s in sections if s.heading == sheet.strip()]
            if not sections:
                return f"{path} has nothing at pages={pages!r} sheet={sheet!r}"
            body = "\n\n".join(f"[{s.anchor}]\n{s.text}" for s in sections)
            return body + (f"\n\n({document.note})" if document.note else "")

        return [
            run_tool(ask_document, parse_docstring=True),
            run_tool(read_document, parse_docstring=True),
        ]


def _pages(spec: str) -> set[int]:
    """``"3"``, ``"2-5"``, ``"1,4-6"`` as a set of page numbers.

    Raises:
        ToolInputError: Not page numbers.
    """
    wanted: set[int] = set()
    for part in spec.split(","):
        found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not found:
            msg = f"pages {spec!r} is not page numbers such as 3 or 2-5"
            raise ToolInputError(msg)
        first = int(found.group(1))
        wanted.update(range(first, int(found.group(2) or first) + 1))
    return wanted


def _page_of(anchor: str) -> int:
    found = re.fullmatch(r"page (\d+)", anchor)
    return int(found.group(1)) if found else -1
