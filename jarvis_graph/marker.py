"""The auto-complete marker, and the near misses models write instead of it.

A model asked to end its answer with ``!!!COMPLETE!!!`` also writes ``!!COMPLETE!!``,
``!!! COMPLETE !!!`` or ``!!!complete!!!``. Each of them ends the task and none of them may
reach the user's screen or the stored answer (the terminal shows an answer only once it is
whole and checked). Plain functions over strings (``re`` only).
"""

from __future__ import annotations

import re

COMPLETE_MARKER = "!!!COMPLETE!!!"

# One to four "!" on each side, optional blanks inside, any case: every variant seen in
# practice, while "complete!" or "Task complete." (no leading "!") stay ordinary prose.
_MARKER = re.compile(r"!{1,4}[ \t]*complete[ \t]*!{1,4}", re.IGNORECASE)


def has_complete_marker(text: str) -> bool:
    """Whether ``text`` holds the auto-complete marker or a near miss of it."""
    return _MARKER.search(text) is not None


def strip_complete_marker(text: str) -> str:
    """``text`` without the marker and its near misses, trimmed."""
    return _MARKER.sub("", text).strip()
