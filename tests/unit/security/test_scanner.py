"""The direct scan: files found, skipped files counted, bad paths refused, workers agree."""

from __future__ import annotations

import json
import os
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


def test_a_fifo_named_like_source_or_header_is_skipped_not_waited_on(tmp_path):
    """A named pipe with no writer would block a plain read for ever."""
    os.mkfifo(tmp_path / "pipe.c")
    os.mkfifo(tmp_path / "pipe.h")
    (tmp_path / "ok.c").write_text(
        '#include "pipe.h"\nvoid f(void)\n{\n    char b[4];\n    gets(b);\n}\n'
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, with arguments built here
        [sys.executable, "-m", "jarvis_graph.security", str(tmp_path), "--workers", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["skipped"] == {"not a regular file": 2}
    assert summary["files_scanned"] == 1 and summary["total"] == 1


def test_nothing_outside_the_scanned_tree_is_read(tmp_path):
    """A linked file or folder that leads out of the tree, and a header included from
    outside it, are not read: their text never reaches the report."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    secret = "void s(void)\n{\n    char SECRET_TOKEN[4];\n    gets(SECRET_TOKEN);\n}\n"
    (outside / "s.c").write_text(secret)
    (outside / "len.h").write_text("#define LEN 4\n")
    (tree / "len_in.h").write_text("#define LEN 4\n")
    copy = '{\n    char b[LEN];\n    strcpy(b, "0123456789");\n}\n'
    (tree / "a.c").write_text('#include "../outside/len.h"\nvoid f(void)\n' + copy)
    (tree / "b.c").write_text('#include "len_in.h"\nvoid g(void)\n' + copy)
    os.symlink("../outside/s.c", tree / "link.c")
    os.symlink("../outside", tree / "folder")
    os.symlink("b.c", tree / "same.c")  # a link inside the tree is scanned
    done = subprocess.run(  # noqa: S603 - this interpreter, with arguments built here
        [sys.executable, "-m", "jarvis_graph.security", str(tree), "--workers", "1",
         "--min-confidence", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["skipped"] == {"outside the scanned tree": 1}
    assert "SECRET_TOKEN" not in done.stdout
    assert "outside the scanned tree" in done.stderr
    found = {(i["file"], i["pattern"]) for i in report["issues"]}
    # LEN is known to b.c (its header is in the tree), not to a.c (its header is outside)
    assert found == {("b.c", "c-copy-overflow"), ("same.c", "c-copy-overflow")}


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


def _big_tree(root: Path) -> None:
    """One big C file (a callee freeing what its caller frees again, far apart) and small ones."""
    root.mkdir()
    body = ["#include <stdlib.h>", "static void release(char *p)", "{", "    free(p);", "}"]
    for n in range(400):
        body += [f"int filler_{n}(int a)", "{", "    int b = a * 2;", "    return b + 1;", "}"]
    body += ["void twice(void)", "{", "    char *p = (char *)malloc(8);", "    release(p);",
             "    free(p);", "}"]  # fmt: skip
    (root / "big.c").write_text("\n".join(body) + "\n")
    for n in range(6):
        (root / f"small_{n}.c").write_text(
            f"void s{n}(void)\n{{\n    char b[4];\n    gets(b);\n}}\n"
        )


def test_big_file_is_parsed_once_and_walked_in_parts(tmp_path, monkeypatch):
    from jarvis_graph.security import scanner

    _big_tree(tmp_path / "src")
    serial = scan_path(tmp_path / "src", workers=1)
    prepared: list[str] = []
    real_prepare = scanner._prepare
    monkeypatch.setattr(
        scanner,
        "_prepare",
        lambda job, headers: prepared.append(job[2]) or real_prepare(job, headers),
    )
    monkeypatch.setattr(scanner, "SPLIT_BYTES", 5_000)
    parallel = scan_path(tmp_path / "src", workers=2)
    assert prepared == ["big.c"]
    assert [i.id for i in parallel.issues] == [i.id for i in serial.issues]
    assert ("big.c", "c-double-free") in {(i.file, i.pattern) for i in parallel.issues}
    assert (parallel.files_scanned, parallel.lines_scanned) == (
        serial.files_scanned, serial.lines_scanned,
    )  # fmt: skip


def test_without_fork_the_parts_get_the_parsed_file_by_pickle(tmp_path, monkeypatch):
    import multiprocessing

    from jarvis_graph.security import scanner

    _big_tree(tmp_path / "src")
    serial = scan_path(tmp_path / "src", workers=1)
    spawn = multiprocessing.get_context("spawn")  # macOS and Windows start workers this way
    monkeypatch.setattr(scanner, "_fork_context", lambda: spawn)
    monkeypatch.setattr(scanner, "SPLIT_BYTES", 5_000)
    spawned = scan_path(tmp_path / "src", workers=2)
    assert [i.id for i in spawned.issues] == [i.id for i in serial.issues]


def test_parts_of_a_file_cover_every_function_once():
    from jarvis_graph.security.c_scan import _share
    from jarvis_graph.security.c_source import Function

    functions = [Function(f"f{i}", "", i, i, "x" * (i * 37 % 500)) for i in range(101)]
    parts = [_share(functions, k, 3) for k in range(3)]
    names = [fn.name for part in parts for fn in part]
    assert sorted(names) == sorted(fn.name for fn in functions)
    assert len(names) == len(set(names))
    sizes = [sum(len(fn.body) for fn in part) for part in parts]
    assert max(sizes) - min(sizes) <= 500


def test_a_file_the_engine_cannot_analyse_is_counted_and_the_scan_goes_on(tmp_path, monkeypatch):
    (tmp_path / "good.c").write_text("void f(void)\n{\n    char b[4];\n    gets(b);\n}\n")
    (tmp_path / "odd.c").write_text("void g(void)\n{\n}\n")
    real = __import__("jarvis_graph.security.c_scan", fromlist=["scan_c_text"]).scan_c_text

    def fragile(text, label, *args, **kwargs):
        if label == "odd.c":
            raise RecursionError("too deep")
        return real(text, label, *args, **kwargs)

    monkeypatch.setattr("jarvis_graph.security.c_scan.scan_c_text", fragile)
    result = scan_path(tmp_path, workers=1)
    assert result.skipped == {"error": 1}
    assert [(i.file, i.pattern) for i in result.issues] == [("good.c", "c-gets")]


def test_octal_and_hex_literals_are_read_as_c_reads_them():
    from jarvis_graph.security.c_facts import const_eval

    assert [const_eval(e, {}) for e in ("0644", "0x1F + 1", "10UL", "089")] == [420, 32, 10, None]


@pytest.mark.timeout(30)
def test_a_crafted_macro_cannot_make_the_scan_compute_a_huge_power(tmp_path):
    (tmp_path / "x.c").write_text(
        "#define E **999999999\nvoid f(void)\n{\n    int n;\n    n = 9 E;\n    n = n + 1;\n}\n"
    )
    result = scan_path(tmp_path, workers=1)  # returns at once; 9 ** 999999999 would not
    assert result.files_scanned == 1


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


_DYING: dict[str, object] = {}


def _dies_on_boom(batch, headers):
    """A batch scan that ends its worker process on ``boom.c`` (pickled by name)."""
    import os

    if os.getpid() != _DYING["parent"] and any(label == "boom.c" for _, _, label in batch):
        os._exit(1)  # what a crash or the out-of-memory killer does to a worker
    return _DYING["real"](batch, headers)


def test_a_worker_that_dies_loses_no_other_file(tmp_path, monkeypatch):
    import os

    from jarvis_graph.security import scanner

    for n in range(4):
        (tmp_path / f"ok_{n}.c").write_text("void f(void)\n{\n    char b[4];\n    gets(b);\n}\n")
    (tmp_path / "boom.c").write_text("void g(void)\n{\n}\n")
    _DYING.update(parent=os.getpid(), real=scanner._scan_batch)
    monkeypatch.setattr(scanner, "_scan_batch", _dies_on_boom)
    result = scan_path(tmp_path, workers=2)
    assert result.skipped == {"error": 1}
    assert result.files_scanned == 4
    assert sorted(i.file for i in result.issues) == [f"ok_{n}.c" for n in range(4)]


def test_parts_of_a_big_file_merge_the_same_whatever_finished_first() -> None:
    from jarvis_graph.security.model import Issue
    from jarvis_graph.security.scanner import FileOutcome, _part_done

    def issue(line: int) -> Issue:  # the same finding (id) seen by two parts, equally sure
        return Issue("c", "use_after_free", "c-use-after-free", "a.c", 9, "", f"freed at {line}",
                     "", 0.8, "high", "CWE-416")  # fmt: skip

    def merged(order: list[int]) -> list[str]:
        found: dict = {}
        out: list[FileOutcome] = []
        for part in order:
            found_issue = [issue(100 + part)]
            _part_done(found, 0, part, "a.c", 10, 3, lambda _, o: out.extend(o), found_issue)
        [outcome] = out
        return [i.description for i in outcome.issues]

    assert merged([0, 1, 2]) == merged([2, 1, 0]) == merged([1, 2, 0]) == ["freed at 100"]


def test_read_regular_reads_only_regular_files_within_the_cap(tmp_path):
    from jarvis_graph.security.files import read_regular

    (tmp_path / "a.h").write_bytes(b"#define N 4\n")
    os.mkfifo(tmp_path / "pipe.h")
    assert read_regular(tmp_path / "a.h") == (b"#define N 4\n", "")
    assert read_regular(tmp_path / "a.h", max_bytes=4) == (b"", "huge")
    assert read_regular(tmp_path / "pipe.h") == (b"", "not a regular file")
    assert read_regular(tmp_path / "missing.h") == (b"", "unreadable")
    assert read_regular(tmp_path) == (b"", "not a regular file")
