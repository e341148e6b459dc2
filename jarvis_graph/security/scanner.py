"""The direct scan: find C/C++/Rust files under a path and run the rules on them in parallel."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from jarvis_graph.security.model import Issue, ScanResult

EXTENSIONS = {
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".c++": "cpp", ".rs": "rust",
}  # fmt: skip
LANGUAGES = ("c", "cpp", "rust")
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "target", "__pycache__"}
MAX_FILE_BYTES = 8_000_000
DEFAULT_MIN_CONFIDENCE = 0.4
SPLIT_BYTES = 300_000


class ScanInputError(ValueError):
    """The path to scan does not exist, cannot be read or holds no source of the languages."""


@dataclass(frozen=True)
class FileOutcome:
    """What scanning one file gave: issues and lines, or why it was skipped."""

    issues: list[Issue]
    lines: int = 0
    skipped: str = ""


def iter_sources(root: Path, languages: tuple[str, ...]) -> Iterator[tuple[Path, str]]:
    """``(path, language)`` of the source files under ``root`` (or ``root`` itself)."""
    if root.is_file():
        lang = EXTENSIONS.get(root.suffix.lower())
        if lang in languages:
            yield root, lang
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            lang = EXTENSIONS.get(os.path.splitext(name)[1].lower())
            if lang in languages:
                yield Path(dirpath) / name, lang


def iter_header_files(root: Path) -> Iterator[Path]:
    """Header files under ``root`` (for include lookups)."""
    for path, _ in iter_sources(root, ("c", "cpp")):
        if path.suffix.lower() in (".h", ".hpp", ".hh", ".hxx"):
            yield path


def scan_file(
    path: Path,
    language: str,
    label: str,
    headers: dict[str, str] | None = None,
    part: tuple[int, int] = (0, 1),
) -> FileOutcome:
    """Scan one file; binary, huge and undecodable files are skipped with a reason."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return FileOutcome([], skipped="huge")
        data = path.read_bytes()
    except OSError:
        return FileOutcome([], skipped="unreadable")
    if b"\0" in data[:8192]:
        return FileOutcome([], skipped="binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = data.decode("latin-1") if _mostly_text(data) else ""
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
            text = ""
        if not text:
            return FileOutcome([], skipped="undecodable")
    lines = text.count("\n") + 1
    if language == "rust":
        from jarvis_graph.security.rust_rules import scan_rust_text

        if part[0]:
            return FileOutcome([])
        return FileOutcome(scan_rust_text(text, label), lines)
    from jarvis_graph.security.c_scan import scan_c_text

    issues = scan_c_text(text, label, language, headers, path, part)
    return FileOutcome(issues, lines if part[0] == 0 else 0)


def _mostly_text(data: bytes) -> bool:
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in data[:4096])
    return printable >= 0.95 * min(len(data), 4096)


Job = tuple[str, str, str, int, int]


def _scan_batch(batch: list[Job], headers: dict[str, str]) -> list[FileOutcome]:
    return [scan_file(Path(p), lang, label, headers, (k, n)) for p, lang, label, k, n in batch]


def scan_path(
    path: str | Path,
    languages: tuple[str, ...] = LANGUAGES,
    *,
    workers: int | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    progress: Callable[[int, int], None] | None = None,
) -> ScanResult:
    """Scan a file or a tree and return the issues at or above ``min_confidence``.

    Raises:
        ScanInputError: the path is missing or unreadable, or holds no file of ``languages``.
    """
    root = Path(path)
    if not root.exists():
        msg = f"{str(path)!r} does not exist; give a file or folder of C, C++ or Rust source"
        raise ScanInputError(msg)
    if not os.access(root, os.R_OK) or (root.is_dir() and not os.access(root, os.X_OK)):
        msg = f"{str(path)!r} cannot be read (permission denied); check its permissions"
        raise ScanInputError(msg)
    files = list(iter_sources(root, languages))
    if not files:
        exts = ", ".join(sorted(e for e, lang in EXTENSIONS.items() if lang in languages))
        msg = f"no {'/'.join(languages)} source files under {str(path)!r} (extensions {exts})"
        raise ScanInputError(msg)
    base = root if root.is_dir() else root.parent
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    jobs = _jobs(files, base, workers)
    headers = {p.name: str(p) for p, lang in files if p.suffix.lower() in (".h", ".hpp", ".hh")}
    if root.is_dir() and "c" not in languages:  # C++ trees include .h headers too
        headers.update({p.name: str(p) for p in iter_header_files(root)})
    outcomes = _run(jobs, headers, workers, progress)
    result = ScanResult(root=str(root), min_confidence=min_confidence)
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    for (_, _, _, part, _), outcome in zip(jobs, outcomes, strict=True):
        if outcome.skipped:
            skipped[outcome.skipped] += part == 0
            continue
        result.files_scanned += part == 0
        result.lines_scanned += outcome.lines
        for issue in outcome.issues:
            if issue.confidence >= min_confidence and issue.id not in seen:
                seen.add(issue.id)
                result.issues.append(issue)
    result.issues.sort(key=lambda i: (i.file, i.line, i.pattern))
    result.skipped = dict(skipped)
    return result


def _jobs(files: list[tuple[Path, str]], base: Path, workers: int) -> list[Job]:
    """One job per file; a big C/C++ file is split into one job per worker."""
    jobs: list[Job] = []
    for path, lang in files:
        label = path.relative_to(base).as_posix()
        try:
            big = lang != "rust" and workers > 1 and path.stat().st_size > SPLIT_BYTES
        except OSError:
            big = False
        n = workers if big else 1
        jobs.extend((str(path), lang, label, k, n) for k in range(n))
    return jobs


def _batches(jobs: list[Job], workers: int) -> list[list[int]]:
    """Job indexes grouped into batches, the costliest batch first.

    A part of a split file is a batch of its own; small files are grouped up to a share of
    the tree's bytes, so that the workers get many even pieces and the parts of one big file
    run side by side instead of one after another in a single worker.
    """
    sizes = []
    for path, *_ in jobs:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    share = max(sum(sizes) // (workers * 8), 1)
    batches: list[list[int]] = []
    current: list[int] = []
    weight = 0
    for i, job in enumerate(jobs):
        if job[4] > 1:
            batches.append([i])
            continue
        current.append(i)
        weight += sizes[i]
        if weight >= share or len(current) >= 64:
            batches.append(current)
            current, weight = [], 0
    if current:
        batches.append(current)

    def cost(batch: list[int]) -> int:
        return sum(sizes[i] // jobs[i][4] for i in batch)

    return sorted(batches, key=cost, reverse=True)


def _run(
    jobs: list[Job],
    headers: dict[str, str],
    workers: int | None,
    progress: Callable[[int, int], None] | None,
) -> list[FileOutcome]:
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    batches = _batches(jobs, workers)
    out: list[FileOutcome | None] = [None] * len(jobs)
    done = 0

    def collect(batch: list[int], outcomes: list[FileOutcome]) -> None:
        nonlocal done
        for i, outcome in zip(batch, outcomes, strict=True):
            out[i] = outcome
        done += len(batch)
        if progress:
            progress(done, len(jobs))

    if workers <= 1 or len(batches) == 1:
        for batch in batches:
            collect(batch, _scan_batch([jobs[i] for i in batch], headers))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {
                pool.submit(_scan_batch, [jobs[i] for i in batch], headers): batch
                for batch in batches
            }
            for future in as_completed(futures):
                collect(futures[future], future.result())
    return [o for o in out if o is not None]
