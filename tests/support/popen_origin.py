"""Say where a process was started when its ``Popen`` is dropped unwaited.

Python reports such a ``Popen`` (``ResourceWarning: subprocess N is still running``, an
error in this suite) when the garbage collector reaches it, often in another test than
the one that started it, and without saying where it was started unless tracemalloc is on
(too slow for the whole suite). :func:`install` keeps a short stack of each ``Popen``'s
start and prints it to stderr with the warning, in the report of the test where it shows.
"""

from __future__ import annotations

import subprocess
import sys
import traceback
from typing import Any

STACK_LINES = 12


def install() -> None:
    """Wrap ``Popen.__init__`` and ``Popen.__del__`` (once per process)."""
    popen: Any = subprocess.Popen
    if getattr(popen, "_origin_installed", False):
        return
    start, drop = popen.__init__, popen.__del__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        self._origin = traceback.format_stack(limit=STACK_LINES)[:-1]
        start(self, *args, **kwargs)

    def delete(self: Any, *args: Any, **kwargs: Any) -> None:
        if getattr(self, "_child_created", False) and self.returncode is None:
            print(
                f"process {self.pid} ({str(self.args)[:120]}) was never waited for; "
                "it was started at:\n" + "".join(getattr(self, "_origin", ["(unknown)\n"])),
                file=sys.stderr,
            )
        drop(self, *args, **kwargs)

    popen.__init__, popen.__del__ = init, delete
    popen._origin_installed = True
