"""`jarvis docs add|list|remove` as separate processes, and a run that asks a document."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.bench import load_bench
from tests.support.cli import run_process, write_script


def _build(workspace: Path) -> list[Path]:
    return list(load_bench("doc_qa").build_documents(workspace))


def test_add_list_remove_and_a_bad_file(workspace: Path) -> None:
    _build(workspace)
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.4 nothing")
    names = ["manual.pdf", "broken.pdf", "handbook.docx", "sales.xlsx"]
    done = run_process(["docs", "add", *names], workspace)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "indexed: manual.pdf (pdf, 6 passages)" in done.stdout
    assert "indexed: sales.xlsx (xlsx, 2 passages)" in done.stdout
    assert "error: broken.pdf is not a PDF that can be read" in done.stderr
    again = run_process(["docs", "add", "manual.pdf"], workspace)
    assert again.returncode == 0 and "unchanged: manual.pdf" in again.stdout
    listed = run_process(["docs", "list"], workspace).stdout.splitlines()
    assert [line.split("\t")[:3] for line in listed] == [
        ["handbook.docx", "docx", "6 passages"],
        ["manual.pdf", "pdf", "6 passages"],
        ["sales.xlsx", "xlsx", "2 passages"],
    ]
    removed = run_process(["docs", "remove", "sales.xlsx", "nope.pdf"], workspace)
    assert removed.returncode == 1 and "removed: sales.xlsx" in removed.stdout
    assert "error: nope.pdf is not indexed" in removed.stderr
    assert len(run_process(["docs", "list"], workspace).stdout.splitlines()) == 2


def test_a_run_asks_a_document_and_answers_from_its_passage(
    workspace: Path, tmp_path: Path
) -> None:
    _build(workspace)
    ask = {"path": "manual.pdf", "question": "which part replaces a stopped fan?"}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "ask_document", "args": ask}]},
            {"text": "Part FM-220 (manual.pdf, page 4). !!!COMPLETE!!!"},
        ],
    )
    args = ["run", "which part replaces the fan?", "-n", "--platform", "scripted"]
    done = run_process([*args, "--script", str(script)], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[1] manual.pdf, page 4" in done.stdout and "FM-220" in done.stdout


def _pdf(path: Path, pages: int) -> Path:
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path))
    for number in range(1, pages + 1):
        for line in range(30):  # a passage or two per page
            page.drawString(40, 780 - 16 * line, f"Page {number}, line {line}: " + "text " * 12)
        page.showPage()
    page.save()
    return path


def test_add_shows_the_embedding_after_the_pages(workspace: Path) -> None:
    _pdf(workspace / "long.pdf", 40)

    done = run_process(["docs", "add", "long.pdf"], workspace)  # piped: plain lines

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    reading = [i for i, line in enumerate(lines) if re.fullmatch(r"  long\.pdf: \d+/40", line)]
    embedding = [
        i
        for i, line in enumerate(lines)
        if re.fullmatch(r"  long\.pdf: embedded \d+/\d+ passages", line)
    ]
    assert reading and embedding and max(reading) < min(embedding), done.stdout
    passages = re.search(r"indexed: long\.pdf \(pdf, (\d+) passages\)", done.stdout)
    assert passages, done.stdout
    total = passages.group(1)
    assert lines[embedding[-1]] == f"  long.pdf: embedded {total}/{total} passages"
    assert len(embedding) <= 11 and "\r" not in done.stdout  # every tenth, one line each


def test_a_broken_pdf_is_one_clean_error(workspace: Path) -> None:
    whole = _pdf(workspace / "whole.pdf", 3).read_bytes()
    (workspace / "cut.pdf").write_bytes(whole[: len(whole) // 2])  # a download cut short

    done = run_process(["docs", "add", "cut.pdf"], workspace)

    assert done.returncode == 1, done.stdout + done.stderr
    assert re.fullmatch(r"error: cut\.pdf is not a PDF that can be read \(.+\)\n", done.stderr)
    assert done.stdout == ""


def test_a_csv_file_is_read_as_a_sheet(workspace: Path) -> None:
    from openpyxl import Workbook

    from jarvis_graph.documents.extract import extract

    rows = [["region", "month", "units"], ["North", "May", "40"], ["South", "June", "75"]]
    (workspace / "sales.csv").write_text("\n".join(",".join(r) for r in rows) + "\n")
    book = Workbook()
    book.active.title = "sales"
    for row in rows:
        book.active.append(row)
    book.save(workspace / "sales.xlsx")

    done = run_process(["docs", "add", "sales.csv"], workspace)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "indexed: sales.csv (csv, 1 passages)" in done.stdout
    sheet = extract(workspace / "sales.xlsx").sections
    assert extract(workspace / "sales.csv").sections == sheet
    assert sheet[0].anchor == "sheet sales, rows 2-3"
    assert (
        sheet[0].text
        == "region: North; month: May; units: 40\nregion: South; month: June; units: 75"
    )
