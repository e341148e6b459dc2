"""Graph wiring: ``build_<name>_graph()`` factories and module-level compiled ``graph``s.

The graphs a tool may start a run of (sub-agents) are registered by name here, imported
when first asked for, since the features that start them may not import this package.

A server that loads the graphs (``langgraph dev``, ``jarvis ui``'s server, a worker of
``jarvis serve``) holds the keys they use: importing this package makes its process
non-dumpable, as the ``jarvis`` command makes its own (:mod:`jarvis_graph.hardening`).
"""

from importlib import import_module

from jarvis_graph.graph_registry import register
from jarvis_graph.hardening import harden_process

harden_process()

register("agent", lambda: import_module("jarvis_graph.graphs.agent").graph)
register("code_agent", lambda: import_module("jarvis_graph.graphs.code_agent").graph)
register("chain", lambda: import_module("jarvis_graph.graphs.chain").compile_chain)
