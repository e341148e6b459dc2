"""The local web console (``jarvis ui``): pages served beside the LangGraph API, offline.

:mod:`.server` is the console's own small web server: the pages in ``static/``, the
standard LangGraph API of a ``langgraph dev`` (or ``jarvis serve``) server behind one
token, and the few things the API has no call for (the code around a finding's line).
"""
