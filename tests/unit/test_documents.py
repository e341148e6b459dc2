"""Documents: real files written at test time, extracted, indexed, asked; and the bad inputs."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from jarvis_graph.context import JarvisContext
from jarvis_graph.documents.extract import DocumentError, Limits, extract, passages
from jarvis_graph.memory.documents import DocumentIndex
from jarvis_graph.runtime.services import RunServices
from tests.support.bench import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("doc_qa")


@pytest.fixture
def documents(bench: ModuleType, workspace: Path) -> list[Path]:
    return list(bench.build_documents(workspace))


def test_each_kind_is_read_with_its_anchors(documents: list[Path]) -> None:
    pdf, docx, xlsx, html, md = (extract(p) for p in documents)
    assert [s.anchor for s in pdf.sections] == [f"page {n}" for n in range(1, 7)]
    assert "24 volt supply" in pdf.sections[0].text
    assert "section 'Holidays'" in [s.anchor for s in docx.sections]
    assert [s.anchor for s in xlsx.sections] == ["sheet Sales, rows 2-9", "sheet Staff, rows 2-5"]
    assert "region: South; month: January; units: 210; revenue: 25200" in xlsx.sections[0].text
    assert "section 'Version 2.4'" in [s.anchor for s in html.sections]
    assert "Home | Docs" not in " ".join(s.text for s in html.sections)
    assert [s.anchor for s in md.sections][:2] == ["section 'Deploying'", "section 'Rolling back'"]


def test_retrieval_puts_the_right_passage_in_the_top_three(
    bench: ModuleType, workspace: Path
) -> None:
    # bench/doc_qa.py printed 1.00 (the shared-words baseline 0.97 / 0.93); the issue asks 0.9
    result = bench.retrieval(workspace)
    assert result["top3_index"]["all_documents"] >= 0.9, result["misses"]


def test_the_index_skips_unchanged_files_and_redoes_changed_ones(
    documents: list[Path], workspace: Path
) -> None:
    index = DocumentIndex(workspace)
    runbook = documents[-1]
    entry, done = index.add(runbook)
    assert done and entry["passages"] == 5 and entry["kind"] == "markdown"
    assert index.add(runbook) == (entry, False)
    runbook.write_text("# Runbook\n\n## Paging\n\nPages go to the on-call phone.\n")
    entry, done = index.add(runbook)
    assert done and entry["passages"] == 1
    assert [f.anchor for f in index.search("where do pages go?", ["runbook.md"])] == [
        "section 'Paging'"
    ]
    assert index.remove("runbook.md") and index.entries() == []
    assert index.search("pages", ["runbook.md"]) == []


def test_bad_documents_are_clear_errors_and_leave_the_index_as_it_was(
    documents: list[Path], workspace: Path
) -> None:
    index = DocumentIndex(workspace)
    index.add(documents[-1])
    before = index.entries()
    broken = workspace / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    corrupt = workspace / "corrupt.docx"
    corrupt.write_bytes(b"PK\x03\x04 not a zip")
    notzip = workspace / "table.xlsx"
    with zipfile.ZipFile(notzip, "w") as z:
        z.writestr("hello.txt", "no workbook here")
    cases = {
        broken: "is not a PDF that can be read",
        corrupt: "is not a Word document that can be read",
        notzip: "is not a spreadsheet that can be read",
        workspace / "photo.heic": "unknown document type '.heic'",
        workspace / "missing.pdf": "not found",
    }
    (workspace / "photo.heic").write_bytes(b"x")
    for path, message in cases.items():
        with pytest.raises(DocumentError, match=message):
            index.add(path)
    assert index.entries() == before


def test_encrypted_scanned_and_oversized_pdfs(workspace: Path) -> None:
    from pypdf import PdfWriter
    from reportlab.pdfgen import canvas

    blank = workspace / "scan.pdf"
    page = canvas.Canvas(str(blank))
    page.rect(100, 100, 200, 200)  # a drawing, no text: what a scan looks like to pypdf
    page.showPage()
    page.save()
    with pytest.raises(DocumentError, match="has no text layer .*run OCR"):
        extract(blank)
    locked = workspace / "locked.pdf"
    writer = PdfWriter(clone_from=str(blank))
    writer.encrypt("secret-password")
    writer.write(str(locked))
    with pytest.raises(DocumentError, match="encrypted PDF; decrypt it first"):
        extract(locked)
    with pytest.raises(DocumentError, match="more than the 1,024 allowed"):
        extract(blank, Limits(max_bytes=1024))


def test_a_long_pdf_is_read_page_by_page_with_progress(workspace: Path) -> None:
    from reportlab.pdfgen import canvas

    path = workspace / "long.pdf"
    page = canvas.Canvas(str(path))
    for number in range(1, 501):
        page.drawString(72, 700, f"Page {number} says the code is K{number * 7}.")
        page.showPage()
    page.save()
    seen: list[tuple[int, int]] = []
    document = extract(path, progress=lambda done, total: seen.append((done, total)))
    assert len(document.sections) == 500 and seen[-1] == (500, 500)
    assert "K2100" in document.sections[299].text
    with pytest.raises(DocumentError, match="has 500 pages, more than the 100 allowed"):
        extract(path, Limits(max_pages=100))


def test_a_large_sheet_is_cut_at_max_rows_and_says_so(workspace: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Log"
    sheet.append(["n", "value"])
    for n in range(1, 501):
        sheet.append([n, n * 2])
    path = workspace / "log.xlsx"
    book.save(path)
    document = extract(path, Limits(max_rows=100))
    assert document.note == "only the first 100 rows of Log were read"
    assert sum(len(s.text.splitlines()) for s in document.sections) == 100
    assert len(passages(document)) >= 5


def test_the_tools_answer_with_anchored_passages(documents: list[Path], workspace: Path) -> None:
    tools = RunServices(JarvisContext(workspace=str(workspace), platform="scripted")).tools
    asked = tools["ask_document"].invoke(
        {"path": "handbook.docx", "question": "how many holiday days?"}
    )
    assert asked.startswith("Passages for 'how many holiday days?', best first.")
    assert "[1] handbook.docx, section 'Holidays'" in asked and "28 days of paid holiday" in asked
    for path in documents:  # "*" asks every indexed document (jarvis docs add)
        DocumentIndex(workspace).add(path)
    everywhere = tools["ask_document"].invoke(
        {"path": "*", "question": "which part replaces the fan?"}
    )
    assert "manual.pdf, page 4" in everywhere
    read = tools["read_document"].invoke({"path": "manual.pdf", "pages": "2-3"})
    assert read.startswith("[page 2]") and "[page 3]" in read and "[page 4]" not in read
    sheet = tools["read_document"].invoke({"path": "sales.xlsx", "sheet": "Staff"})
    assert "name: Li Wei; team: Engineering; office: Shanghai" in sheet
