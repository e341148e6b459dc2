"""Speed of the direct security scan against flawfinder, on the same trees, in the same run.

Run with ``.venv/bin/python bench/sec_speed.py`` (``--reps N``, ``--tree PATH`` for more trees).

Trees:

1. the Juliet C/C++ subset of the project (``../shared/data/juliet-dev``, or ``--juliet``);
2. real C code bases from the source distributions of PyPI packages, fetched once with
   ``pip download --no-binary`` into ``bench/.cache/sec/`` (the package registry is the only
   network use; a tree that cannot be fetched is skipped with a note):

   - ``zstandard``: the zstd library as one 2 MB amalgamated ``zstd.c`` plus its CPython
     extension; the hardest case for a parallel scan (one file is most of the tree);
   - ``Brotli``: the brotli C library (93 files);
   - ``pycryptodome``: its C sources (111 files);
3. any ``--tree`` given.

Both tools run from bytecode, as installed packages do: pip compiled flawfinder when it
installed it, and the script compiles this project's package first (an editable install is
otherwise compiled on every start where ``PYTHONDONTWRITEBYTECODE`` is set).

Each tool runs as a command, as a user runs it, with default settings:
``python -m jarvis_graph.security TREE -o FILE`` (the scan engine's own command: all CPUs,
default minimum confidence), the same scan with one worker (``--workers 1``: the CPU-time
comparison), the same scan as users run it, ``jarvis sec scan TREE -o FILE`` (start-up included: the
console script hands a plain scan to the engine), and ``flawfinder --quiet TREE``
(all levels, output to ``/dev/null``; flawfinder is single-threaded). They alternate,
``--reps`` times each after one warm-up each.

Two verdicts per tree, both from the medians of the same run:

- wall: the median wall time of ``jarvis sec scan`` (all CPUs) against flawfinder's;
- CPU: the median CPU time (user + system of the command and its child processes) of the
  one-worker scan against flawfinder's, PASS at a ratio <= 1.0. A second free core does
  not help this figure, so it holds on a busy machine too.

The first tree is one 4-line file (start-up: nearly all of its time is getting started),
then the Juliet subset and the source trees. Lines are the C/C++ physical lines of the
tree. Figures are printed and written to ``bench/results/sec_speed.json``; the script exits
0 either way.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "sec_speed.json"
CACHE = ROOT / "bench" / ".cache" / "sec"
JULIET = ROOT.parent / "shared" / "data" / "juliet-dev"
SDISTS = ("zstandard==0.23.0", "Brotli==1.1.0", "pycryptodome==3.21.0")
C_EXT = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh")


def c_lines(tree: Path) -> tuple[int, int]:
    """``(files, physical lines)`` of the C/C++ files of a tree."""
    files = lines = 0
    for path in tree.rglob("*"):
        if path.suffix.lower() in C_EXT and path.is_file():
            files += 1
            lines += path.read_bytes().count(b"\n")
    return files, lines


def fetch_sdist(requirement: str) -> Path | None:
    """The unpacked source distribution of ``name==version`` (downloaded once from PyPI)."""
    name, release = requirement.split("==")

    def unpacked(suffix: str) -> list[Path]:
        stem = f"{name}-{release}{suffix}".lower()
        return sorted(p for p in CACHE.glob(f"*{release}{suffix}") if p.name.lower() == stem)

    if unpacked(""):
        return unpacked("")[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "-d", str(CACHE), "-q", requirement]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    archives = unpacked(".tar.gz")
    if done.returncode != 0 or not archives:
        print(f"note: could not fetch {requirement}: {done.stderr.strip()[-300:]}")
        return None
    with tarfile.open(archives[0]) as tar:
        tar.extractall(CACHE, filter="data")
    return unpacked("")[0] if unpacked("") else None


def time_cmd(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the command and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def bench_tree(name: str, tree: Path, reps: int, flawfinder: str) -> dict[str, Any]:
    files, lines = c_lines(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scan.json"
        py = sys.executable
        tools = {
            "jarvis_sec": [py, "-m", "jarvis_graph.security", str(tree), "-o", str(out)],
            "jarvis_sec_1w": [py, "-m", "jarvis_graph.security", str(tree), "-o", str(out),
                              "--workers", "1"],
            "jarvis_sec_cli": [py, "-m", "jarvis_graph.cli", "sec", "scan", str(tree),
                               "-o", str(out)],
            "flawfinder": [flawfinder, "--quiet", str(tree)],
        }  # fmt: skip
        times: dict[str, list[float]] = {k: [] for k in tools}
        cpus: dict[str, list[float]] = {k: [] for k in tools}
        for cmd in tools.values():
            time_cmd(cmd)  # warm-up: page cache, bytecode
        for i in range(reps):
            order = list(tools) if i % 2 == 0 else list(reversed(tools))
            for key in order:
                wall, cpu = time_cmd(tools[key])
                times[key].append(wall)
                cpus[key].append(cpu)
        issues = json.loads(out.read_text())["summary"]["total"] if out.is_file() else None
    med = {k: statistics.median(v) for k, v in times.items()}
    row: dict[str, Any] = {"tree": name, "path": str(tree), "files": files, "lines": lines,
                           "reps": reps, "jarvis_sec_issues": issues}  # fmt: skip
    for key, value in med.items():
        row[f"{key}_s"] = round(value, 3)
        row[f"{key}_runs"] = [round(t, 3) for t in times[key]]
        row[f"{key}_cpu_s"] = round(statistics.median(cpus[key]), 3)
        row[f"{key}_cpu_runs"] = [round(t, 3) for t in cpus[key]]
    row["ratio_ours_over_flawfinder"] = round(med["jarvis_sec"] / med["flawfinder"], 3)
    row["ratio_cli_over_flawfinder"] = round(med["jarvis_sec_cli"] / med["flawfinder"], 3)
    # judged on `jarvis sec scan`, what a user runs (start-up included)
    row["no_slower"] = med["jarvis_sec_cli"] <= med["flawfinder"]
    verdict = "PASS" if row["no_slower"] else "FAIL"
    print(
        f"{verdict} wall {name}: {files} files, {lines} lines: jarvis sec scan "
        f"{med['jarvis_sec_cli']:.3f} s, flawfinder {med['flawfinder']:.3f} s (ratio "
        f"{row['ratio_cli_over_flawfinder']:.2f}; the engine's own command "
        f"{med['jarvis_sec']:.3f} s, ratio {row['ratio_ours_over_flawfinder']:.2f})"
    )
    ours_cpu = statistics.median(cpus["jarvis_sec_1w"])
    theirs_cpu = statistics.median(cpus["flawfinder"])
    row["cpu_ratio_1w_over_flawfinder"] = round(ours_cpu / theirs_cpu, 3)
    row["cpu_no_more"] = ours_cpu <= theirs_cpu
    verdict = "PASS" if row["cpu_no_more"] else "FAIL"
    print(
        f"{verdict} CPU {name}: jarvis sec, one worker {ours_cpu:.2f} s, flawfinder "
        f"{theirs_cpu:.2f} s: ratio {row['cpu_ratio_1w_over_flawfinder']:.2f} (goal <= 1.00); "
        f"all-CPU scan {row['jarvis_sec_cpu_s']:.2f} s CPU"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--juliet", type=Path, default=JULIET)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--no-fetch", action="store_true", help="skip the PyPI source trees")
    args = parser.parse_args()
    flawfinder = shutil.which("flawfinder", path=str(Path(sys.executable).parent)) or shutil.which(
        "flawfinder"
    )
    if flawfinder is None:
        print("FAIL flawfinder is not installed: pip install -e '.[bench]'")
        return
    compileall.compile_dir(ROOT / "jarvis_graph", quiet=1)
    trees: list[tuple[str, Path]] = []
    # start-up: a tree of one small file, where nearly all the time is getting started
    tiny = Path(tempfile.mkdtemp(prefix="jarvis-sec-startup-"))
    (tiny / "one.c").write_text("int add(int a, int b)\n{\n    return a + b;\n}\n")
    trees.append(("start-up (one 4-line file)", tiny))
    if args.juliet.is_dir():
        trees.append(("juliet-dev", args.juliet))
    for requirement in () if args.no_fetch else SDISTS:
        tree = fetch_sdist(requirement)
        if tree is not None:
            trees.append((tree.name, tree))
    trees += [(p.name, p) for p in args.tree]
    try:
        rows = [bench_tree(name, path, args.reps, flawfinder) for name, path in trees]
    finally:
        shutil.rmtree(tiny, ignore_errors=True)

    def ver(pkg: str) -> str | None:
        try:
            return version(pkg)
        except PackageNotFoundError:
            return None

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },  # fmt: skip
        "versions": {"jarvis-graph": ver("jarvis-graph"), "flawfinder": ver("flawfinder")},
        "trees": rows,
        "all_no_slower": all(r["no_slower"] for r in rows) if rows else False,
        "all_cpu_no_more": all(r["cpu_no_more"] for r in rows) if rows else False,
    }
    RESULTS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"written {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
