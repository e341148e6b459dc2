"""Files Jarvis reads as input: each is bounded, a regular file, and read in seconds.

Boundary: a document (``jarvis docs add``, ``ask_document``), a chain file in
``.jarvis/chains/``, a predefined task in ``tasks.yaml``, a file ``read_code`` shows, a
memory export (``jarvis memory import``) and a merge of memories may come from a cloned
repository, a download or a model. Guaranteed: a link to a device, a FIFO, a folder, an
alias bomb, a zip bomb, deep JSON or a huge file ends in one clear error line (no hang, no
traceback, no gigabytes); a link out of the workspace is not indexed; an import with
duplicate ids or impossible times changes nothing; a merge that drops a memory's facts
deletes nothing; an index keeps the earlier version of a document until the new one is
complete.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from jarvis_graph.config import Settings
from jarvis_graph.documents.extract import DocumentError, Limits, extract
from jarvis_graph.task_presets import TaskPresetError, load_presets
from tests.support.cli import invoke, jarvis_cmd, run_limited, run_process, write_script

GB = 1 << 30


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


# --- documents ---------------------------------------------------------------------------


def docx_bytes(body: bytes) -> bytes:
    """A Word file whose body XML is ``body`` (the rest from a real python-docx document)."""
    import docx

    source = io.BytesIO()
    docx.Document().save(source)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(source) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst,
    ):
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "word/document.xml":
                head = data.partition(b"<w:body>")[0]
                data = head + b"<w:body>" + body + b"</w:body></w:document>"
            dst.writestr(item, data)
    return out.getvalue()


def test_a_docx_of_millions_of_empty_paragraphs_is_refused_in_seconds(workspace: Path) -> None:
    text = b"<w:p><w:r><w:t>hello</w:t></w:r></w:p>"
    (workspace / "bomb.docx").write_bytes(docx_bytes(b"<w:p/>" * 4_000_000 + text))
    assert (workspace / "bomb.docx").stat().st_size < 100_000

    started = time.monotonic()
    add = [*jarvis_cmd(), "docs", "add", "bomb.docx"]
    done = run_limited(add, workspace, timeout=120, memory=GB + GB // 2)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: bomb.docx holds more than 1,000,000 XML elements" in done.stderr
    assert "raise docs_max_pages" in done.stderr
    assert time.monotonic() - started < 60
    no_traceback(done)


def test_a_symlink_to_a_secret_outside_the_workspace_is_not_indexed(
    workspace: Path, isolated_home: Path
) -> None:
    secret = isolated_home / ".aws" / "credentials"
    secret.parent.mkdir()
    secret.write_text("[default]\naws_secret_access_key = SECRET-KEY-4242\n")
    (workspace / "notes.md").symlink_to(secret)
    (workspace / "guide.md").write_text("# Guide\nRun make to build.\n")

    done = run_process(["docs", "add", "notes.md", "guide.md"], workspace)

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"notes.md is a link to {secret}, outside {workspace.resolve()}" in done.stderr
    assert "indexed: guide.md" in done.stdout
    listed = run_process(["docs", "list"], workspace).stdout
    assert "guide.md" in listed and "notes.md" not in listed and "credentials" not in listed


def test_a_link_inside_the_workspace_is_indexed(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\nRun make to build.\n")
    (workspace / "guide.md").symlink_to("docs/guide.md")

    done = run_process(["docs", "add", "guide.md"], workspace)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "indexed: docs/guide.md" in done.stdout  # named by where it is


@pytest.mark.parametrize("special", ["fifo", "dev_zero", "folder"])
def test_a_document_that_is_no_regular_file_is_refused_unread(
    workspace: Path, special: str
) -> None:
    path = workspace / "notes.md"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()

    done = run_limited([*jarvis_cmd(), "docs", "add", "notes.md"], workspace, timeout=60)

    assert done.returncode == 1, done.stdout + done.stderr
    expected = {
        "fifo": "notes.md is a FIFO (named pipe), not a regular file",
        "dev_zero": "notes.md is a link to /dev/zero, outside",
        "folder": "notes.md is a folder, not a regular file",
    }[special]
    assert f"error: {expected}" in done.stderr
    no_traceback(done)


def damaged(office: bytes, member: str) -> bytes:
    """``office`` (a zip of XML) with ``member`` cut in half, as a broken download is."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(office)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, data[: len(data) // 2] if item.filename == member else data)
    return out.getvalue()


def damaged_docx() -> bytes:
    return damaged(docx_bytes(b"<w:p><w:r><w:t>hello</w:t></w:r></w:p>"), "word/document.xml")


