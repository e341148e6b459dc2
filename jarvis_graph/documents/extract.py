"""Extracting a document's text as sections with anchors (page, sheet and rows, heading).

Libraries, no hand-written parsers: pypdf (PDF), python-docx (Word), openpyxl
(spreadsheets), the standard csv module (CSV and TSV files, read as one sheet),
trafilatura (HTML); Markdown and text are split at their headings. Every
failure is a :class:`DocumentError` saying what is wrong and what to do: an encrypted or
corrupt file, a PDF without a text layer (scanned), an unknown type, a file over the
limits. Extraction reads the whole file before anything is indexed, so a failure leaves
nothing half done.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.config import Settings
from jarvis_graph.untrusted import InputFileError, read_bytes

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called with (done, total) while a document is read (pages, rows)."""

SUFFIXES = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".csv": "csv",
    ".tsv": "csv",
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
CHARS_PER_PAGE = 10_000
ELEMENTS_PER_PAGE = 500
"""What a page may hold, generously: ``docs_max_pages`` bounds the text and the XML of
documents that have no pages (Word, HTML, Markdown) as well as PDFs' pages."""


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

    @property
    def max_chars(self) -> int:
        """Characters of text read from a document (the rest is left out, and said so)."""
        return self.max_pages * CHARS_PER_PAGE

    @property
    def max_elements(self) -> int:
        """XML elements a Word document's body may hold (its parser builds every one)."""
        return self.max_pages * ELEMENTS_PER_PAGE


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


def read_document_bytes(path: Path, limits: Limits, within: Path | None = None) -> bytes:
    """The bytes of a document file: a regular file of at most ``docs_max_bytes``.

    Args:
        path: The document.
        limits: Its limits (``max_bytes``).
        within: When given, a link in ``path`` must lead inside this folder.

    Raises:
        DocumentError: Missing, not a regular file (a FIFO, a device, a folder), too large,
            or a link leading outside ``within``.
    """
    raise_it = "raise the docs_max_bytes setting to index it"
    try:
        return read_bytes(path, limits.max_bytes, raise_it, within=within)
    except InputFileError as exc:
        raise DocumentError(str(exc)) from None


def extract(
    path: Path,
    limits: Limits | None = None,
    progress: Progress | None = None,
    data: bytes | None = None,
) -> Document:
    """The sections of the document at ``path`` (whose bytes are ``data``, when read already).

    Raises:
        DocumentError: Missing, too large, unknown type, encrypted, corrupt or empty.
    """
    limits = limits or Limits()
    kind = kind_of(path)
    if data is None:
        data = read_document_bytes(path, limits)
    readers = {"pdf": _pdf, "docx": _docx, "xlsx": _xlsx, "csv": _csv, "html": _html}
    reader = readers.get(kind, _markdown)
    document = reader(path, data, limits, progress or (lambda _done, _total: None))
    if not any(s.text.strip() for s in document.sections):
        msg = f"{path.name} has no text to index"
        raise DocumentError(msg)
    return document


class _Budget:
    """The characters a document may still yield; says what was left out when spent."""

    def __init__(self, limits: Limits) -> None:
        self.left = limits.max_chars
        self.most = limits.max_chars

    def take(self, text: str) -> str:
        """``text``, cut to what is left of the budget."""
        taken = text[: max(self.left, 0)]
        self.left -= len(text)
        return taken

    @property
    def spent(self) -> bool:
        """Whether the budget is used up (reading may stop)."""
        return self.left <= 0

    def note(self) -> str:
        """What was left out, for :attr:`Document.note` (``""``: nothing)."""
        if self.left >= 0:
            return ""
        return f"only the first {self.most:,} characters were read (docs_max_pages)"


def _unreadable(path: Path, what: str, exc: Exception) -> DocumentError:
    """One line for a library's failure on a damaged file (its exceptions vary widely)."""
    text = " ".join(str(exc).split())[:200]
    return DocumentError(
        f"{path.name} is not {what} that can be read ({type(exc).__name__}: {text})"
    )


