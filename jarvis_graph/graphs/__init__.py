"""Graph wiring: ``build_<name>_graph()`` factories and module-level compiled ``graph``s."""
