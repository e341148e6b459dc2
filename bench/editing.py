"""Cost of the PATCH engine on big files, against a bare ``str.count`` + ``str.replace``.

Run with ``.venv/bin/python bench/editing.py`` (``--reps N``). For files of 1,000, 10,000 and
50,000 lines (a repeated 10-line Python function with a counter in it) it times, as medians:

- ``baseline``: ``text.count(search) == 1`` then ``text.replace(search, new, 1)``;
- ``exact``: ``apply_edits`` with a unique 3-line SEARCH (the first rung of the ladder);
- ``reindented``: the same SEARCH written 4 spaces too shallow (the third rung);
- ``not_found``: a SEARCH that is nowhere, so the error searches the most similar lines;
- ``patch_on_disk``: ``apply_patch`` reading, editing and atomically writing the file,
  against ``write_bytes`` of the same new text (``plain_write``).

Figures are printed and written to ``bench/results/editing.json``; there is no target, the
script always exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from jarvis_graph.editing import Edit, EditError, FilePatch, apply_edits, apply_patch

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "editing.json"
SIZES = (1_000, 10_000, 50_000)


def source(lines: int) -> str:
    block = [
        "def f_{n}(x):",
        "    total = 0",
        "    for i in range(x):",
        "        total += i * {n}",
        "    if total > 10:",
        "        return total",
        "    return -1",
        "",
        "",
        "",
    ]
    return "".join(
        "\n".join(line.format(n=n) for line in block) for n in range(lines // len(block))
    )


def median_ms(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def expect_error(text: str, edit: Edit) -> None:
    try:
        apply_edits(text, (edit,), "big.py")
    except EditError:
        return
    raise AssertionError("the edit should fail")


def measure(lines: int, reps: int, folder: Path) -> dict[str, float]:
    text = source(lines)
    middle = (lines // 10) // 2
    search = f"    for i in range(x):\n        total += i * {middle}\n    if total > 10:"
    new = search.replace("10:", "11:")
    shallow = "\n".join(line[4:] for line in search.split("\n"))

    def baseline() -> str:
        assert text.count(search) == 1
        return text.replace(search, new, 1)

    path = folder / f"big{lines}.py"
    path.write_text(text)
    patch = [FilePatch("big.py", (Edit(search=search, replace=new),))]

    def on_disk() -> None:
        path.write_text(text)
        assert apply_patch(patch, lambda _: path).ok

    def plain_write() -> None:
        path.write_text(text)
        path.write_bytes(baseline().encode())

    missing = Edit(search=f"    for j in range(y):\n        total -= j * {middle}", replace="x")
    return {
        "lines": lines,
        "baseline_ms": median_ms(baseline, reps),
        "exact_ms": median_ms(
            lambda: apply_edits(text, (Edit(search=search, replace=new),), "b"), reps
        ),
        "reindented_ms": median_ms(
            lambda: apply_edits(text, (Edit(search=shallow, replace=new),), "b"), reps
        ),
        "not_found_ms": median_ms(lambda: expect_error(text, missing), max(1, reps // 3)),
        "patch_on_disk_ms": median_ms(on_disk, reps),
        "plain_write_ms": median_ms(plain_write, reps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for lines in SIZES:
            rows.append(measure(lines, args.reps, Path(tmp)))
    keys = ["baseline", "exact", "reindented", "not_found", "patch_on_disk", "plain_write"]
    print(f"{'lines':>7} " + " ".join(f"{k:>13}" for k in keys) + "  (ms, medians)")
    for row in rows:
        print(f"{row['lines']:>7} " + " ".join(f"{row[k + '_ms']:>13.3f}" for k in keys))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(),
                "reps": args.reps,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
