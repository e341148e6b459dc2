"""``python -m jarvis_graph.security PATH``: the direct scan without the agent CLI around it.

Same engine and defaults as ``jarvis sec scan`` (no ``--verify``), with a start-up cost of
the engine alone; exit code 2 with a message for a bad path or an empty tree.
"""

from __future__ import annotations

import os
import sys

from jarvis_graph.security.direct import parser, run


def main(argv: list[str] | None = None) -> int:
    """Scan, write the report, return the exit code."""
    return run(parser("python -m jarvis_graph.security").parse_args(argv))


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The report is written and every worker has exited: skip tearing down the interpreter
    # (freeing the scan's modules and caches takes longer than many scans of a small tree).
    os._exit(code)
