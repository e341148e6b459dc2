"""The auto-complete marker, and the near misses models write instead of it.

A model asked to end its answer with ``!!!COMPLETE!!!`` also writes ``!!COMPLETE!!``,
``!!! COMPLETE !!!`` or ``!!!complete!!!``. Each of them ends the task and none of them may
reach the user's screen or the stored answer. Plain functions over strings (``re`` only):
the terminal renderer uses them as well as the nodes.
"""

from __future__ import annotations

import re

COMPLETE_MARKER = "!!!COMPLETE!!!"

# One to four "!" on each side, optional blanks inside, any case: every variant seen in
# practice, while "complete!" or "Task complete." (no leading "!") stay ordinary prose.
_MARKER = re.compile(r"!{1,4}[ \t]*complete[ \t]*!{1,4}", re.IGNORECASE)
# A text end that may still grow into a marker as more streamed text arrives.
_PARTIAL = re.compile(
    r"!{1,4}[ \t]*(?:c(?:o(?:m(?:p(?:l(?:e(?:t(?:e[ \t]*!{0,4})?)?)?)?)?)?)?)?\Z", re.IGNORECASE
)


def has_complete_marker(text: str) -> bool:
    """Whether ``text`` holds the auto-complete marker or a near miss of it."""
    return _MARKER.search(text) is not None


def strip_complete_marker(text: str) -> str:
    """``text`` without the marker and its near misses, trimmed."""
    return _MARKER.sub("", text).strip()


def split_settled(buffer: str) -> tuple[str, str]:
    """Split streamed text into what can be shown now and what must wait for more text.

    Markers are removed from the shown part; the held part is a tail that is, or may
    still become, a marker (a marker at the very end may yet gain a last ``!``).
    """
    partial = _PARTIAL.search(buffer)
    held = partial.start() if partial else len(buffer)
    return _MARKER.sub("", buffer[:held]), buffer[held:]
