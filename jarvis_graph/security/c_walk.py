"""What the C passes and rules see of a function's walk (kept apart so nothing imports back).

:class:`~jarvis_graph.security.c_flow.FunctionScan` is the walk; the passes in ``c_calls``
and ``c_checks`` and the rule checks in ``rules/`` are typed against this view of it, so
they need not import the module that calls them.
"""

from __future__ import annotations

from typing import Protocol

from jarvis_graph.security.c_facts import Var
from jarvis_graph.security.c_source import CSource, Function, Statement


class Walk(Protocol):
    """One function's walk: its source, its facts, and where findings go.

    Attributes:
        src: the file's model (literals, lines).
        env: the facts about each variable, as of the statement being read.
        callees: the functions of the same file, by name.
        depth: 0 for a function's own walk, 1 for a callee walked with a caller's facts.
        loops: ``(index variable, bound, depth)`` of the loops around the statement.
        param_names: the function's parameters.
        returns: ``(name, line)`` of heap memory a ``return`` left held.
        has_heap: whether the walk holds heap memory (what escapes matters only then).
    """

    src: CSource
    env: dict[str, Var]
    callees: dict[str, Function]
    depth: int
    loops: list[tuple[str, int | None, int]]
    param_names: set[str]
    returns: list[tuple[str, int]]
    has_heap: bool

    def report(
        self, rule: str, line: int, detail: str, key: str = "", confidence: float | None = None
    ) -> None:
        """Emit one finding (once per rule and key within the walk)."""

    def follow(self, name: str, args: list[str], st: Statement) -> None:
        """Walk a same-file callee with the facts of the arguments passed to it."""
