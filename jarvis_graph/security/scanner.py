"""The direct scan: find C/C++/Rust files under a path and run the rules on them in parallel."""

from __future__ import annotations

import gc
import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jarvis_graph.security.files import MAX_FILE_BYTES, Tree, inside, read_regular
from jarvis_graph.security.model import Issue, ScanResult

if TYPE_CHECKING:
    from concurrent.futures import Future

EXTENSIONS = {
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".c++": "cpp", ".rs": "rust",
}  # fmt: skip
LANGUAGES = ("c", "cpp", "rust")
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "target", "__pycache__"}
DEFAULT_MIN_CONFIDENCE = 0.4
SPLIT_BYTES = 300_000
# a big file is walked in this many parts per worker, taken by whichever worker is free
PARTS_PER_WORKER = 8


class ScanInputError(ValueError):
    """The path to scan does not exist, cannot be read or holds no source of the languages."""


@dataclass(frozen=True)
class FileOutcome:
    """What scanning one file gave: issues and lines, or why it was skipped."""

    issues: list[Issue]
    lines: int = 0
    skipped: str = ""


def iter_sources(
    root: Path, languages: tuple[str, ...], outside: list[Path] | None = None
) -> Iterator[tuple[Path, str]]:
    """``(path, language)`` of the source files under ``root`` (or ``root`` itself).

    Folders are listed in name order, a folder's files before its subfolders. A linked
    folder is not entered, and a linked file whose target is outside ``root`` (symlinks
    resolved) is not listed: it goes to ``outside`` when that list is given.
    """
    if root.is_file():
        lang = EXTENSIONS.get(root.suffix.lower())
        if lang in languages:
            yield root, lang
        return
    yield from _sources_in(str(root), os.path.realpath(root), languages, outside)


def _sources_in(
    folder: str, real_root: str, languages: tuple[str, ...], outside: list[Path] | None
) -> Iterator[tuple[Path, str]]:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return  # an unreadable folder holds nothing to scan
    folders = []
    for entry in entries:
        try:
            if entry.is_dir():
                if not entry.is_symlink() and entry.name not in SKIP_DIRS:
                    folders.append(entry.path)
                continue
        except OSError:
            continue
        lang = EXTENSIONS.get(os.path.splitext(entry.name)[1].lower())
        if lang not in languages:
            continue
        if entry.is_symlink() and not inside(real_root, entry.path):
            if outside is not None:
                outside.append(Path(entry.path))
            continue
        yield Path(entry.path), lang
    for sub in folders:
        yield from _sources_in(sub, real_root, languages, outside)


def iter_header_files(root: Path) -> Iterator[Path]:
    """Header files under ``root`` (for include lookups)."""
    for path, _ in iter_sources(root, ("c", "cpp")):
        if path.suffix.lower() in (".h", ".hpp", ".hh", ".hxx"):
            yield path


def read_source(path: Path) -> tuple[str, str]:
    """``(text, "")``, or ``("", reason)`` for a huge, unreadable, binary or undecodable file.

    Only a regular file is read: a FIFO or a device named like source is skipped
    (``read_regular``).
    """
    data, skipped = read_regular(path, MAX_FILE_BYTES)
    if skipped:
        return "", skipped
    if b"\0" in data[:8192]:
        return "", "binary"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        if _mostly_text(data):
            return data.decode("latin-1"), ""
        return "", "undecodable"


def scan_file(path: Path, language: str, label: str, tree: Tree | None = None) -> FileOutcome:
    """Scan one file; binary, huge and undecodable files are skipped with a reason."""
    text, skipped = read_source(path)
    if skipped:
        return FileOutcome([], skipped=skipped)
    lines = text.count("\n") + 1
    try:
        if language == "rust":
            from jarvis_graph.security.rust_rules import scan_rust_text

            return FileOutcome(scan_rust_text(text, label), lines)
        from jarvis_graph.security.c_scan import scan_c_text

        return FileOutcome(scan_c_text(text, label, language, tree, path), lines)
    except Exception as exc:  # noqa: BLE001 - one odd file must not end the scan of a tree
        return _failed(label, exc)


