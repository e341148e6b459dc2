"""The direct scan: files found, skipped files counted, bad paths refused, workers agree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_graph.security import ScanInputError, scan_path

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security"


def test_binary_huge_and_undecodable_files_are_skipped_and_counted(tmp_path, monkeypatch):
    (tmp_path / "ok.c").write_text("void f(void)\n{\n    char b[4];\n    gets(b);\n}\n")
    (tmp_path / "blob.c").write_bytes(b"\x7fELF\0\0\0binary")
    (tmp_path / "latin.c").write_bytes(bytes(range(128, 256)))
    (tmp_path / "big.c").write_text("int x;\n" * 50)
    monkeypatch.setattr("jarvis_graph.security.scanner.MAX_FILE_BYTES", 200)
    result = scan_path(tmp_path, workers=1)
    assert result.skipped == {"binary": 1, "undecodable": 1, "huge": 1}
    assert result.files_scanned == 1
    assert [i.pattern for i in result.issues] == ["c-gets"]


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(ScanInputError, match="does not exist"):
        scan_path(tmp_path / "nope")


def test_empty_tree_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("no code here")
    with pytest.raises(ScanInputError, match="no c/cpp/rust source files"):
        scan_path(tmp_path)


def test_language_filter(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "src")
    rust = scan_path(tmp_path / "src", ("rust",), workers=1)
    assert {i.language for i in rust.issues} == {"rust"}
    c_only = scan_path(tmp_path / "src", ("c",), workers=1)
    assert {i.language for i in c_only.issues} == {"c"}


def test_parallel_and_split_scans_match_the_serial_scan(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path / "src")
    serial = scan_path(tmp_path / "src", workers=1)
    monkeypatch.setattr("jarvis_graph.security.scanner.SPLIT_BYTES", 500)  # split every C file
    parallel = scan_path(tmp_path / "src", workers=2)
    assert [i.id for i in parallel.issues] == [i.id for i in serial.issues]
    assert parallel.files_scanned == serial.files_scanned
    assert parallel.lines_scanned == serial.lines_scanned


def test_summary_counts(tmp_path):
    result = scan_path(FIXTURES, workers=1)
    summary = result.summary()
    assert summary["total"] == len(result.issues)
    assert sum(summary["by_language"].values()) == summary["total"]
    assert summary["top_risk_files"][0]["score"] >= summary["top_risk_files"][-1]["score"]


def test_engine_imports_no_framework():
    code = (
        "import pkgutil, importlib, sys, jarvis_graph.security as s\n"
        "for m in pkgutil.iter_modules(s.__path__):\n"
        "    importlib.import_module('jarvis_graph.security.' + m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('langgraph', 'langchain',"
        " 'langchain_core'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
