"""The editing engine's pieces: strategies, messages, files, PATCH blocks, purity."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_graph.editing import EditError, apply_edits, parse_patch_blocks, rewrite_file
from jarvis_graph.editing.linters import suggest_linters
from jarvis_graph.editing.matching import (
    LADDER,
    locate,
    match_exact,
    match_reindented,
    match_without_blank_edges,
    similar_lines,
)
from jarvis_graph.editing.model import Edit
from jarvis_graph.editing.textfile import decode, write_atomic


def test_the_engine_imports_no_framework() -> None:
    code = (
        "import sys, json, jarvis_graph.editing, jarvis_graph.editing.linters;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph', 'pydantic', 'typer'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_ladder_order() -> None:
    assert [fn for _, fn in LADDER] == [match_exact, match_without_blank_edges, match_reindented]


def test_each_strategy_on_its_own() -> None:
    content = "def f():\n    x = 1\n"
    assert [s.start for s in match_exact(content, "x = 1", "")] == [13]
    assert match_without_blank_edges(content, "x = 1", "") == []  # nothing to trim
    assert match_without_blank_edges(content, "\n\n    x = 1\n\n", "\ny\n")[0].replacement == "y"
    span = match_reindented(content, "x = 1", "x = 2\ny = 3")[0]
    assert span.replacement == "    x = 2\n    y = 3"


def test_the_first_strategy_that_finds_decides() -> None:
    content = "x = 1\n    x = 1\n"
    strategy, spans = locate(content, "x = 1")
    assert strategy == "exact" and len(spans) == 2  # never a looser guess


def test_similar_lines_window() -> None:
    content = "a\nb\ndef load(path):\n    return open(path).read()\nz\n"
    first, lines = similar_lines(content, "def load(p):\n    return open(p).read()") or (0, [])
    assert first == 3 and lines[0] == "def load(path):"
    assert similar_lines("", "x") is None


def test_not_found_message_shows_numbered_lines() -> None:
    content = "".join(f"line {i}\n" for i in range(1, 30)) + "    total = compute(a, b)\n"
    with pytest.raises(EditError) as err:
        apply_edits(content, (Edit(search="total = compute(a,b)", replace="x"),), "m.py")
    assert err.value.kind == "not_found"
    assert "Did you mean these lines (line 30)?" in str(err.value)
    assert "30 |     total = compute(a, b)" in str(err.value)
    assert err.value.lines == (30,)


def test_ambiguous_message_lists_every_match() -> None:
    with pytest.raises(EditError) as err:
        apply_edits("x\ny\nx\ny\nx\n", (Edit(search="x", replace="z"),), "m.py")
    assert err.value.kind == "ambiguous" and err.value.lines == (1, 3, 5)
    assert "starting at lines 1, 3, 5" in str(err.value)


def test_decode_detects_encodings_and_newlines() -> None:
    assert decode(b"a\r\nb\r\n", "f").newline == "\r\n"
    assert decode(b"a\r\nb\n", "f").newline == "\n"  # mixed: left raw
    assert decode("é".encode("latin-1"), "f").encoding == "latin-1"
    utf16 = decode("\ufeffhi\n".encode("utf-16-le"), "f")
    assert (utf16.encoding, utf16.text) == ("utf-16-le", "hi\n")
    assert utf16.encode("ho\n") == "\ufeffho\n".encode("utf-16-le")
    with pytest.raises(EditError, match="looks binary"):
        decode(b"\x00\x01", "f")


def test_rewrite_keeps_crlf_and_permissions(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"echo a\r\necho b\r\n")
    script.chmod(0o755)
    outcome = rewrite_file(script, "run.sh", "echo c\necho d\n")
    assert outcome.ok and not outcome.created
    assert script.read_bytes() == b"echo c\r\necho d\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_rewrite_creates_files_and_folders(tmp_path: Path) -> None:
    outcome = rewrite_file(tmp_path / "a" / "b.txt", "a/b.txt", "hi\n")
    assert outcome.ok and outcome.created
    assert (tmp_path / "a" / "b.txt").read_text() == "hi\n"


def test_rewrite_of_a_folder_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    outcome = rewrite_file(tmp_path / "d", "d", "x")
    assert not outcome.ok and "not a regular file" in outcome.message


def test_write_atomic_leaves_no_temporary_file_on_failure(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError):
        write_atomic(tmp_path / "d", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_new_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "n.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o644


def test_patch_blocks_with_and_without_diff_wrappers() -> None:
    text = (
        'Fixing.\n<PATCH file="src/a.py">\n<DIFF>\n<SEARCH>\nold\n</SEARCH>\n<REPLACE>\nnew\n'
        "</REPLACE>\n</DIFF>\n<DIFF>\n<RANGE>2-9</RANGE>\n<SEARCH_START>def f</SEARCH_START>\n"
        "<SEARCH_END>return</SEARCH_END>\n<REPLACE>pass</REPLACE>\n</DIFF>\n</PATCH>\n"
        "<PATCH file=b.txt><SEARCH>x</SEARCH><REPLACE>y</REPLACE>"
        "<SEARCH>p</SEARCH><REPLACE>q</REPLACE></PATCH>"
    )
    first, second = parse_patch_blocks(text)
    assert first.args == {
        "files": [
            {
                "path": "src/a.py",
                "diffs": [
                    {"search": "old", "replace": "new"},
                    {
                        "range": "2-9",
                        "search_start": "def f",
                        "search_end": "return",
                        "replace": "pass",
                    },
                ],
            }
        ]
    }
    assert second.args["files"][0]["diffs"] == [
        {"search": "x", "replace": "y"},
        {"search": "p", "replace": "q"},
    ]


def test_patch_block_in_aider_style_and_broken_blocks() -> None:
    aider = "<PATCH file='a.py'>\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n</PATCH>"
    (block,) = parse_patch_blocks(aider)
    assert block.args["files"][0]["diffs"] == [{"search": "old", "replace": "new"}]
    (empty,) = parse_patch_blocks('<PATCH file="a.py">nothing here')
    assert "has no edits" in empty.error


def test_linter_suggestions_only_for_installed_programs() -> None:
    installed = {"ruff", "shellcheck"}

    def which(name: str) -> str | None:
        return f"/usr/bin/{name}" if name in installed else None

    assert suggest_linters(["a.py", "b.py", "c.sh", "d.txt"], which) == [
        "ruff check a.py b.py",
        "shellcheck c.sh",
    ]
    assert suggest_linters(["x.rs"], which) == []


def test_an_edit_that_replaces_a_text_with_itself_is_refused() -> None:
    from jarvis_graph.editing import edits_from_dicts

    with pytest.raises(EditError) as err:
        edits_from_dicts([{"search": "average", "replace": "average"}])
    assert err.value.kind == "invalid_edit"
    assert "replaces a text with itself, so it would change nothing" in str(err.value)
    assert edits_from_dicts([{"search": "avrage", "replace": "average"}])  # a real change
