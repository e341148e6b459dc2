"""The ``jarvis`` console script: a plain ``jarvis sec scan`` goes straight to the engine.

A direct scan of a small tree takes a few milliseconds; the full command line (typer, click
and the command modules) would take several times that to load first. Everything else, and
any scan the direct path does not take as it is (``--verify``, ``--help``, a malformed
option), goes to the full command line, which gives the same results and messages.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if argv[:2] == ["sec", "scan"]:
        # deferred: the engine alone for a plain scan (see the module docstring)
        from jarvis_graph.security.direct import parse, run

        args = parse(argv[2:])
        if args is not None:
            try:
                code = run(args)
            except KeyboardInterrupt:
                print("interrupted", file=sys.stderr)
                code = 130
            sys.stdout.flush()
            sys.stderr.flush()
            # the report is out and the workers have exited: skip tearing the interpreter
            # down (freeing the scan's modules and caches takes longer than a small scan)
            os._exit(code)
    # deferred: the full command line only when the direct path did not take the command
    from jarvis_graph.cli.app import main as full

    full()
