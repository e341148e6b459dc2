"""The direct scan as a command, for ``jarvis sec scan`` and ``python -m jarvis_graph.security``.

One implementation for both (``jarvis sec scan`` without ``--verify``): same messages and
exit codes. It imports the engine only, so ``jarvis sec scan`` starts as fast as the engine: the
``jarvis`` entry point (``jarvis_graph.cli.entry``) sends a plain scan here before typer and
the agent's command line load.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import NoReturn

from jarvis_graph.security.report import FORMATS, render
from jarvis_graph.security.scanner import (
    DEFAULT_MIN_CONFIDENCE,
    LANGUAGES,
    ScanInputError,
    ScanResult,
    scan_path,
)
from jarvis_graph.visible_text import visible


def languages(value: str) -> tuple[str, ...]:
    """``--lang``'s languages.

    Raises:
        ScanInputError: None given, or one the scanner does not know.
    """
    langs = tuple(x.strip().lower() for x in value.split(",") if x.strip())
    bad = [x for x in langs if x not in LANGUAGES]
    if bad or not langs:
        raise ScanInputError(
            f"unknown language(s) {', '.join(bad) or value!r}; use {','.join(LANGUAGES)}"
        )
    return langs


def check_format(fmt: str) -> None:
    """Raises ScanInputError for a report format that does not exist."""
    if fmt not in FORMATS:
        raise ScanInputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def summary(result: ScanResult) -> str:
    """The line a scan ends with on stderr."""
    skipped = f"; skipped {result.skipped}" if result.skipped else ""
    return (
        f"scanned {result.files_scanned} files ({result.lines_scanned} lines): "
        f"{len(result.issues)} issues{skipped}"
    )


def write_report(text: str, output: Path | None) -> None:
    """The report to ``output`` (its folder made), or to stdout.

    Raises:
        ScanInputError: ``output`` cannot be written (the reason is in the message).
    """
    if output is None:  # a terminal: the quoted code and file names may hold escapes
        print(visible(text))
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ScanInputError(
            f"cannot write the report to {output}: {exc.strerror or exc}"
        ) from None
    print(f"report written to {output}", file=sys.stderr)


class _Refused(Exception):
    """The arguments are not a plain direct scan."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def parser(prog: str, *, strict: bool = False) -> argparse.ArgumentParser:
    """The options of a direct scan (``jarvis sec scan --help`` describes them all).

    ``strict``: a parser that raises instead of printing usage and exiting.
    """
    kind = _Parser if strict else argparse.ArgumentParser
    p = kind(prog=prog, add_help=not strict, allow_abbrev=False, description=__doc__)
    p.add_argument("path", help="file or folder to scan")
    p.add_argument("--format", "-f", default="json", help="json, md or sarif")
    p.add_argument("--output", "-o", help="write the report here (default: stdout)")
    p.add_argument("--lang", default=",".join(LANGUAGES), help="languages, comma-separated")
    p.add_argument("--min-confidence", type=float, help="report issues at or above this (0..1)")
    p.add_argument("--workers", type=int, help="scan processes (default: CPUs)")
    return p


def parse(argv: list[str]) -> argparse.Namespace | None:
    """``argv`` read as a direct scan; ``None`` when it asks for anything else.

    ``--help``, ``--verify``, an unknown option or a malformed value: the full command line
    handles those.
    """
    try:
        args, rest = parser("jarvis sec scan", strict=True).parse_known_args(argv)
    except _Refused:
        return None
    return None if rest else args


def run(args: argparse.Namespace) -> int:
    """Scan, write the report, say what was scanned; the exit code (2: bad input)."""
    try:
        check_format(args.format)
        langs = languages(args.lang)
        threshold = DEFAULT_MIN_CONFIDENCE if args.min_confidence is None else args.min_confidence
        result = scan_path(args.path, langs, workers=args.workers, min_confidence=threshold)
    except ScanInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary(result), file=sys.stderr)
    try:
        write_report(render(result, args.format), Path(args.output) if args.output else None)
    except ScanInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def run_and_exit(args: argparse.Namespace) -> NoReturn:
    """:func:`run`, then end the process at once with its exit code (130 on Ctrl-C).

    No cyclic garbage collection in this process: the scan pauses it anyway, and the first
    collection after the scan would walk every object the scan made to find next to no
    cycles (about 4 % of a big tree's CPU time). The report is out and the workers have
    exited: tearing the interpreter down (freeing the scan's modules and caches) would take
    longer than many scans of a small tree.
    """
    gc.disable()
    try:
        code = run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