def _check_zip(
    path: Path, data: bytes, limits: Limits, what: str, counted: str | None = None
) -> None:
    """Refuse an Office file that unpacks to more than its limits allow, before parsing it.

    Office files are zip archives of XML; a few kB can unpack to gigabytes, or to millions
    of elements the parser builds one object each for. The sizes the archive declares
    bound what :mod:`zipfile` will unpack (it stops there), so they are checked first,
    then the elements of the ``counted`` member are counted as it streams.

    Raises:
        DocumentError: Not a zip archive, or over ``docs_max_bytes`` or the element limit.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
            if unpacked > limits.max_bytes:
                most = f"{limits.max_bytes:,}"
                msg = (
                    f"{path.name} unpacks to {unpacked:,} bytes, more than the {most} allowed; "
                    "raise the docs_max_bytes setting to index it"
                )
                raise DocumentError(msg)
            if counted is None or counted not in archive.namelist():
                return
            elements = 0
            with archive.open(counted) as member:
                for block in iter(lambda: member.read(1 << 20), b""):
                    elements += block.count(b"<")
                    if elements > limits.max_elements:
                        most = f"{limits.max_elements:,}"
                        msg = (
                            f"{path.name} holds more than {most} XML elements (the limit for "
                            f"{limits.max_pages:,} pages); raise docs_max_pages to index it"
                        )
                        raise DocumentError(msg)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise _unreadable(path, what, exc) from None


class _PypdfLog(logging.Handler):
    """pypdf's warnings (``EOF marker not found``) as debug lines of this module.

    pypdf logs what it repairs or gives up on; with no handler set, Python prints each to
    stderr, above the one error :func:`_unreadable` says about the same file.
    """

    def emit(self, record: logging.LogRecord) -> None:
        """Pass ``record`` on, as a debug line of this module's logger."""
        logger.debug("pypdf: %s", record.getMessage())


def _quiet_pypdf() -> None:
    """Route pypdf's log to :class:`_PypdfLog` (once per process)."""
    pypdf_log = logging.getLogger("pypdf")
    if not any(isinstance(h, _PypdfLog) for h in pypdf_log.handlers):
        pypdf_log.addHandler(_PypdfLog())
        pypdf_log.propagate = False


