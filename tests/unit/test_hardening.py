"""harden_process: the process is non-dumpable afterwards, and a second call is harmless."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import ctypes
from jarvis_graph.hardening import harden_process
libc = ctypes.CDLL(None)
before = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
print(before, harden_process(), harden_process(), libc.prctl(3, 0, 0, 0, 0))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_harden_process_makes_the_process_non_dumpable() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
    assert done.stdout.split() == ["1", "True", "True", "0"], done.stderr