def _failed(label: str, exc: Exception) -> FileOutcome:
    """A file the engine could not analyse: counted as skipped ("error") and logged."""
    _warn("security scan: %s could not be analysed (%s: %s)", label, type(exc).__name__, exc)
    return FileOutcome([], skipped="error")


def _warn(msg: str, *args: object) -> None:
    """Log a warning; ``logging`` is imported here, by the rare scan that has one to give."""
    import logging  # the start-up of a scan is part of its cost: most scans never warn

    logging.getLogger(__name__).warning(msg, *args)


def _mostly_text(data: bytes) -> bool:
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in data[:4096])
    return printable >= 0.95 * min(len(data), 4096)


# (path, language, label) of one file
Job = tuple[str, str, str]


def _scan_batch(batch: list[Job], tree: Tree) -> list[FileOutcome]:
    return [scan_file(Path(p), lang, label, tree) for p, lang, label in batch]


def _walk_part(prepared: Any, language: str, part: tuple[int, int]) -> list[Issue] | str:
    """The issues of one part of a big file, or the error that stopped its walk."""
    from jarvis_graph.security.c_scan import walk_c

    try:
        return walk_c(prepared, language, part)
    except Exception as exc:  # noqa: BLE001 - reported as the file's outcome
        return f"{type(exc).__name__}: {exc}"


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
    outside: list[Path] = []
    files = list(iter_sources(root, languages, outside))
    if not files and not outside:
        exts = ", ".join(sorted(e for e, lang in EXTENSIONS.items() if lang in languages))
        msg = f"no {'/'.join(languages)} source files under {str(path)!r} (extensions {exts})"
        raise ScanInputError(msg)
    base = root if root.is_dir() else root.parent
    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    jobs = [(str(p), lang, p.relative_to(base).as_posix()) for p, lang in files]
    headers = {p.name: str(p) for p, lang in files if p.suffix.lower() in (".h", ".hpp", ".hh")}
    if root.is_dir() and "c" not in languages:  # C++ trees include .h headers too
        headers.update({p.name: str(p) for p in iter_header_files(root)})
    tree = Tree(os.path.realpath(base), headers)
    with _gc_paused():
        outcomes = _run(jobs, tree, workers, progress) if jobs else []
    result = ScanResult(root=str(root), min_confidence=min_confidence)
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    for outcome in outcomes:
        if outcome.skipped:
            skipped[outcome.skipped] += 1
            continue
        result.files_scanned += 1
        result.lines_scanned += outcome.lines
        for issue in outcome.issues:
            if issue.confidence >= min_confidence and issue.id not in seen:
                seen.add(issue.id)
                result.issues.append(issue)
    result.issues.sort(key=lambda i: (i.file, i.line, i.pattern))
    if outside:
        skipped["outside the scanned tree"] += len(outside)
    result.skipped = dict(skipped)
    return result


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection during the scan (the workers, forked here, inherit it).

    The scan makes few reference cycles, but a parsed big file is a heap of millions of
    objects that every full collection would walk again: about a tenth of the scan time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _sizes(jobs: list[Job]) -> list[int]:
    sizes = []
    for path, *_ in jobs:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    return sizes


