"""The suite's report of an unwaited process names where it was started."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings

import pytest


def start_and_drop() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    pid = proc.pid
    del proc  # never waited for
    return pid


def test_an_unwaited_process_says_where_it_was_started(capfd: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        pid = start_and_drop()
        gc.collect()
    os.waitpid(pid, 0)  # reaped here, not left to the interpreter
    err = capfd.readouterr().err
    assert f"process {pid} (" in err and "was never waited for" in err
    assert "in start_and_drop" in err  # the line that started it


def test_a_waited_process_says_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    gc.collect()
    assert "never waited for" not in capfd.readouterr().err
