"""A short scripted task loads only what it uses: no embedder, no vector index.

The episodic archive stores the task's segments without vectors; the first search by
meaning embeds them, so the archive still answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import run_process, write_script

# Runs the CLI in this interpreter, then reports what was imported and the peak RSS.
PROBE = """
import json, sys
from jarvis_graph.cli.app import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = [m for m in ("onnxruntime", "faiss", "tokenizers", "langchain_openai", "llama_cpp")
         if m in sys.modules]
# VmHWM: the peak of this process's memory (ru_maxrss would include the parent's when
# it started us by vfork, and it survives exec)
status = open("/proc/self/status").read().split("VmHWM:")[1].split()
rss = int(status[0]) // 1024
print("PROBE " + json.dumps({"code": code, "heavy": heavy, "rss_mb": rss}))
"""


def test_a_one_step_scripted_run_loads_no_embedder_and_its_archive_is_searchable(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "one.yaml", [{"text": "The port is 8443. !!!COMPLETE!!!"}])
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script)]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args, "Which port does the deploy use?"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    probe = json.loads(proc.stdout.rsplit("PROBE ", 1)[-1])
    assert probe["code"] in (0, None), proc.stdout + proc.stderr
    assert "The port is 8443." in proc.stdout
    assert probe["heavy"] == []
    assert probe["rss_mb"] <= 150

    found = run_process(["memory", "episodes", "search", "deploy port number"], cwd=workspace)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "Which port does the deploy use?" in found.stdout
    assert "The port is 8443." in found.stdout
