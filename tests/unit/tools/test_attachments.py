"""Workspace context attached to a new task: named files and a small workspace's listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.tools.attachments import (
    AttachLimits,
    attachment_text,
    named_files,
    small_listing,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "app.json").write_text('{"level": "warning"}\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    (tmp_path / "src" / "util.py").write_text("x = 1\n")
    (tmp_path / ".env").write_text("API_KEY=sk-secret\n")
    (tmp_path / "api_token.txt").write_text("t0ps3cret\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    return tmp_path


def test_listing_leaves_out_hidden_files_and_vcs_folders(ws: Path) -> None:
    assert small_listing(ws, 40) == [
        "api_token.txt",
        "app.json",
        "blob.bin",
        "src/main.py",
        "src/util.py",
    ]


def test_listing_of_a_large_workspace_is_none(ws: Path) -> None:
    assert small_listing(ws, 4) is None


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("In app.json, which level is set?", ["app.json"]),
        ("Run src/main.py.", ["src/main.py"]),  # the sentence's full stop is not part of it
        ("What does main.py print? And util.py?", ["src/main.py", "src/util.py"]),
        ("Compare app.json with missing.json", ["app.json"]),
        ("Print .env and api_token.txt", []),  # hidden and secret-looking files stay out
        ("Read ../outside.txt", []),
        ("No file here, version 1.2.3", []),
    ],
)
def test_named_files(ws: Path, task: str, expected: list[str]) -> None:
    (ws.parent / "outside.txt").write_text("not yours\n")
    assert named_files(task, ws, small_listing(ws, 40), 3) == expected


def test_named_files_are_capped(ws: Path) -> None:
    assert named_files("app.json src/main.py src/util.py", ws, None, 2) == [
        "app.json",
        "src/main.py",
    ]


def test_attachment_shows_listing_and_content(ws: Path) -> None:
    text = attachment_text("In app.json, which level is set?", ws, AttachLimits())
    assert text is not None
    assert "The workspace holds 5 files:" in text
    assert '--- app.json (1 line) ---\n{"level": "warning"}\n--- end of app.json ---' in text
    assert "sk-secret" not in text


def test_a_table_attachment_counts_its_data_rows(ws: Path) -> None:
    (ws / "users.csv").write_text("id,name\n1,ana\n2,ben\n3,carla\n")
    text = attachment_text("How many rows in users.csv?", ws, AttachLimits(listing=0))
    assert text is not None
    assert "--- users.csv (4 lines: a header line and 3 data rows) ---" in text


def test_long_files_are_cut_with_a_pointer_to_read_code(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = attachment_text("summarise big.txt", ws, AttachLimits(max_lines=3, listing=0))
    assert text is not None
    assert "line 3\n[7 more lines: read them with read_code]" in text
    assert "line 4" not in text
    assert "workspace holds" not in text


def test_binary_files_and_disabled_parts_attach_nothing(ws: Path) -> None:
    assert attachment_text("open blob.bin", ws, AttachLimits(listing=0)) is None
    assert attachment_text("open app.json", ws, AttachLimits(named_files=0, listing=0)) is None


def test_a_document_is_named_not_attached_as_text(ws: Path) -> None:
    # a PDF opens with a text header and no NUL byte; its raw bytes once reached the prompt
    (ws / "manual.pdf").write_bytes(b"%PDF-1.3\n% ReportLab\n1 0 obj << /F1 2 0 R >> endobj\n")
    (ws / "latin.txt").write_bytes("caf\xe9 ".encode("latin-1") * 200)
    text = attachment_text("what does manual.pdf say? and latin.txt?", ws, AttachLimits(listing=0))
    assert text is not None
    assert (
        "manual.pdf is a document: ask it with ask_document or read it with read_document" in text
    )
    assert "%PDF" not in text and "--- latin.txt" not in text


def test_a_huge_file_is_read_only_up_to_the_byte_cap(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jarvis_graph.tools.attachments as attachments

    monkeypatch.setattr(attachments, "READ_BYTES", 100)
    (ws / "huge.log").write_text("".join(f"entry {i:04d}\n" for i in range(1000)))
    text = attachment_text("what is in huge.log?", ws, AttachLimits(max_lines=50, listing=0))
    assert text is not None
    assert "--- huge.log (large file) ---\nentry 0000\n" in text
    assert "entry 0008\n[the file goes on: read the rest with read_code]" in text
    assert "entry 0009" not in text  # the line cut by the byte cap is left out


def test_files_the_task_names_that_are_not_there_are_said_to_be_absent(ws: Path) -> None:
    text = attachment_text(
        "Compare settings_prod.py with src/main.py and conf/app.yaml; see e.g. os.path",
        ws,
        AttachLimits(),
    )
    assert text is not None
    assert "No file of this name is in the workspace now: settings_prod.py, conf/app.yaml" in text
    assert "main.py, " not in text.split("now:")[1]  # present files are not named absent


def test_a_bare_name_is_absent_only_when_the_whole_workspace_was_listed(ws: Path) -> None:
    text = attachment_text("What is in missing.txt?", ws, AttachLimits(listing=2))
    assert text is None or "missing.txt" not in text  # too many files to tell
    text = attachment_text("What is in main.py?", ws, AttachLimits())  # in src/, by name
    assert text is not None and "workspace now" not in text
