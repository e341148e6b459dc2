"""Extracting a document's text as sections with anchors (page, sheet and rows, heading).

Libraries, no hand-written parsers: pypdf (PDF), python-docx (Word), openpyxl
(spreadsheets), trafilatura (HTML); Markdown and text are split at their headings. Every
failure is a :class:`DocumentError` saying what is wrong and what to do: an encrypted or
corrupt file, a PDF without a text layer (scanned), an unknown type, a file over the
limits. Extraction reads the whole file before anything is indexed, so a failure leaves
nothing half done.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from jarvis_graph.config import Settings

Progress = Callable[[int, int], None]
"""Called with (done, total) while a document is read (pages, rows)."""

SUFFIXES = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".rst": "text",
}
ROWS_PER_PART = 20
PART_CHARS = 900
"""Target size of a passage: sections longer than this are cut at paragraphs."""


class DocumentError(ValueError):
    """A document that cannot be read; the text says why and what to do."""


@dataclass(frozen=True)
class Section:
    """A piece of a document and where it is: ``page 3``, ``sheet Sales, rows 2-21``."""

    anchor: str
    heading: str
    text: str


@dataclass(frozen=True)
class Limits:
    """What a document may be."""

    max_bytes: int = 100_000_000
    max_pages: int = 2000
    max_rows: int = 20_000
    """Rows read per sheet (the rest is left out, and said so)."""


def limits_of(settings: Settings) -> Limits:
    """The document limits the settings give (``docs_max_bytes``, ``_pages``, ``_rows``)."""
    return Limits(
        max_bytes=settings.docs_max_bytes,
        max_pages=settings.docs_max_pages,
        max_rows=settings.docs_max_rows,
    )


@dataclass(frozen=True)
class Document:
    """A document's sections, its kind and what was left out (``note``)."""

    kind: str
    sections: list[Section]
    note: str = ""


def kind_of(path: Path) -> str:
    """The document kind of a file, by its suffix.

    Raises:
        DocumentError: An unknown suffix.
    """
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(sorted(SUFFIXES))
        msg = f"{path.name}: unknown document type {path.suffix or '(none)'!r}; known: {known}"
        raise DocumentError(msg)
    return kind


def extract(path: Path, limits: Limits | None = None, progress: Progress | None = None) -> Document:
    """The sections of the document at ``path``.

    Raises:
        DocumentError: Missing, too large, unknown type, encrypted, corrupt or empty.
    """
    limits = limits or Limits()
    if not path.is_file():
        msg = f"{path} not found"
        raise DocumentError(msg)
    kind = kind_of(path)
    size = path.stat().st_size
    if size > limits.max_bytes:
        most = f"{limits.max_bytes:,}"
        msg = f"{path.name} is {size:,} bytes, more than the {most} allowed (docs_max_bytes)"
        raise DocumentError(msg)
    reader = {"pdf": _pdf, "docx": _docx, "xlsx": _xlsx, "html": _html}.get(kind, _markdown)
    document = reader(path, limits, progress or (lambda _done, _total: None))
    if not any(s.text.strip() for s in document.sections):
        msg = f"{path.name} has no text to index"
        raise DocumentError(msg)
    return document


def _pdf(path: Path, limits: Limits, progress: Progress) -> Document:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise _missing("pypdf") from None
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            msg = f"{path.name} is an encrypted PDF; decrypt it first (e.g. qpdf --decrypt)"
            raise DocumentError(msg)
        pages = len(reader.pages)
        if pages > limits.max_pages:
            most = limits.max_pages
            msg = f"{path.name} has {pages} pages, more than the {most} allowed (docs_max_pages)"
            raise DocumentError(msg)
        sections = []
        for number, page in enumerate(reader.pages, 1):
            text = page.extract_text() or ""
            sections.append(Section(f"page {number}", "", _tidy(text)))
            progress(number, pages)
    except DocumentError:
        raise
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        msg = f"{path.name} is not a PDF that can be read ({type(exc).__name__}: {exc})"
        raise DocumentError(msg) from None
    if not any(s.text for s in sections):
        msg = (
            f"{path.name} has no text layer (a scanned PDF?); run OCR on it first (e.g. "
            "ocrmypdf) and add the result"
        )
        raise DocumentError(msg)
    return Document("pdf", sections)


