"""Documents: text out of PDF, Word, spreadsheet, HTML and Markdown files, in anchored parts.

Engine layer: imports no langgraph or langchain. :mod:`jarvis_graph.memory.documents`
indexes the parts in the project's memory store; :mod:`jarvis_graph.features.documents`
gives the model ``ask_document`` and ``read_document``.
"""
