"""``python -m jarvis_graph.cli``."""

from jarvis_graph.cli.app import main

main()