def _batches(sizes: list[int], workers: int) -> list[list[int]]:
    """Indexes of ``sizes`` grouped into batches of about a share of the bytes, biggest first."""
    share = max(sum(sizes) // (workers * 8), 1)
    batches: list[list[int]] = []
    current: list[int] = []
    weight = 0
    for i in range(len(sizes)):
        current.append(i)
        weight += sizes[i]
        if weight >= share or len(current) >= 64:
            batches.append(current)
            current, weight = [], 0
    if current:
        batches.append(current)
    return sorted(batches, key=lambda batch: sum(sizes[i] for i in batch), reverse=True)


def _run(
    jobs: list[Job],
    tree: Tree,
    workers: int,
    progress: Callable[[int, int], None] | None,
) -> list[FileOutcome]:
    """Outcomes of the jobs, in job order.

    Small files go to the workers in batches, the biggest first. A C/C++ file big enough to
    hold up the others (over ``SPLIT_BYTES`` and over a quarter of the tree's share of one
    worker) is read and parsed once, here, while one early worker starts on the small files;
    the workers, forked after the parse, then walk its functions in ``PARTS_PER_WORKER``
    parts each, ahead of the small files left. If a worker process dies, what it left is
    scanned again one file at a time.
    """
    sizes = _sizes(jobs)
    out: list[FileOutcome | None] = [None] * len(jobs)
    done = 0

    def collect(indexes: list[int], outcomes: list[FileOutcome]) -> None:
        nonlocal done
        for i, outcome in zip(indexes, outcomes, strict=True):
            out[i] = outcome
        done += len(indexes)
        if progress:
            progress(done, len(jobs))

    big_enough = max(SPLIT_BYTES, sum(sizes) // (workers * 4))
    big = [i for i, job in enumerate(jobs) if sizes[i] > big_enough and job[1] != "rust"]
    if workers <= 1 or (len(jobs) <= 1 and not big):
        for i in range(len(jobs)):
            collect([i], _scan_batch([jobs[i]], tree))
        return _all(out)
    # the process pool is imported only here: a one-worker scan does without its start-up
    from concurrent.futures.process import BrokenProcessPool

    small = [i for i in range(len(jobs)) if i not in set(big)]
    batches = [[small[i] for i in b] for b in _batches([sizes[i] for i in small], workers)]
    context = _fork_context()
    _import_engines({job[1] for job in jobs})  # once here, not in every forked worker
    try:
        _run_pools(jobs, tree, workers, sizes, big, batches, context, collect)
    except BrokenProcessPool as exc:
        _warn("security scan: a worker process died (%s); scanning what it left", exc)
        _rescue(jobs, [i for i, o in enumerate(out) if o is None], tree, context, collect)
    return _all(out)


def _run_pools(
    jobs: list[Job],
    tree: Tree,
    workers: int,
    sizes: list[int],
    big: list[int],
    batches: list[list[int]],
    context: Any,
    collect: Callable[[list[int], list[FileOutcome]], None],
) -> None:
    """``_run`` with worker processes; a dead worker ends it with ``BrokenProcessPool``."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    running: dict[Future[Any], Callable[[Any], None]] = {}
    parts: list[tuple[int, int, str, int]] = []  # (job, key in _PREPARED, language, part)
    executors: list[ProcessPoolExecutor] = []
    with ExitStack() as stack:
        early: list[Future[Any]] = []
        if big and batches:  # one worker scans small files while the big ones are parsed here
            starter = stack.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=context))
            executors.append(starter)
            for batch in batches:
                early.append(starter.submit(_scan_batch, [jobs[i] for i in batch], tree))
                running[early[-1]] = partial(collect, batch)
        stack.callback(lambda: [_PREPARED.pop(key, None) for _, key, _, _ in parts])
        inherits = context is not None and context.get_start_method() == "fork"
        for i in sorted(big, key=lambda i: sizes[i], reverse=True):
            prepared = _prepare(jobs[i], tree)
            if isinstance(prepared, FileOutcome):
                collect([i], [prepared])
                continue
            if inherits:  # split the lines once here, not in every forked worker that reports
                _ = prepared[0][0].lines
            key = next(_KEYS)
            _PREPARED[key] = prepared
            parts.extend((i, key, jobs[i][1], k) for k in range(workers * PARTS_PER_WORKER))
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers, mp_context=context))
        executors.append(pool)
        found: dict[int, dict[int, list[Issue] | str]] = {}
        for i, key, language, k in parts:
            part = (k, workers * PARTS_PER_WORKER)
            future = (
                pool.submit(_walk_inherited, key, language, part)
                if inherits
                else pool.submit(_walk_part, _PREPARED[key][0], language, part)
            )
            running[future] = partial(
                _part_done, found, i, k, jobs[i][2], _PREPARED[key][1], part[1], collect
            )
        for n, batch in enumerate(batches):
            if early:  # the early worker keeps what it has started; the rest moves here
                if not early[n].cancel():
                    continue
                running.pop(early[n])
            scanned = pool.submit(_scan_batch, [jobs[i] for i in batch], tree)
            running[scanned] = partial(collect, batch)
        try:
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    running.pop(future)(future.result())
        except BrokenProcessPool:
            for executor in executors:  # what has not started is scanned again, not run here
                executor.shutdown(wait=True, cancel_futures=True)
            raise


def _rescue(
    jobs: list[Job],
    left: list[int],
    tree: Tree,
    context: Any,
    collect: Callable[[list[int], list[FileOutcome]], None],
) -> None:
    """Scan what a dead worker left, one file per task.

    A file that ends its worker again is counted as skipped (``error``); the others are
    still scanned.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    while left:
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            try:
                while left:
                    outcome = pool.submit(_scan_batch, [jobs[left[0]]], tree).result()
                    collect([left.pop(0)], outcome)
            except BrokenProcessPool:
                i = left.pop(0)
                collect([i], [_failed(jobs[i][2], RuntimeError("its scan ended the worker"))])


# big files parsed before the workers start: key -> (prepared model, line count)
_PREPARED: dict[int, tuple[Any, int]] = {}
_KEYS = itertools.count()


def _import_engines(languages: set[str]) -> None:
    if languages - {"rust"}:
        import jarvis_graph.security.c_scan  # noqa: F401
    if "rust" in languages:
        import jarvis_graph.security.rust_rules  # noqa: F401


def _fork_context() -> Any:
    """The ``fork`` start method where there is one: workers then inherit ``_PREPARED``."""
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


def _prepare(job: Job, tree: Tree) -> tuple[Any, int] | FileOutcome:
    """Read and parse one big C/C++ file: the model and its line count, or why it was skipped."""
    from jarvis_graph.security.c_scan import prepare_c

    path, _, label = job
    text, skipped = read_source(Path(path))
    if skipped:
        return FileOutcome([], skipped=skipped)
    try:
        prepared = prepare_c(text, label, tree, Path(path))
    except Exception as exc:  # noqa: BLE001 - one odd file must not end the scan of a tree
        return _failed(label, exc)
    return prepared, text.count("\n") + 1


def _walk_inherited(key: int, language: str, part: tuple[int, int]) -> list[Issue] | str:
    return _walk_part(_PREPARED[key][0], language, part)


def _part_done(
    found: dict[int, dict[int, list[Issue] | str]],
    index: int,
    part: int,
    label: str,
    lines: int,
    parts: int,
    collect: Callable[[list[int], list[FileOutcome]], None],
    issues: list[Issue] | str,
) -> None:
    """Keep one part's issues; with the last part, the file's outcome.

    Parts are merged in part order, not in the order they finished: of two equally
    confident findings the first is kept, and that must not depend on the workers' timing.
    """
    found.setdefault(index, {})[part] = issues
    if len(found[index]) < parts:
        return
    got = found.pop(index)
    done = [got[k] for k in sorted(got)]
    errors = [part for part in done if isinstance(part, str)]
    if errors:
        collect([index], [_failed(label, RuntimeError(errors[0]))])
        return
    from jarvis_graph.security.c_scan import strongest

    merged = strongest(i for part in done if not isinstance(part, str) for i in part)
    collect([index], [FileOutcome(merged, lines)])


def _all(outcomes: list[FileOutcome | None]) -> list[FileOutcome]:
    missing = [i for i, o in enumerate(outcomes) if o is None]
    if missing:  # pragma: no cover - every job reports exactly once
        raise RuntimeError(f"scan jobs without an outcome: {missing[:5]}")
    return [o for o in outcomes if o is not None]
