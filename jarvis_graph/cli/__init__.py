"""The ``jarvis`` command line. Heavy imports happen inside the commands that need them.

Every import of another Jarvis package inside a command function is deferred for one
reason: ``jarvis`` (and ``jarvis <command> --help``) starts on typer alone, without
pydantic, YAML, langchain or langgraph. Each block of them opens with a ``# deferred:``
comment pointing here, as every such import in the package must (tests/unit/test_import_rules.py).
"""
