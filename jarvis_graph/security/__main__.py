"""``python -m jarvis_graph.security PATH``: the direct scan without the agent CLI around it.

Same engine and defaults as ``jarvis sec scan`` (no ``--verify``), with a start-up cost of
the engine alone; exit code 2 with a message for a bad path or an empty tree.
"""

from __future__ import annotations

import argparse
import os
import sys

from jarvis_graph.security import (
    DEFAULT_MIN_CONFIDENCE,
    FORMATS,
    LANGUAGES,
    ScanInputError,
    render,
    scan_path,
)


def main(argv: list[str] | None = None) -> int:
    """Scan, write the report, return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m jarvis_graph.security", description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--format", "-f", choices=FORMATS, default="json")
    parser.add_argument("--output", "-o")
    parser.add_argument("--lang", default=",".join(LANGUAGES))
    parser.add_argument("--min-confidence", type=float, default=DEFAULT_MIN_CONFIDENCE)
    parser.add_argument("--workers", type=int)
    args = parser.parse_args(argv)
    langs = tuple(x.strip() for x in args.lang.split(",") if x.strip())
    if not langs or any(x not in LANGUAGES for x in langs):
        print(f"error: --lang {args.lang!r}: use some of {','.join(LANGUAGES)}", file=sys.stderr)
        return 2
    try:
        result = scan_path(
            args.path, langs, workers=args.workers, min_confidence=args.min_confidence
        )
    except ScanInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = render(result, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text)
    print(f"{len(result.issues)} issues in {result.files_scanned} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written and every worker has exited: skip tearing down the interpreter
    # (freeing the scan's modules and caches takes longer than many scans of a small tree).
    os._exit(code)
