"""Agent verification of security findings: right verdicts, grounded verdicts, seconds each.

Run with ``.venv/bin/python bench/sec_verify.py`` (``--model local:1.5b``, repeatable;
``--sample N``; ``--fresh``).

The sample: the direct scan of the Juliet subset (``../shared/data/juliet-dev`` or
``--juliet``) at minimum confidence 0 (every candidate a rule produces), each finding
labelled by the subset's own scoring rule (a finding in a function whose name holds
``bad`` is true, one in a ``good`` function is false; others are left out), then
``--sample`` / 2 true and as many false findings drawn with a fixed seed. Nothing in the
sample is chosen by this project's rules beyond the scan itself.

Each model verifies the same sample through ``jarvis sec scan --verify``'s graph (the
verifier agent, its tools and the grounding check, one candidate at a time). Verdicts are
appended to ``bench/results/sec_verify/<model>.jsonl`` as they come: a killed run started
again verifies only what is left (``--fresh`` starts over). That file is kept with the
project, so a run longer than one sitting (the 1.5B takes hours here) is continued later;
the figure stands while the verifier's code and the model's platform are unchanged
(``git log`` of ``jarvis_graph/nodes/security_verify.py``,
``jarvis_graph/security/grounding.py`` and ``jarvis_graph/platforms/`` against the
file's).

Printed per model: the verdict counts; precision and recall of ``confirmed`` against the
labels; how many false findings were rejected; the share of grounded verdicts (evidence
on the lines it names, reasoning of its own; an ungrounded decision counts as uncertain);
seconds per candidate; and J (true-positive rate minus false-positive rate over the
sample's test cases) of the direct scan alone and of the scan with the rejected findings
dropped. The baseline row is the direct scan with no verification (every finding kept).
Figures go to ``bench/results/sec_verify.json``; the script exits 0 either way.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jarvis_graph.security import scan_path  # noqa: E402
from jarvis_graph.security.juliet import label_functions, load_manifest  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "sec_verify.json"
CACHE = ROOT / "bench" / ".cache" / "sec_verify"
"""The verifier's workspace (its sessions)."""
PROGRESS = ROOT / "bench" / "results" / "sec_verify"
"""Verdicts so far, one file per model."""
SEED = 20261127


def labelled_sample(juliet: Path, size: int) -> list[dict[str, Any]]:
    """``size`` / 2 true and false findings of the scan at confidence 0, drawn by seed."""
    result = scan_path(juliet, ("c", "cpp"), min_confidence=0.0)
    spans: dict[str, Any] = {}
    case_of = {
        Path(rel).as_posix(): case_id
        for case_id, case in load_manifest(juliet)["testcases"].items()
        for rel in case["files"]
    }
    true, false = [], []
    for issue in result.issues:
        if issue.file not in spans:
            text = (juliet / issue.file).read_text(encoding="utf-8", errors="replace")
            spans[issue.file] = label_functions(text)
        label = next((s.label for s in spans[issue.file] if s.start <= issue.line <= s.end), "")
        row = {**issue.to_dict(), "label": label, "case": case_of.get(issue.file, issue.file)}
        if label == "bad":
            true.append(row)
        elif label == "good":
            false.append(row)
    rng = random.Random(SEED)
    half = size // 2
    pick = rng.sample(sorted(true, key=lambda r: r["id"]), min(half, len(true)))
    pick += rng.sample(sorted(false, key=lambda r: r["id"]), min(half, len(false)))
    return sorted(pick, key=lambda r: r["id"])


def verify(sample: list[dict[str, Any]], juliet: Path, spec: str, fresh: bool) -> dict[str, Any]:
    """Verify the sample with one model through the verification graph; figures back."""
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.graphs.security_scan import build_security_scan_graph
    from jarvis_graph.security.progress import load_progress
    from jarvis_graph.state import SecurityScanState

    platform_name, _, model = spec.partition(":")
    progress = PROGRESS / f"{spec.replace(':', '-').replace('/', '_')}.jsonl"
    if fresh and progress.exists():
        progress.unlink()
    CACHE.mkdir(parents=True, exist_ok=True)
    PROGRESS.mkdir(parents=True, exist_ok=True)
    candidates = [{k: v for k, v in c.items() if k not in ("label", "case")} for c in sample]
    before = set(load_progress(progress)) & {c["id"] for c in candidates}
    context = JarvisContext(
        workspace=str(CACHE), platform=platform_name, model=model or None, non_interactive=True
    )
    graph = build_security_scan_graph().compile(name="security_scan")
    state = SecurityScanState(
        run_id=f"bench-{spec}", root=str(juliet), progress_file=str(progress), candidates=candidates
    )
    print(f"  {spec}: {len(candidates) - len(before)} to verify ({len(before)} done before)")
    start = time.monotonic()
    done = len(before)
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(
        state,
        {"max_concurrency": 1, "recursion_limit": 200},
        context=context,
        stream_mode=["updates", "values"],
    ):
        if mode == "updates" and "verify_candidate" in chunk:
            done += 1
            (verdict,) = chunk["verify_candidate"]["verdicts"].values()
            print(f"    {done:>3}/{len(candidates)} {verdict['verdict']:<15}"
                  f" grounded={verdict.get('grounded')}", flush=True)  # fmt: skip
        elif mode == "values":
            final = chunk
    seconds = time.monotonic() - start
    verified_now = len(candidates) - len(before)
    verdicts = final.get("verdicts", {})
    figures = score(sample, verdicts)
    figures["seconds_per_candidate"] = round(seconds / verified_now, 1) if verified_now else None
    figures["verified_this_run"] = verified_now
    return figures


