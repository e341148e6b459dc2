"""The package names no task of ``bench/local_agent.py`` and no file of one.

A rule, a hint or an example that names a bench task's file was written from that task:
it holds on the task and says nothing of the rest. File names every project has (a
README, a package's ``__init__.py``, ``config.yaml``) are not the bench's.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMON = frozenset(
    {"README.md", "VERSION", "__init__.py", "config.yaml", "main.py", "app.py"}
    | {"notes.md", "notes.txt", "api.log"}
)
"""Names any project may hold, which the package's own files and docs use."""


def _tasks() -> list:
    spec = importlib.util.spec_from_file_location(
        "bench_local_agent", ROOT / "bench" / "local_agent.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return list(module.TASKS)


def test_no_bench_task_or_file_name_in_the_package() -> None:
    names: set[str] = set()
    for task in _tasks():
        names.add(task.name)
        names |= {Path(f).name for f in task.files or {}}
    names = {n for n in names - COMMON if len(n) >= 5}
    assert len(names) > 50  # the tasks and their files were read
    either = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.])(?:{either})(?!\w)")
    found = []
    for path in sorted((ROOT / "jarvis_graph").rglob("*")):
        if path.suffix not in (".py", ".md", ".js", ".html", ".css", ".yaml", ".txt"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {m}" for m in set(pattern.findall(text))]
    assert found == []
