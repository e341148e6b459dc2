"""`jarvis docs add|list|remove` as separate processes, and a run that asks a document."""

from __future__ import annotations

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
