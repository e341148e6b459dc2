"""The local model's decoding threads: the cores nothing else uses, or the configured count."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jarvis_graph.config import ModelSpec
from jarvis_graph.platforms.local_threads import (
    batch_threads,
    busy_cores,
    decode_threads,
    running_tasks,
    usable_cores,
)

STAT = """cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0
intr 1462898 0
ctxt 1990473
btime 1062191376
processes 2915
procs_running {running}
procs_blocked 0
"""


def stat_file(tmp_path: Path, running: int) -> Path:
    path = tmp_path / "stat"
    path.write_text(STAT.format(running=running))
    return path


def test_the_kernel_count_is_read(tmp_path: Path) -> None:
    assert running_tasks(stat_file(tmp_path, 3)) == 3
    assert running_tasks(tmp_path / "missing") is None
    (tmp_path / "odd").write_text("procs_running many\n")
    assert running_tasks(tmp_path / "odd") is None
    assert busy_cores(stat_file(tmp_path, 3)) == 2  # two others besides this one
    assert busy_cores(tmp_path / "missing") == 0  # unknown: treated as idle


def test_the_threads_follow_the_idle_cores(tmp_path: Path) -> None:
    cores = usable_cores()
    assert decode_threads(None, stat_file(tmp_path, 1)) == (cores - 1 if cores > 2 else cores)
    assert decode_threads(None, stat_file(tmp_path, cores + 5)) == 1  # never below 1
    assert decode_threads(3, stat_file(tmp_path, cores + 5)) == 3  # the setting wins


@pytest.fixture
def every_core_busy() -> Iterator[None]:
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(usable_cores())
    ]
    try:
        yield
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()


def test_with_every_core_busy_one_thread_decodes(every_core_busy: None) -> None:
    assert decode_threads() == 1  # the live /proc/stat of this machine
    assert batch_threads() == usable_cores()  # a prompt is still processed on every core
    assert batch_threads(3) == 3  # the setting wins


def test_the_setting_reaches_the_local_model() -> None:
    assert ModelSpec(platform="local", n_threads=2).n_threads == 2
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        ModelSpec(platform="local", n_threads=0)