def _pdf(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    try:
        from pypdf import PdfReader
    except ImportError:
        raise _missing("pypdf") from None
    _quiet_pypdf()
    budget = _Budget(limits)
    try:
        reader = PdfReader(io.BytesIO(data))
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
            text = budget.take(_tidy(page.extract_text() or ""))
            sections.append(Section(f"page {number}", "", text))
            progress(number, pages)
            if budget.spent:
                break
    except DocumentError:
        raise
    except Exception as exc:  # pypdf on a damaged file raises its own errors and others
        raise _unreadable(path, "a PDF", exc) from None
    if not any(s.text for s in sections):
        msg = (
            f"{path.name} has no text layer (a scanned PDF?); run OCR on it first (e.g. "
            "ocrmypdf) and add the result"
        )
        raise DocumentError(msg)
    return Document("pdf", sections, budget.note())


def _docx(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    try:
        import docx
    except ImportError:
        raise _missing("python-docx") from None
    _check_zip(path, data, limits, "a Word document", counted="word/document.xml")
    budget = _Budget(limits)
    try:
        document = docx.Document(io.BytesIO(data))
        sections: list[Section] = []
        heading, lines = "", list[str]()
        styles: dict[str | None, str] = {}
        paragraphs = document.paragraphs
        for number, paragraph in enumerate(paragraphs, 1):
            text = budget.take(paragraph.text.strip())
            if text and _is_heading(paragraph, styles):
                sections.append(_section(heading, lines))
                heading, lines = text, []
            elif text:
                lines.append(text)
            progress(number, len(paragraphs))
            if budget.spent:
                break
        sections.append(_section(heading, lines))
        for number, table in enumerate(document.tables, 1):
            if budget.spent:
                break
            rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]
            sections.append(Section(f"table {number}", "", budget.take("\n".join(rows))))
    except Exception as exc:  # python-docx and lxml on a damaged file raise many kinds
        raise _unreadable(path, "a Word document", exc) from None
    return Document("docx", [s for s in sections if s.text], budget.note())


def _is_heading(paragraph: Any, names: dict[str | None, str]) -> bool:
    """Whether a paragraph has a heading or title style.

    ``paragraph.style`` looks the style up in the styles part at every call (a third of a
    millisecond); names are kept by style id, so a long document pays once per style.
    """
    style_id = paragraph._p.style  # the id python-docx itself looks the style up by
    if style_id not in names:
        style = paragraph.style
        names[style_id] = ((style.name if style is not None else "") or "").lower()
    return names[style_id].startswith(("heading", "title"))


def _section(heading: str, lines: list[str]) -> Section:
    anchor = f"section {heading!r}" if heading else "start"
    return Section(anchor, heading, "\n".join(lines))


def _xlsx(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    try:
        import openpyxl
    except ImportError:
        raise _missing("openpyxl") from None
    _check_zip(path, data, limits, "a spreadsheet")
    sections: list[Section] = []
    cut: list[str] = []
    budget = _Budget(limits)
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in book.worksheets:
                if budget.spent:
                    break
                rows = sheet.iter_rows(values_only=True)
                if _sheet(sheet.title, rows, limits, budget, progress, sections):
                    cut.append(sheet.title)
        finally:
            book.close()
    except Exception as exc:  # openpyxl on a damaged file raises many kinds
        raise _unreadable(path, "a spreadsheet", exc) from None
    note = f"only the first {limits.max_rows:,} rows of {', '.join(cut)} were read" if cut else ""
    note = "; ".join(n for n in (note, budget.note()) if n)
    return Document("xlsx", sections, note)


def _sheet(
    title: str,
    rows: Iterator[Sequence[Any]],
    limits: Limits,
    budget: _Budget,
    progress: Progress,
    sections: list[Section],
) -> bool:
    """Add a sheet's rows to ``sections`` in parts; whether rows were left out."""
    header = [str(c) if c is not None else "" for c in next(rows, ())]
    block: list[str] = []
    first = 2
    cut = False
    for number, row in enumerate(rows, 2):
        if number - 1 > limits.max_rows:
            cut = True
            break
        cells = [
            f"{header[i] if i < len(header) and header[i] else f'column {i + 1}'}: {v}"
            for i, v in enumerate(row)
            if v is not None and str(v).strip()
        ]
        if cells:
            block.append(budget.take("; ".join(cells)))
        if len(block) == ROWS_PER_PART or budget.spent:
            sections.append(_rows(title, first, number, block))
            block, first = [], number + 1
        if number % 1000 == 0:
            progress(number, limits.max_rows)
        if budget.spent:
            break
    if block:
        sections.append(_rows(title, first, first + len(block) - 1, block))
    return cut


def _csv(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    """A CSV or TSV file as one sheet named after the file, as a spreadsheet's are read."""
    text = data.decode("utf-8-sig", errors="replace")
    try:
        dialect: Any = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|")
    except csv.Error:  # one column, or no telling: the suffix says
        dialect = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.excel
    sections: list[Section] = []
    budget = _Budget(limits)
    try:
        rows: Iterable[list[str]] = csv.reader(io.StringIO(text, newline=""), dialect)
        cut = _sheet(path.stem, iter(rows), limits, budget, progress, sections)
    except csv.Error as exc:  # a field over the csv module's size limit, a stray NUL
        raise _unreadable(path, "a CSV file", exc) from None
    note = f"only the first {limits.max_rows:,} rows were read" if cut else ""
    note = "; ".join(n for n in (note, budget.note()) if n)
    return Document("csv", sections, note)


def _rows(sheet: str, first: int, last: int, block: list[str]) -> Section:
    return Section(f"sheet {sheet}, rows {first}-{last}", sheet, "\n".join(block))


def _html(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    try:
        import trafilatura
    except ImportError:
        raise _missing("trafilatura", "web") from None
    html = data.decode("utf-8", errors="replace")
    try:
        markdown = trafilatura.extract(html, output_format="markdown", include_tables=True)
        markdown = markdown or trafilatura.html2txt(html) or ""
    except Exception as exc:  # the HTML parser on a damaged file
        raise _unreadable(path, "an HTML page", exc) from None
    return _text_document(path, "html", markdown, limits)


def _markdown(path: Path, data: bytes, limits: Limits, progress: Progress) -> Document:
    text = data.decode("utf-8", errors="replace")
    return _text_document(path, kind_of(path), text, limits)


def _text_document(path: Path, kind: str, text: str, limits: Limits) -> Document:
    budget = _Budget(limits)
    sections = list(_markdown_sections(budget.take(text)))
    return Document(kind, sections, budget.note())


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
