"""The ``jarvis`` console script: a plain ``jarvis sec scan`` goes straight to the engine.

A direct scan of a small tree takes a few milliseconds; the full command line (typer, click
and the command modules) would take several times that to load first. Everything else, and
any scan the direct path does not take as it is (``--verify``, ``--help``, a malformed
option), goes to the full command line, which gives the same results and messages.

Before either, the process is made non-dumpable (:func:`jarvis_graph.hardening.harden_process`):
it holds the user's keys from its first instruction.
"""

from __future__ import annotations

import sys

from jarvis_graph.hardening import harden_process


def main() -> None:
    """Console-script entry point."""
    harden_process()
    argv = sys.argv[1:]
    if argv[:2] == ["sec", "scan"]:
        # deferred: the engine alone for a plain scan (see the module docstring)
        from jarvis_graph.security.direct import parse, run_and_exit

        args = parse(argv[2:])
        if args is not None:
            run_and_exit(args)
    # deferred: the full command line only when the direct path did not take the command
    from jarvis_graph.cli.app import main as full

    full()
