"""Rule ``c-command-nonliteral``: a shell or exec command that is not a literal (a maybe)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import strip_casts, var_of
from jarvis_graph.security.model import Rule
from jarvis_graph.security.rules.c_command_injection import COMMANDS, EXEC, tainted_arg

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-command-nonliteral",
    "c",
    "command_injection",
    "CWE-78",
    "low",
    "shell command that is not a literal",
    "avoid the shell or build the command from validated parts",
    calls=COMMANDS,
    call_pattern=EXEC,
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """The command is an expression the walk holds no facts for."""
    if not args or tainted_arg(scan, name, args) is not None:
        return  # nothing to run, or c-command-injection's finding
    first = strip_casts(args[0])
    if scan.src.literal(first) is None and var_of(first, scan.env)[1] is None:
        scan.report(RULE.id, st.line, f"command '{first}'", first)
