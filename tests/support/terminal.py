"""The ``jarvis`` CLI in a real pseudo-terminal (pexpect): what the user sees and types."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pexpect
import pytest

COLUMNS, LINES = 160, 40
TIMEOUT = 90  # seconds; a loaded machine starts the CLI slowly
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def plain(raw: str) -> str:
    """Terminal output without escape sequences and carriage returns."""
    return _ANSI.sub("", raw).replace("\r", "")


class Terminal:
    """One CLI process in a pty; ``expect`` waits for text on the (ANSI-stripped) screen."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        environ = {
            **os.environ,  # HOME and JARVIS_HOME are the test's (autouse fixture)
            "COLUMNS": str(COLUMNS),
            "LINES": str(LINES),
            "TERM": "xterm-256color",
            **(env or {}),
        }
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "jarvis_graph.cli", *args],
            cwd=str(cwd),
            env=environ,
            encoding="utf-8",
            codec_errors="replace",
            dimensions=(LINES, COLUMNS),
            timeout=TIMEOUT,
        )
        self.raw = ""
        self._mark = 0

    @property
    def screen(self) -> str:
        """Everything printed so far, as plain text."""
        return plain(self.raw)

    def _read(self, wait: float) -> bool:
        """Read what is available; ``False`` at end of output."""
        try:
            self.raw += self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            return False
        return True

    def expect(self, pattern: str, timeout: float = TIMEOUT, regex: bool = False) -> str:
        """Wait until ``pattern`` is shown after the previous match; returns the match."""
        deadline = time.monotonic() + timeout
        while True:
            tail = self.screen[self._mark :]
            found = re.search(pattern if regex else re.escape(pattern), tail)
            if found:
                self._mark += found.end()
                return found.group(0)
            alive = self._read(0.2)
            if not alive and not re.search(pattern if regex else re.escape(pattern), tail):
                pytest.fail(f"the CLI exited before showing {pattern!r}:\n{self.screen}")
            if time.monotonic() > deadline:
                self.child.kill(signal.SIGKILL)
                pytest.fail(f"{pattern!r} not shown within {timeout}s:\n{self.screen}")

    def type(self, line: str) -> None:
        """Type ``line`` and press Enter."""
        self.child.send(line + "\r")

    def exit_code(self, timeout: float = TIMEOUT) -> int:
        """Wait for the process to end; its exit code."""
        deadline = time.monotonic() + timeout
        while self._read(0.2):
            if time.monotonic() > deadline:
                self.child.kill(signal.SIGKILL)
                pytest.fail(f"the CLI did not exit within {timeout}s:\n{self.screen}")
        self.child.close()
        assert self.child.exitstatus is not None, self.screen
        return int(self.child.exitstatus)
