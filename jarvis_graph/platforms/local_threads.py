"""How many threads the local model decodes with: the cores nothing else is using.

llama.cpp's decoding threads wait for each other at every step, so one of them waiting
for a core another process holds stalls them all: on 2 cores with one busy process, 2
threads decode at a third of the speed of 1 (see ``bench/local_threads.py``). The count is
chosen when each reply starts, from the runnable tasks the kernel reports at that moment.
A prompt is processed in batches of hundreds of tokens, each step long enough that a
thread sharing its core still does its part: that uses every core (:func:`batch_threads`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")
SAMPLES = 5
SAMPLE_GAP_S = 0.002


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def running_tasks(stat: Path = PROC_STAT) -> int | None:
    """Tasks runnable now, system-wide, this one included (``None``: not known here)."""
    try:
        for line in stat.read_text().splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def busy_cores(stat: Path = PROC_STAT) -> int:
    """Cores other tasks keep busy: the fewest runnable tasks over a few samples, minus us."""
    seen: list[int] = []
    for i in range(SAMPLES):
        count = running_tasks(stat)
        if count is None:
            return 0
        seen.append(count)
        if i + 1 < SAMPLES:
            time.sleep(SAMPLE_GAP_S)
    return max(0, min(seen) - 1)


def decode_threads(configured: int | None = None, stat: Path = PROC_STAT) -> int:
    """Threads for the next reply: ``configured`` when set, else the idle cores (at least 1).

    With more than 2 cores one is always left for the rest of the process (tools, the UI).
    """
    if configured:
        return configured
    cores = usable_cores()
    idle = cores - busy_cores(stat)
    if cores > 2:
        idle = min(idle, cores - 1)
    return max(1, idle)


def batch_threads(configured: int | None = None) -> int:
    """Threads for processing a prompt: ``configured`` when set, else every usable core."""
    return configured or usable_cores()
