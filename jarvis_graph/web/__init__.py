"""The web: searching through a configured backend and reading pages a model names.

Engine layer: imports no langgraph or langchain; :mod:`jarvis_graph.features.web` turns it
into the ``search_web`` and ``read_webpage`` tools.
"""
