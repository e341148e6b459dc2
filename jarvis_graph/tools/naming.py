"""Tool names the model can use: ``^[a-zA-Z0-9_-]{1,64}$``, stable and reversible.

MCP tools are named ``<server>__<tool>``. Characters outside the pattern become ``_``;
a name that is too long, or that two tools would share, is cut and given a short hash of
the original (server, tool) pair. The result depends only on the set of names, never on
the order they arrive in, and :class:`NameMap` turns a name back into its origin.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_LEN = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def clean(part: str) -> str:
    """``part`` with every character outside the name pattern replaced by ``_``."""
    return _BAD.sub("_", part) or "_"


def _hashed(base: str, origin: tuple[str, str]) -> str:
    digest = hashlib.sha256("\0".join(origin).encode("utf-8")).hexdigest()[:8]
    return f"{base[: MAX_LEN - len(digest) - 1]}-{digest}"


@dataclass
class NameMap:
    """Model-facing tool names <-> (source, original tool name)."""

    _to_origin: dict[str, tuple[str, str]] = field(default_factory=dict)

    def origin(self, name: str) -> tuple[str, str] | None:
        """The (source, original name) behind a model-facing ``name``."""
        return self._to_origin.get(name)

    def name_of(self, source: str, tool: str) -> str | None:
        """The model-facing name given to ``tool`` of ``source``."""
        for name, origin in self._to_origin.items():
            if origin == (source, tool):
                return name
        return None

    def names(self) -> list[str]:
        """Every model-facing name, sorted."""
        return sorted(self._to_origin)


def assign_names(origins: list[tuple[str, str]], taken: set[str] | frozenset[str]) -> NameMap:
    """Give each (server, tool) pair a valid, unique name ``server__tool``.

    Args:
        origins: The pairs to name.
        taken: Names already used (built-in and user tools); never handed out again.
    """
    wanted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for server, tool in dict.fromkeys(origins):
        base = f"{clean(server)}{SEPARATOR}{clean(tool)}"
        if len(base) > MAX_LEN:
            base = _hashed(base, (server, tool))
        wanted[base].append((server, tool))
    result = NameMap()
    for base, group in wanted.items():
        if len(group) == 1 and base not in taken:
            result._to_origin[base] = group[0]
            continue
        for origin in group:  # every member of a clash is hashed: order does not matter
            result._to_origin[_hashed(base, origin)] = origin
    return result