def damaged_xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["name", "qty"])
    book.active.append(["fan", 2])
    out = io.BytesIO()
    book.save(out)
    return damaged(out.getvalue(), "xl/worksheets/sheet1.xml")


def pdf_bomb() -> bytes:
    """A one-page PDF whose content stream inflates to 100 MB (pypdf stops at 75 MB)."""
    ops = b"BT /F1 12 Tf (a) Tj ET "
    stream = zlib.compress(ops * (100_000_000 // len(ops)), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources "
        b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@pytest.mark.parametrize(
    ("name", "make", "message"),
    [
        ("broken.docx", damaged_docx, "broken.docx is not a Word document that can be read"),
        ("broken.xlsx", damaged_xlsx, "broken.xlsx is not a spreadsheet that can be read"),
        ("bomb.pdf", pdf_bomb, "bomb.pdf is not a PDF that can be read"),
    ],
)
def test_a_damaged_or_bomb_document_is_one_clear_error(
    workspace: Path, name: str, make: Callable[[], bytes], message: str
) -> None:
    path = workspace / name
    path.write_bytes(make())
    with pytest.raises(DocumentError, match=message) as caught:
        extract(path, Limits())
    assert "\n" not in str(caught.value)


def test_extracted_text_is_capped_by_docs_max_pages(workspace: Path) -> None:
    path = workspace / "long.md"
    path.write_text("# Long\n" + "word " * 40_000)  # 200,000 characters
    limits = Limits(max_pages=2)  # 20,000 characters
    document = extract(path, limits)
    assert sum(len(s.text) for s in document.sections) <= limits.max_chars
    assert document.note == "only the first 20,000 characters were read (docs_max_pages)"


def test_a_reindex_killed_half_way_keeps_the_earlier_version_searchable(
    workspace: Path,
) -> None:
    doc = workspace / "manual.md"
    doc.write_text("# Fans\nThe fan part number is FM-220.\n")
    first = run_process(["docs", "add", "manual.md"], workspace)
    assert first.returncode == 0, first.stderr
    # a new version of many passages: its writing takes long enough to be interrupted
    doc.write_text("".join(f"# Part {n}\n{'New text of the part. ' * 30}\n" for n in range(3000)))
    store = workspace / ".jarvis"
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()}
    proc = subprocess.Popen(
        [*jarvis_cmd(), "docs", "add", "manual.md"], cwd=workspace, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            changed = [
                p for p in store.rglob("*") if p.is_file() and before.get(p) != p.stat().st_mtime_ns
            ]
            if changed:  # the new version is being written
                time.sleep(0.5)
                break
            time.sleep(0.05)
        assert proc.poll() is None, "docs add ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)

    script = write_script(
        workspace.parent / "s.yaml",
        [
            {
                "tool_calls": [
                    {"name": "ask_document", "args": {"path": "*", "question": "fan part"}}
                ]
            },
            {"text": "FM-220 !!!COMPLETE!!!"},
        ],
    )
    args = ["run", "which fan part?", "-n", "--platform", "scripted", "--script", str(script)]
    done = run_process(args, workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[1] manual.md, section 'Fans'" in done.stdout  # the earlier version's passage


# --- chains ------------------------------------------------------------------------------

ALIAS_BOMB = """\
steps:
  - id: one
    tool: list_files
    args:
      a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
      path: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
"""


@pytest.mark.parametrize("special", ["dev_zero", "fifo", "alias_bomb"])
def test_a_bad_chain_file_is_a_problem_and_every_run_still_runs(
    workspace: Path, tmp_path: Path, special: str
) -> None:
    folder = workspace / ".jarvis" / "chains"
    folder.mkdir(parents=True)
    path = folder / "bad.yaml"
    if special == "dev_zero":
        path.symlink_to("/dev/zero")
    elif special == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(ALIAS_BOMB)
    script = write_script(tmp_path / "s.yaml", [{"text": "done !!!COMPLETE!!!"}])
    run = [*jarvis_cmd(), "run", "say done", "-n", "--platform", "scripted"]

    done = run_limited([*run, "--script", str(script)], workspace, timeout=60, memory=GB + GB // 2)
    listed = run_limited(
        [*jarvis_cmd(), "chains", "list"], workspace, timeout=60, memory=GB + GB // 2
    )

    assert done.returncode == 0, done.stdout + done.stderr
    no_traceback(done)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    expected = {
        "dev_zero": "bad.yaml is a character device, not a regular file",
        "fifo": "bad.yaml is a FIFO (named pipe), not a regular file",
        "alias_bomb": "invalid YAML: the YAML expands to more than 200,000 values",
    }[special]
    assert expected in listed.stdout
    assert "todo_report\tbuilt-in" in listed.stdout  # the other chains are still there


def test_a_chain_file_over_the_size_limit_is_refused_unparsed(workspace: Path) -> None:
    folder = workspace / ".jarvis" / "chains"
    folder.mkdir(parents=True)
    with (folder / "huge.yaml").open("w") as handle:
        handle.write("description: |\n")
        handle.writelines("  filler line of a huge chain file\n" for _ in range(40_000))
    listed = run_process(["chains", "list"], workspace)
    assert listed.returncode == 0, listed.stderr
    assert "huge.yaml is 1,400,015 bytes, more than the 1,000,000 allowed" in listed.stdout


# --- predefined tasks --------------------------------------------------------------------


EDIT_FILE = """\
import sys
from pathlib import Path
from jarvis_graph.editing import FilePatch, apply_patch
from jarvis_graph.editing.model import Edit
edit = Edit(search=sys.argv[2], replace=sys.argv[3])
outcome = apply_patch([FilePatch("data.yaml", (edit,))], Path(sys.argv[1]).joinpath)
print(outcome.report())
"""


def test_an_alias_bomb_in_a_yaml_file_the_model_edits_is_a_clear_error_fast(
    workspace: Path,
) -> None:
    data = workspace / "data.yaml"
    data.write_text(ALIAS_BOMB.replace("path: [*g", "other: [*g"))  # already a bomb
    bomb_lines = ALIAS_BOMB.splitlines()[5:]  # b: &b [*a, ...] down to path: [*g, ...]

    def edit(search: str, replace: str) -> subprocess.CompletedProcess[str]:
        args = [sys.executable, "-c", EDIT_FILE, str(workspace), search, replace]
        return run_limited(args, workspace, timeout=60, memory=GB)

    started = time.monotonic()
    in_bomb = edit("tool: list_files", "tool: read_code")
    assert in_bomb.returncode == 0, in_bomb.stderr
    assert "Edited data.yaml: 1 edit applied." in in_bomb.stdout  # did not parse before
    data.write_text('steps:\n  - args:\n      a: &a ["x", "x"]\n      path: plain\n')
    into_bomb = edit("      path: plain", "\n".join(bomb_lines))
    assert time.monotonic() - started < 30
    assert into_bomb.returncode == 0, into_bomb.stderr
    assert "invalid YAML: the YAML expands to more than 200,000 values" in into_bomb.stdout
    assert "path: plain" in data.read_text()  # the bomb was not written


def test_a_task_placeholder_with_a_format_spec_is_refused(workspace: Path) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "tasks.yaml").write_text(
        "tasks:\n  - name: pad\n    description: pads\n    task: Read {file:>900000000}\n"
    )
    with pytest.raises(TaskPresetError, match=r"write \{file\} instead of \{file:>900000000\}"):
        load_presets(workspace)
    done = invoke(["tasks", "list", "-w", str(workspace)])
    assert done.exit_code == 2
    assert "placeholders are plain names such as {file}" in done.output


def test_a_task_value_is_inserted_as_it_is(workspace: Path) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "tasks.yaml").write_text(
        "tasks:\n  - name: review\n    description: r\n    task: Read {file} {{literally}}\n"
    )
    preset = load_presets(workspace)["review"]
    assert preset.fill({"file": "{other:>99}"}) == "Read {other:>99} {literally}"


def test_a_tasks_file_that_is_a_fifo_is_an_error_not_a_hang(workspace: Path) -> None:
    (workspace / ".jarvis").mkdir()
    os.mkfifo(workspace / ".jarvis" / "tasks.yaml")
    done = run_limited([*jarvis_cmd(), "tasks", "list"], workspace, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tasks.yaml is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr


# --- read_code ---------------------------------------------------------------------------


def test_read_code_shows_two_lines_of_a_3_gb_file_without_reading_it(workspace: Path) -> None:
    big = workspace / "big.log"
    with big.open("w") as handle:
        handle.writelines(f"log line {n}\n" for n in range(2000))
    os.truncate(big, 3 * GB)  # sparse: no disk used
    code = (
        "from pathlib import Path\n"
        "from jarvis_graph.config import Settings\n"
        "from jarvis_graph.tools.base import ToolEnv\n"
        "from jarvis_graph.tools.builtin import read_code_impl\n"
        f"print(read_code_impl(ToolEnv(Path({str(workspace)!r}), Settings()), 'big.log', 1, 2))\n"
    )
    done = run_limited([sys.executable, "-c", code], workspace, timeout=60, memory=2 * GB)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "big.log (lines 1-2; 3,221,225,472 bytes, too large to count lines)" in done.stdout
    assert "1 | log line 0\n2 | log line 1\n[more lines; call read_code with start_line=3]" in (
        done.stdout
    )


def test_read_code_of_a_fifo_is_refused_without_blocking(workspace: Path) -> None:
    from jarvis_graph.tools.base import ToolEnv, ToolInputError
    from jarvis_graph.tools.builtin import read_code_impl

    os.mkfifo(workspace / "pipe.txt")
    with pytest.raises(ToolInputError, match="pipe.txt is a FIFO"):
        read_code_impl(ToolEnv(workspace, Settings()), "pipe.txt")


# --- memory import -----------------------------------------------------------------------


def memory(workspace: Path, *args: str) -> tuple[int, str]:
    done = invoke(["memory", *args, "-w", str(workspace)])
    return done.exit_code, str(done.output)


def export(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"format": "jarvis-graph-memory", "memories": records}))
    return path


def test_import_of_deep_json_is_a_clear_error(workspace: Path) -> None:
    deep = workspace / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    code, out = memory(workspace, "import", str(deep))
    assert code == 2
    assert "deep.json is nested too deeply to be read as JSON" in out


def test_import_of_a_folder_is_a_clear_error(workspace: Path) -> None:
    code, out = memory(workspace, "import", str(workspace))
    assert code == 2
    assert "is a folder; give an export file (or --jarvis" in out


def test_import_of_a_fifo_is_an_error_not_a_hang(workspace: Path) -> None:
    os.mkfifo(workspace / "mem.json")
    done = run_limited([*jarvis_cmd(), "memory", "import", "mem.json"], workspace, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "mem.json is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr


def test_import_of_a_record_too_large_for_a_memory_is_refused(workspace: Path) -> None:
    big = {"id": "big", "type": "project_long_term", "content": "fact " * 40_000}
    code, out = memory(workspace, "import", str(export(workspace / "m.json", [big])))
    assert code == 2
    assert "record 'big' holds 200,000 characters, more than the 100,000" in out
    assert memory(workspace, "list")[1].count("big") == 0


def test_import_with_duplicate_ids_names_them_and_imports_nothing(workspace: Path) -> None:
    records = [
        {"id": "a1", "type": "project_long_term", "content": "first"},
        {"id": "a1", "type": "project_long_term", "content": "second"},
        {"id": "b2", "type": "project_long_term", "content": "third"},
    ]
    code, out = memory(workspace, "import", str(export(workspace / "m.json", records)))
    assert code == 2
    assert "1 record id(s) are used more than once ('a1')" in out
    assert "third" not in memory(workspace, "list")[1]


@pytest.mark.parametrize(
    ("value", "problem"),
    [("9999", "is not an ISO 8601 date"), ("9999-12-31T00:00:00", "is not between 1970 and now")],
)
def test_import_refuses_impossible_times(workspace: Path, value: str, problem: str) -> None:
    record = {"id": "t", "type": "project_long_term", "content": "x", "updated_at": value}
    code, out = memory(workspace, "import", str(export(workspace / "m.json", [record])))
    assert code == 2
    assert f"updated_at {value!r} {problem}" in out


# --- memory organize ---------------------------------------------------------------------


def test_organize_keeps_the_originals_when_the_merge_drops_a_fact(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory(workspace, "save", "The API listens on port 8080", "--tag", "api", "--tag", "ops")
    memory(workspace, "save", "The API runs on host db2.internal", "--tag", "api", "--tag", "ops")
    answer = (
        "<merged_memory>\ncontent: The API listens on port 8080.\ntags: [api]\n</merged_memory>"
    )
    monkeypatch.setenv("JARVIS_PLATFORM", "scripted")
    monkeypatch.setenv("JARVIS_SCRIPT", str(write_script(tmp_path / "c.yaml", [{"text": answer}])))

    code, out = memory(workspace, "organize")

    assert code == 0, out
    assert "not merged (the merged text leaves out 'db2.internal' of " in out
    listed = memory(workspace, "list")[1]
    assert "db2.internal" in listed and "port 8080" in listed


# --- agent definitions -------------------------------------------------------------------


def test_an_agent_definition_that_is_a_fifo_is_an_error_not_a_hang(workspace: Path) -> None:
    folder = workspace / ".jarvis" / "agents"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "helper.yaml")
    done = run_limited([*jarvis_cmd(), "agents", "list"], workspace, timeout=60)
    assert "helper.yaml is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr
    no_traceback(done)