def _docx(path: Path, limits: Limits, progress: Progress) -> Document:
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError:
        raise _missing("python-docx") from None
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        msg = f"{path.name} is not a Word document that can be read ({type(exc).__name__}: {exc})"
        raise DocumentError(msg) from None
    sections: list[Section] = []
    heading, lines = "", list[str]()
    paragraphs = document.paragraphs
    for number, paragraph in enumerate(paragraphs, 1):
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        if style.lower().startswith(("heading", "title")) and paragraph.text.strip():
            sections.append(_section(heading, lines))
            heading, lines = paragraph.text.strip(), []
        elif paragraph.text.strip():
            lines.append(paragraph.text.strip())
        progress(number, len(paragraphs))
    sections.append(_section(heading, lines))
    for number, table in enumerate(document.tables, 1):
        rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]
        sections.append(Section(f"table {number}", "", "\n".join(rows)))
    return Document("docx", [s for s in sections if s.text])


def _section(heading: str, lines: list[str]) -> Section:
    anchor = f"section {heading!r}" if heading else "start"
    return Section(anchor, heading, "\n".join(lines))


def _xlsx(path: Path, limits: Limits, progress: Progress) -> Document:
    try:
        import openpyxl
        from openpyxl.utils.exceptions import InvalidFileException
    except ImportError:
        raise _missing("openpyxl") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        msg = f"{path.name} is not a spreadsheet that can be read ({type(exc).__name__}: {exc})"
        raise DocumentError(msg) from None
    sections, cut = [], []
    try:
        for sheet in book.worksheets:
            rows = sheet.iter_rows(values_only=True)
            header = [str(c) if c is not None else "" for c in next(rows, ())]
            block: list[str] = []
            first = 2
            for number, row in enumerate(rows, 2):
                if number - 1 > limits.max_rows:
                    cut.append(sheet.title)
                    break
                cells = [
                    f"{header[i] if i < len(header) and header[i] else f'column {i + 1}'}: {v}"
                    for i, v in enumerate(row)
                    if v is not None and str(v).strip()
                ]
                if cells:
                    block.append("; ".join(cells))
                if len(block) == ROWS_PER_PART:
                    sections.append(_rows(sheet.title, first, number, block))
                    block, first = [], number + 1
                if number % 1000 == 0:
                    progress(number, limits.max_rows)
            if block:
                sections.append(_rows(sheet.title, first, first + len(block) - 1, block))
    finally:
        book.close()
    note = f"only the first {limits.max_rows:,} rows of {', '.join(cut)} were read" if cut else ""
    return Document("xlsx", sections, note)


def _rows(sheet: str, first: int, last: int, block: list[str]) -> Section:
    return Section(f"sheet {sheet}, rows {first}-{last}", sheet, "\n".join(block))


def _html(path: Path, limits: Limits, progress: Progress) -> Document:
    try:
        import trafilatura
    except ImportError:
        raise _missing("trafilatura", "web") from None
    html = path.read_text(encoding="utf-8", errors="replace")
    markdown = trafilatura.extract(html, output_format="markdown", include_tables=True)
    markdown = markdown or trafilatura.html2txt(html) or ""
    return Document("html", list(_markdown_sections(markdown)))


def _markdown(path: Path, limits: Limits, progress: Progress) -> Document:
    text = path.read_text(encoding="utf-8", errors="replace")
    return Document(kind_of(path), list(_markdown_sections(text)))


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def _markdown_sections(text: str) -> Iterator[Section]:
    heading, lines = "", list[str]()
    for line in text.splitlines():
        found = _HEADING.match(line)
        if found:
            if any(x.strip() for x in lines):
                yield _section(heading, lines)
            heading, lines = found.group(2).strip(), []
        else:
            lines.append(line)
    if any(x.strip() for x in lines):
        yield _section(heading, lines)


def _tidy(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _missing(package: str, extra: str = "docs") -> DocumentError:
    return DocumentError(
        f"reading this document needs {package}: pip install 'jarvis-graph[{extra}]'"
    )


@dataclass(frozen=True)
class Passage:
    """A part of a section small enough to embed, with its section's anchor."""

    anchor: str
    heading: str
    text: str


def passages(document: Document, size: int = PART_CHARS) -> list[Passage]:
    """The document's sections cut at paragraphs (or lines) into parts of about ``size``."""
    out = []
    for section in document.sections:
        blocks = [b.strip() for b in re.split(r"\n\s*\n|\n", section.text) if b.strip()]
        current = ""
        for block in blocks:
            if current and len(current) + len(block) > size:
                out.append(Passage(section.anchor, section.heading, current))
                current = ""
            current = f"{current}\n{block}" if current else block
            while len(current) > size * 2:  # one very long paragraph
                out.append(Passage(section.anchor, section.heading, current[:size]))
                current = current[size:]
        if current:
            out.append(Passage(section.anchor, section.heading, current))
    return out
