"""A process killed with SIGKILL during a bulk save leaves a consistent prefix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from jarvis_graph.memory.store import FaissStore
from tests.unit.memory.conftest import hashing_index

BATCH = 25
BATCHES = 400

WRITER = f"""
import os
import sys
from langgraph.store.base import PutOp
from jarvis_graph.memory.store import FaissStore
from tests.unit.memory.conftest import hashing_index

folder, progress = sys.argv[1], sys.argv[2]
with FaissStore(folder, index=hashing_index(), save_every=60) as store:
    for b in range({BATCHES}):
        ops = [
            PutOp(
                ("bulk",), f"k{{b * {BATCH} + i:06d}}", {{"text": f"note {{b}} {{i}}", "b": b}}
            )
            for i in range({BATCH})
        ]
        store.batch(ops)
        store.search(("bulk",), query="alpha", limit=1)  # keeps the index loaded and saved
        with open(progress + ".tmp", "w") as fh:  # replaced whole: a kill never empties it
            fh.write(str(b + 1))
        os.replace(progress + ".tmp", progress)
"""


def test_sigkill_during_bulk_save_leaves_a_consistent_prefix(tmp_path: Path) -> None:
    folder, progress = tmp_path / "store", tmp_path / "progress"
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(progress)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if progress.exists() and progress.read_text() and int(progress.read_text()) >= 40:
                break
            assert proc.poll() is None, "the writer ended before it could be killed"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    committed = int(progress.read_text()) if progress.exists() else 0

    with FaissStore(folder, index=hashing_index()) as store:
        items = store.search(("bulk",), limit=BATCH * BATCHES)
        keys = [i.key for i in items]
        # a prefix of the batches: whole batches only, in order, nothing missing
        assert len(keys) % BATCH == 0
        assert keys == [f"k{n:06d}" for n in range(len(keys))]
        assert committed * BATCH <= len(keys) <= (committed + 1) * BATCH
        assert len(keys) < BATCH * BATCHES, "the writer finished before the kill"
        for item in items[:: BATCH * 7]:
            assert item.value["b"] == int(item.key[1:]) // BATCH
        # the vector index agrees with the records: every item finds itself
        last = items[-1]
        hit = store.search(("bulk",), query=last.value["text"], limit=1)[0]
        assert hit.key == last.key
        vectors = store._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        assert vectors == len(keys)
        assert store.index_for(("bulk",)).size == len(keys)
        # and it takes new writes
        store.put(("bulk",), "after", {"text": "written after the crash"})
        assert store.search(("bulk",), query="written after the crash", limit=1)[0].key == "after"
