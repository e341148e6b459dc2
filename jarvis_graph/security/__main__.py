"""``python -m jarvis_graph.security PATH``: the direct scan without the agent CLI around it.

Same engine and defaults as ``jarvis sec scan`` (no ``--verify``), with a start-up cost of
the engine alone; exit code 2 with a message for a bad path or an empty tree.
"""

from __future__ import annotations

from jarvis_graph.security.direct import parser, run_and_exit

if __name__ == "__main__":
    run_and_exit(parser("python -m jarvis_graph.security").parse_args())
