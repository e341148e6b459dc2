"""Questions over documents: is the right passage in the top 3, against a word-overlap baseline.

Run with ``.venv/bin/python bench/doc_qa.py`` (``--answers local:0.5b`` also runs the whole
answer path: ``jarvis run`` with the embedded model on each question, counting answers that
contain the expected fact). Five documents are written at run time into a temporary
workspace (:func:`build_documents`: a PDF with reportlab, a Word file with python-docx, a
spreadsheet with openpyxl, an HTML page and a Markdown runbook) and indexed with
``DocumentIndex`` (the project's memory store and MiniLM embedder). Each of the 30
questions names the document and the anchor (page, section, sheet rows) holding its
answer; a hit is that anchor among the first three passages ``ask_document`` returns. The
baseline ranks the same passages by shared words. Figures go to
``bench/results/doc_qa.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "doc_qa.json"
CACHE = ROOT / "bench" / ".cache" / "doc_qa"
TIMEOUT = 900

PDF_PAGES = [
    (
        "Installation",
        "The Orbit 7 controller needs a 24 volt supply. Mount it on a DIN rail "
        "and keep 5 cm of free space on each side for cooling.",
    ),
    (
        "Network setup",
        "The controller takes its address by DHCP. To set a fixed address, hold "
        "the reset button for 8 seconds, then open http://192.168.1.50 in a browser.",
    ),
    (
        "Firmware updates",
        "Firmware is updated from the maintenance page. An update takes about "
        "4 minutes; do not cut the power while the status light blinks orange.",
    ),
    (
        "Alarms",
        "Alarm E17 means the temperature sensor is disconnected. Alarm E23 means the "
        "fan has stopped; replace the fan module, part number FM-220.",
    ),
    (
        "Warranty",
        "The warranty lasts 36 months from the date of purchase and does not cover "
        "damage from lightning or a wrong supply voltage.",
    ),
    (
        "Cleaning",
        "Clean the front panel with a dry cloth. Never use solvents; they dull the "
        "display coating.",
    ),
]
DOCX_SECTIONS = [
    (
        "Working hours",
        "Core hours are 10:00 to 15:00. Outside them, staff choose their hours "
        "as long as the week adds up to 38 hours.",
    ),
    (
        "Remote work",
        "Staff may work from home up to three days a week after their probation "
        "period. Requests go to the team lead by email.",
    ),
    (
        "Holidays",
        "Every employee has 28 days of paid holiday a year. Up to 5 unused days can "
        "be carried over to the next year, until the end of March.",
    ),
    (
        "Expenses",
        "Travel expenses are refunded within 30 days. Receipts above 25 euros must "
        "be uploaded to the expense tool; meals are covered up to 40 euros a day.",
    ),
    (
        "Equipment",
        "New staff receive a laptop and a headset. A second screen can be ordered "
        "from the IT desk with the team lead's approval.",
    ),
    (
        "Leaving",
        "The notice period is two months for both sides. Equipment goes back to the "
        "IT desk on the last working day.",
    ),
]
SALES_ROWS = [  # region, month, units, revenue
    ("North", "January", 120, 14400), ("North", "February", 95, 11400),
    ("South", "January", 210, 25200), ("South", "February", 180, 21600),
    ("East", "January", 64, 7680), ("East", "February", 71, 8520),
    ("West", "January", 150, 18000), ("West", "February", 133, 15960),
]  # fmt: skip
STAFF_ROWS = [
    ("Ana Ruiz", "Sales", "Madrid"),
    ("Tom Berg", "Support", "Oslo"),
    ("Li Wei", "Engineering", "Shanghai"),
    ("Sara Koch", "Finance", "Berlin"),
]
HTML_SECTIONS = [
    (
        "Version 3.0",
        "Version 3.0 drops support for Python 3.8 and adds async sessions. The "
        "config key timeout is now read in seconds instead of milliseconds.",
    ),
    (
        "Version 2.4",
        "Version 2.4 fixes the memory leak in the cache and adds a --dry-run "
        "flag to the import command.",
    ),
    (
        "Version 2.3",
        "Version 2.3 adds export to Parquet and makes the CSV reader detect "
        "semicolons as separators.",
    ),
    (
        "Upgrading",
        "Before upgrading, back up the database with the backup command. Upgrades "
        "from versions older than 2.0 must go through 2.4 first.",
    ),
]
MD_SECTIONS = [
    (
        "Deploying",
        "Deploys run from the main branch only. Run make release, then tag the "
        "commit as vX.Y.Z and push the tag; the pipeline does the rest.",
    ),
    (
        "Rolling back",
        "To roll back, redeploy the previous tag with make deploy TAG=vX.Y.Z. "
        "Database migrations are not rolled back automatically.",
    ),
    (
        "On call",
        "The on-call engineer answers pages within 15 minutes, day and night. The "
        "rota changes every Monday at 09:00.",
    ),
    (
        "Incidents",
        "Every incident gets a ticket in the INC project and a short review within "
        "five working days.",
    ),
    (
        "Secrets",
        "Secrets live in the vault under team/payments. Never put them in the repo or in chat.",
    ),
]

QUESTIONS: list[tuple[str, str, str, str]] = [
    (q["question"], q["file"], q["anchor"], str(q["fact"]))
    for q in yaml.safe_load((ROOT / "bench" / "data" / "doc_qa.yaml").read_text())["questions"]
]
"""Question, document, anchor of the answer, a fact the answer holds (bench/data/doc_qa.yaml)."""


def build_documents(folder: Path) -> list[Path]:
    """Write the five documents into ``folder``; their paths."""
    from docx import Document
    from openpyxl import Workbook
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = folder / "manual.pdf"
    page = canvas.Canvas(str(pdf), pagesize=A4)
    for title, text in PDF_PAGES:
        page.setFont("Helvetica-Bold", 16)
        page.drawString(72, 770, title)
        page.setFont("Helvetica", 11)
        words, line, y = text.split(), "", 740
        for word in words:
            if len(line) + len(word) > 80:
                page.drawString(72, y, line)
                line, y = "", y - 16
            line = f"{line} {word}".strip()
        page.drawString(72, y, line)
        page.showPage()
    page.save()
    handbook = Document()
    handbook.add_heading("Staff handbook", level=0)
    for title, text in DOCX_SECTIONS:
        handbook.add_heading(title, level=1)
        handbook.add_paragraph(text)
    handbook.save(str(folder / "handbook.docx"))
    book = Workbook()
    sales = book.active
    sales.title = "Sales"
    sales.append(["region", "month", "units", "revenue"])
    for row in SALES_ROWS:
        sales.append(list(row))
    staff = book.create_sheet("Staff")
    staff.append(["name", "team", "office"])
    for row in STAFF_ROWS:
        staff.append(list(row))
    book.save(folder / "sales.xlsx")
    html = "".join(f"<h2>{t}</h2><p>{x}</p>" for t, x in HTML_SECTIONS)
    (folder / "changelog.html").write_text(
        f"<html><head><title>Changelog</title></head><body><nav>Home | Docs</nav>"
        f"<article><h1>Changelog</h1>{html}</article><footer>(c) 2026</footer></body></html>"
    )
    (folder / "runbook.md").write_text(
        "# Runbook\n\n" + "".join(f"## {t}\n\n{x}\n\n" for t, x in MD_SECTIONS)
    )
    return [
        folder / n
        for n in ("manual.pdf", "handbook.docx", "sales.xlsx", "changelog.html", "runbook.md")
    ]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {
        "the",
        "a",
        "is",
        "do",
        "i",
        "what",
        "how",
        "of",
        "in",
        "to",
    }


def retrieval(workspace: Path) -> dict[str, Any]:
    """Top-3 hits of the index and of the word-overlap baseline over the 30 questions.

    Asked of the question's own document, and of every document at once.
    """
    from jarvis_graph.memory.documents import DocumentIndex

    index = DocumentIndex(workspace)
    started = time.perf_counter()
    for path in build_documents(workspace):
        index.add(path)
    indexing = time.perf_counter() - started
    everything = index.store.search(("documents",), limit=100_000)
    passages = [(i.value["path"], i.value["anchor"], i.value["content"]) for i in everything]
    hits = {"in_file": 0, "all_documents": 0}
    baseline = {"in_file": 0, "all_documents": 0}
    misses = []
    started = time.perf_counter()
    for question, file, anchor, _fact in QUESTIONS:
        for scope, paths in (("in_file", [file]), ("all_documents", None)):
            found = index.search(question, paths, 3)
            right = any((f.path, f.anchor) == (file, anchor) for f in found)
            hits[scope] += right
            if not right:
                got = [f"{f.path} {f.anchor}" for f in found]
                misses.append({"scope": scope, "question": question, "want": anchor, "got": got})
            pool = [p for p in passages if paths is None or p[0] == file]
            ranked = sorted(pool, key=lambda p: -len(_words(question) & _words(p[2])))
            baseline[scope] += any((p[0], p[1]) == (file, anchor) for p in ranked[:3])
    searching = time.perf_counter() - started
    n = len(QUESTIONS)
    return {
        "questions": n,
        "passages": len(passages),
        "top3_index": {k: v / n for k, v in hits.items()},
        "top3_words": {k: v / n for k, v in baseline.items()},
        "index_seconds": round(indexing, 2),
        "ms_per_search": round(1000 * searching / (2 * n), 1),
        "misses": misses,
    }


def _answer_lines(stdout: str) -> list[str]:
    """What the run printed as its answer: not the tool lines, the session or status lines."""
    skip = ("⚙", "↳", "session ", "■", "resume with", "  ")
    return [line for line in stdout.splitlines() if line.strip() and not line.startswith(skip)]


def answers(
    workspace: Path, model: str, steps: int, limit: int, fresh: bool = False
) -> dict[str, Any]:
    """The whole path: ``jarvis run`` with ``model`` on each question; answers with the fact.

    Each run may make ``steps`` model calls (``--max-iterations``): ask, then answer. Each
    answer is appended to ``bench/.cache/doc_qa/<model>.jsonl`` as it comes, so a stopped
    run started again asks only the questions left (``--fresh`` starts over); a question
    whose run passes ``TIMEOUT`` seconds counts as not answered.
    """
    platform_name, _, name = model.partition(":")
    progress = CACHE / f"{model.replace(':', '-').replace('/', '_')}-{steps}.jsonl"
    CACHE.mkdir(parents=True, exist_ok=True)
    if fresh:
        progress.unlink(missing_ok=True)
    done_before = {}
    if progress.exists():
        for line in progress.read_text().splitlines():
            row = json.loads(line)
            done_before[row["question"]] = row
    asked = QUESTIONS[:limit]
    print(f"  {model}: {len(asked)} questions ({len(done_before)} answered before)", flush=True)
    rows = []
    for question, file, _anchor, fact in asked:
        if question in done_before:
            rows.append(done_before[question])
            continue
        task = f"Use ask_document on {file} to answer: {question}"
        args = [sys.executable, "-m", "jarvis_graph.cli", "run", "-n", "--platform", platform_name]
        args += ["--max-iterations", str(steps)]
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [*args, *(["--model", name] if name else []), task],
                cwd=workspace, capture_output=True, text=True, timeout=TIMEOUT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
            answer = " ".join(_answer_lines(done.stdout))
        except subprocess.TimeoutExpired:
            answer = f"(no answer: the run passed {TIMEOUT} s)"
        ok = fact.lower() in answer.lower()
        row = {
            "question": question,
            "fact": fact,
            "ok": ok,
            "answer": answer[-300:],
            "seconds": round(time.perf_counter() - started, 1),
        }
        rows.append(row)
        with progress.open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(f"  {'ok ' if ok else 'no '} {question} ({row['seconds']} s)", flush=True)
    return {
        "model": model,
        "with_fact": sum(bool(r["ok"]) for r in rows),
        "of": len(asked),
        "steps": steps,
        "seconds_per_question": round(sum(r.get("seconds", 0) for r in rows) / len(rows), 1),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--answers", help="also answer every question with this model, e.g. local:0.5b"
    )
    parser.add_argument("--steps", type=int, default=6, help="model calls a run may make")
    parser.add_argument("--limit", type=int, default=30, help="answer only the first N questions")
    parser.add_argument("--fresh", action="store_true", help="forget answers of earlier runs")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jarvis-doc-qa-") as tmp:
        os.environ.setdefault("JARVIS_HOME", str(Path(tmp) / "home"))
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        result = retrieval(workspace)
        print(f"{result['questions']} questions over 5 documents ({result['passages']} passages, "
              f"indexed in {result['index_seconds']} s)")  # fmt: skip
        print("right passage in the top 3   index (MiniLM)  shared words")
        for scope, label in (
            ("in_file", "asking its document"),
            ("all_documents", "asking all five"),
        ):
            index_score, words_score = result["top3_index"][scope], result["top3_words"][scope]
            print(f"  {label:<26} {index_score:>14.2f} {words_score:>13.2f}")
        print(f"  {result['ms_per_search']} ms a search")
        for miss in result["misses"]:
            where = f"want {miss['want']}, got {miss['got']}"
            print(f"  missed ({miss['scope']}): {miss['question']} ({where})")
        if args.answers:
            result["answers"] = answers(workspace, args.answers, args.steps, args.limit, args.fresh)
            a = result["answers"]
            print(f"answers with the expected fact ({args.answers}): {a['with_fact']}/{a['of']}, "
                  f"{a['seconds_per_question']} s a question")  # fmt: skip
    result.update(date=dt.date.today().isoformat(), machine=platform.machine())
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    shown = args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output
    print(f"written to {shown}")


if __name__ == "__main__":
    main()
