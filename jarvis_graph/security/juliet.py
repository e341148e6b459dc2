"""Score a scan on a Juliet C/C++ subset with the rule of its README.

A function starts at a column-0 header line followed by a column-0 ``{`` and ends at the
next column-0 ``}``; a function whose name contains ``bad`` is flawed, ``good`` is safe,
anything else is neutral. Per test case: a true positive when a finding lands in one of its
bad functions, a false positive when one lands in one of its good functions.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.security.model import Issue

_NAME = re.compile(r"([~\w:]+)\s*\(")


@dataclass(frozen=True)
class Span:
    """One labelled function of a test case file."""

    name: str
    label: str  # bad | good | neutral
    start: int
    end: int


def label_functions(text: str) -> list[Span]:
    """The column-0 functions of a file with their bad/good/neutral label."""
    lines = text.splitlines()
    spans: list[Span] = []
    i = 0
    while i < len(lines):
        m = _NAME.search(lines[i - 1]) if lines[i].startswith("{") and i > 0 else None
        if m and lines[i - 1][:1].strip():
            header_at = i - 1
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("}")), i)
            name = m.group(1)
            low = name.lower()
            label = "bad" if "bad" in low else "good" if "good" in low else "neutral"
            spans.append(Span(name, label, header_at + 1, end + 1))
            i = end
        i += 1
    return spans


def load_manifest(root: Path) -> dict[str, Any]:
    """The subset's manifest (test case id -> CWE and files)."""
    path = root / "manifest.json"
    if not path.is_file():
        msg = f"no manifest.json in {root}: pass the Juliet subset folder that holds it"
        raise FileNotFoundError(msg)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _rates(tp: int, fp: int, n: int) -> dict[str, float | int]:
    tpr = tp / n if n else 0.0
    fpr = fp / n if n else 0.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    f1 = 2 * precision * tpr / (precision + tpr) if precision + tpr else 0.0
    return {"cases": n, "tp": tp, "fp": fp, "precision": precision, "recall": tpr,
            "f1": f1, "fpr": fpr, "j": tpr - fpr}  # fmt: skip


def score(root: Path, issues: list[Issue]) -> dict[str, Any]:
    """Per-CWE and overall P, R, F1 and J of ``issues`` (paths relative to ``root``)."""
    manifest = load_manifest(root)
    by_file: dict[str, list[int]] = defaultdict(list)
    for issue in issues:
        by_file[Path(issue.file).as_posix()].append(issue.line)
    per_cwe: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for case in manifest["testcases"].values():
        hit = {"bad": False, "good": False}
        for rel in case["files"]:
            path = root / rel
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = by_file.get(Path(rel).as_posix(), [])
            for span in label_functions(text):
                if span.label != "neutral" and any(span.start <= ln <= span.end for ln in lines):
                    hit[span.label] = True
        row = per_cwe[f"CWE-{case['cwe']}"]
        row[0] += hit["bad"]
        row[1] += hit["good"]
        row[2] += 1
    result = {cwe: _rates(*row) for cwe, row in sorted(per_cwe.items(), key=_cwe_key)}
    totals = [sum(r[i] for r in per_cwe.values()) for i in range(3)]
    return {"per_cwe": result, "overall": _rates(*totals)}


def _cwe_key(item: tuple[str, Any]) -> int:
    return int(item[0].split("-")[1])
