"""``python -m jarvis_graph.cli``."""

from jarvis_graph.cli.entry import main

main()