def score(sample: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Verdict counts, precision and recall of ``confirmed``, grounded share, J before/after."""
    counts = {"confirmed": 0, "false_positive": 0, "uncertain": 0}
    tp = fp = rejected_false = rejected_true = grounded = 0
    for row in sample:
        v = verdicts.get(row["id"], {"verdict": "uncertain"})
        counts[v["verdict"]] += 1
        grounded += bool(v.get("grounded"))
        true = row["label"] == "bad"
        if v["verdict"] == "confirmed":
            tp += true
            fp += not true
        elif v["verdict"] == "false_positive":
            rejected_false += not true
            rejected_true += true
    trues = sum(r["label"] == "bad" for r in sample)
    falses = len(sample) - trues
    kept = [r for r in sample if verdicts.get(r["id"], {}).get("verdict") != "false_positive"]
    return {
        "verdicts": counts,
        "precision_confirmed": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall_confirmed": round(tp / trues, 3) if trues else None,
        "false_rejected": f"{rejected_false}/{falses}",
        "true_rejected": f"{rejected_true}/{trues}",
        "grounded_share": round(grounded / len(sample), 3) if sample else None,
        "j_direct": j_of(sample, sample),
        "j_with_verification": j_of(sample, kept),
    }


def j_of(sample: list[dict[str, Any]], kept: list[dict[str, Any]]) -> float:
    """TPR minus FPR over the sample's test cases, counting only the ``kept`` findings."""
    cases = {r["case"] for r in sample}
    bad = {r["case"] for r in kept if r["label"] == "bad"}
    good = {r["case"] for r in kept if r["label"] == "good"}
    return round((len(bad) - len(good)) / len(cases), 3) if cases else 0.0


def default_models() -> list[str]:
    """The local 0.5B, the 1.5B when its file is there, and a configured provider."""
    from jarvis_graph.platforms.errors import PlatformError
    from jarvis_graph.platforms.local_models import resolve_model_path

    models = ["local:0.5b"]
    try:
        resolve_model_path("1.5b")
        models.append("local:1.5b")
    except PlatformError:
        pass
    if os.environ.get("OPENAI_API_KEY") and os.environ.get("JARVIS_MODEL"):
        models.append(f"openai:{os.environ['JARVIS_MODEL']}")
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--juliet", type=Path, default=ROOT.parent / "shared/data/juliet-dev")
    parser.add_argument("--model", action="append", help="platform:model, e.g. local:0.5b")
    parser.add_argument("--sample", type=int, default=40, help="candidates (half true, half false)")
    parser.add_argument("--fresh", action="store_true", help="forget earlier verdicts")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    juliet = args.juliet.resolve()
    sample = labelled_sample(juliet, args.sample)
    trues = sum(r["label"] == "bad" for r in sample)
    print(f"sample: {len(sample)} findings ({trues} true, {len(sample) - trues} false) "
          f"from {len({r['case'] for r in sample})} test cases; seed {SEED}")  # fmt: skip
    rows = {"direct scan (no verification)": score(sample, {})}
    for spec in args.model or default_models():
        try:
            rows[spec] = verify(sample, juliet, spec, args.fresh)
        except Exception as exc:  # a model that cannot run is reported, the others go on
            rows[spec] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"  {spec}: {rows[spec]['error']}")
    head = f"{'model':<32}{'conf':>5}{'rej':>5}{'unc':>5}{'P':>7}{'R':>7}"
    print(f"\n{head}{'false rej':>11}{'grounded':>10}{'s/cand':>8}{'J dir':>7}{'J ver':>7}")
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:<32}{r['error']}")
            continue
        v = r["verdicts"]
        p, rec = r["precision_confirmed"], r["recall_confirmed"]
        print(
            f"{name:<32}{v['confirmed']:>5}{v['false_positive']:>5}{v['uncertain']:>5}"
            f"{'-' if p is None else f'{p:.2f}':>7}{'-' if rec is None else f'{rec:.2f}':>7}"
            f"{r['false_rejected']:>11}{r['grounded_share']:>10.2f}"
            f"{r.get('seconds_per_candidate') or '-':>8}{r['j_direct']:>7.2f}"
            f"{r['j_with_verification']:>7.2f}"
        )
    out = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "juliet": str(juliet),
        "seed": SEED,
        "sample": [{"id": r["id"], "label": r["label"], "case": r["case"]} for r in sample],
        "models": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
