"""Rule ``c-weak-prng``: a key, token, nonce or salt set from ``rand()``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Literal, Statement
    from jarvis_graph.security.c_walk import Walk

_RAND_CALL = re.compile(r"\b(?:rand|random|RAND\d*)\s*\(")
_RANDOM_NAME = re.compile(r"(?i)(key|token|nonce|salt|secret|passw|session|\biv\b)")

RULE = Rule(
    "c-weak-prng",
    "c",
    "weak_random",
    "CWE-338",
    "medium",
    "rand()/random() used for a secret value",
    "use a CSPRNG (getrandom, arc4random)",
    hints=("rand", "RAND"),
)


def on_set(scan: Walk, name: str, rhs: str, literal: Literal | None, st: Statement) -> None:
    """A variable named like a secret gets a value from rand()/random()."""
    if _RAND_CALL.search(rhs) and _RANDOM_NAME.search(name):
        scan.report(RULE.id, st.line, f"'{name}' gets a rand() value", name)
