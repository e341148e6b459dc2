"""Rule ``c-copy-overflow``, reported by a shared pass of the walk.

Writes past a buffer: a copy, fill or format larger than the destination, or a write by a
constant index or a loop bound past the end.
"""

from __future__ import annotations

import re

from jarvis_graph.security.model import Rule

# the calls the copy pass sizes, by how they count what they write
COPY = frozenset({"strcpy", "wcscpy", "_mbscpy", "lstrcpy", "lstrcpyA", "lstrcpyW"})
CAT = frozenset({"strcat", "wcscat", "_mbscat", "lstrcat"})
NCPY = frozenset({"strncpy", "wcsncpy", "_mbsncpy"})
NCAT = frozenset({"strncat", "wcsncat", "_mbsncat"})
MEM = frozenset({"memcpy", "memmove", "wmemcpy", "wmemmove", "CopyMemory", "bcopy"})
SIZED = frozenset({"snprintf", "_snprintf", "vsnprintf", "_vsnprintf", "swprintf", "_snwprintf",
                   "_vsnwprintf", "vswprintf", "fgets", "fgetws"})  # fmt: skip
WIDE = re.compile(r"^(?:wcs|wmem|_?w|_snw|_vsnw)")

RULE = Rule(
    "c-copy-overflow",
    "c",
    "buffer_overflow",
    "CWE-787",
    "high",
    "copy or write larger than the destination buffer",
    "bound the copy by the destination's size (sizeof dest, or the allocation size)",
    calls=frozenset(COPY | CAT | NCPY | NCAT | MEM | SIZED | {"memset", "wmemset"}),
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls._copy (the copy pass) and c_checks._index_use (writes by index)"
