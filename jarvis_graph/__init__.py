"""Jarvis Graph: the Jarvis agent as a LangGraph stateful graph.

Importing this package must stay cheap: no langchain or langgraph imports here.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
