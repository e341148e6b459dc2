"""Rule ``c-command-injection``: a shell or exec call given outside input."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import var_of
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

COMMANDS = frozenset({
    "system", "popen", "_popen", "_wsystem", "_wpopen", "execl", "execlp", "execle", "execv",
    "execvp", "_execl", "_execlp", "_wexecl", "_wexeclp", "_spawnl", "_wspawnl", "_execv",
    "_wexecv",
})  # fmt: skip
EXEC = re.compile(r"_?w?(?:exec|spawn)[lv]p?e?")
# the shells: only their first argument is a command line
SHELLS = frozenset({"system", "_wsystem", "popen", "_popen", "_wpopen"})

RULE = Rule(
    "c-command-injection",
    "c",
    "command_injection",
    "CWE-78",
    "high",
    "shell command built from outside data",
    "avoid the shell: exec a fixed program with an argument vector; validate the input",
    calls=COMMANDS,
    call_pattern=EXEC,
)


def tainted_arg(scan: Walk, name: str, args: list[str]) -> str | None:
    """The variable holding outside input that the call runs ("" unnamed), or ``None``."""
    for arg in args[:1] if name in SHELLS else args:
        b, var = var_of(arg, scan.env)
        if var is not None and var.taint == "outside input":
            return b or ""
    return None


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """The command (or an exec argument) holds outside input."""
    if not args:
        return
    b = tainted_arg(scan, name, args)
    if b is not None:
        scan.report(RULE.id, st.line, f"'{b}' holds outside input", b)
