"""Tool filtering recall on the Berkeley Function Calling data (BFCL v4).

Run with ``.venv/bin/python bench/tool_filter.py`` (``--local N`` adds the local model on a
sample of N questions; ``--limit N`` uses the first N questions only).

The data files ship in the PyPI package ``bfcl-eval``. The wheel is fetched once with
``pip download --no-deps`` into ``.cache/bfcl/`` (nothing is installed: the package pulls
heavy dependencies) and its JSON files are read from the zip.

Every function of ``BFCL_v4_multiple`` and ``BFCL_v4_live_multiple`` goes into one
catalogue (deduplicated by name). For each question, the tools are ranked with the same
engine and MiniLM embedder as the ``filter_tools`` node; a question counts as a hit at k
when every function of its ground truth is among the first k. With ``--local N``, the local
model (the ``cheap`` role of ``filter_tools``) picks from the 20 best-ranked tools by number,
as the node does, on a random sample of N questions; its picks are cut at k.
Figures are printed and written to ``bench/results/tool_filter.json``; exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "tool_filter.json"
CACHE = ROOT / ".cache" / "bfcl"
BFCL_VERSION = "2026.3.23"
SETS = ("BFCL_v4_multiple", "BFCL_v4_live_multiple")
KS = (5, 10)
CANDIDATES = 20
RECALL_TARGET = 0.90

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


def wheel() -> Path:
    """The bfcl-eval wheel, downloaded once (no dependencies, nothing installed)."""
    name = f"bfcl_eval-{BFCL_VERSION}-py3-none-any.whl"
    path = CACHE / name
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
        subprocess.run([*cmd, f"bfcl-eval=={BFCL_VERSION}", "-d", str(CACHE)], check=True)
    return path


def jsonl(archive: zipfile.ZipFile, member: str) -> list[dict[str, Any]]:
    text = archive.read(member).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The pooled catalogue (name -> function) and the questions with expected names."""
    catalogue: dict[str, dict[str, Any]] = {}
    questions: list[dict[str, Any]] = []
    with zipfile.ZipFile(wheel()) as archive:
        for name in SETS:
            entries = jsonl(archive, f"bfcl_eval/data/{name}.json")
            answers = {
                a["id"]: a for a in jsonl(archive, f"bfcl_eval/data/possible_answer/{name}.json")
            }
            for entry in entries:
                for function in entry["function"]:
                    catalogue.setdefault(function["name"], function)
                truth = answers[entry["id"]]["ground_truth"]
                expected = sorted({fn for call in truth for fn in call})
                turn = entry["question"][0]
                text = "\n".join(m["content"] for m in turn if m["role"] == "user")
                questions.append({"id": entry["id"], "text": text, "expected": expected})
    return catalogue, questions


def cards(catalogue: dict[str, dict[str, Any]]) -> list[Any]:
    from jarvis_graph.tools.tool_filter import ToolCard

    return [
        ToolCard(
            name,
            fn.get("description", ""),
            tuple((fn.get("parameters") or {}).get("properties") or {}),
        )
        for name, fn in catalogue.items()
    ]


def hits(ranked: list[list[str]], questions: list[dict[str, Any]], k: int) -> float:
    got = sum(set(q["expected"]) <= set(r[:k]) for r, q in zip(ranked, questions, strict=True))
    return got / max(1, len(questions))


def embedding_ranking(tool_cards: list[Any], questions: list[dict[str, Any]]) -> list[list[str]]:
    import numpy as np

    from jarvis_graph.memory.embedder import default_embedder
    from jarvis_graph.tools.tool_filter import rank

    embedder = default_embedder()
    tool_vectors = np.asarray(embedder.embed_documents([c.text() for c in tool_cards]))
    query_vectors = embedder.embed_documents([q["text"] for q in questions])
    return [[tool_cards[i].name for i in rank(v, tool_vectors)] for v in query_vectors]


def model_picks(
    tool_cards: list[Any], sample: list[dict[str, Any]], ranked: list[list[str]]
) -> list[list[str]]:
    """The local model's picks among the best-ranked tools, as ``filter_tools`` asks."""
    from jarvis_graph.config import ModelSpec
    from jarvis_graph.platforms.registry import create_chat_model
    from jarvis_graph.tools.tool_filter import pick_with_model

    model = create_chat_model(ModelSpec(platform="local"))
    by_name = {c.name: c for c in tool_cards}
    out = []
    for question, order in zip(sample, ranked, strict=True):
        candidates = [by_name[n] for n in order[:CANDIDATES]]
        picks = pick_with_model(question["text"], candidates, model.invoke, limit=max(KS))
        out.append(picks if picks is not None else [c.name for c in candidates][: max(KS)])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="first N questions only")
    parser.add_argument("--local", type=int, default=0, help="local model on N questions")
    args = parser.parse_args()
    catalogue, questions = load()
    if args.limit:
        questions = questions[: args.limit]
    tool_cards = cards(catalogue)
    start = time.perf_counter()
    ranked = embedding_ranking(tool_cards, questions)
    embed_s = time.perf_counter() - start
    result: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bfcl_eval": BFCL_VERSION,
        "sets": SETS,
        "tools": len(tool_cards),
        "questions": len(questions),
        "embedding": {f"recall@{k}": hits(ranked, questions, k) for k in KS},
        "embedding_s": embed_s,
    }
    print(f"catalogue: {len(tool_cards)} tools; questions: {len(questions)}")
    for k in KS:
        print(f"embedding only  recall@{k}: {result['embedding'][f'recall@{k}']:.3f}")
    if args.local:
        sample_ids = sorted(random.Random(5).sample(range(len(questions)), args.local))
        sample = [questions[i] for i in sample_ids]
        start = time.perf_counter()
        picks = model_picks(tool_cards, sample, [ranked[i] for i in sample_ids])
        result["local"] = {
            "sample": len(sample),
            "candidates": CANDIDATES,
            **{f"recall@{k}": hits(picks, sample, k) for k in KS},
            "embedding_same_sample": {
                f"recall@{k}": hits([ranked[i] for i in sample_ids], sample, k) for k in KS
            },
            "seconds": time.perf_counter() - start,
        }
        for k in KS:
            print(
                f"local model ({len(sample)} questions) recall@{k}: "
                f"{result['local'][f'recall@{k}']:.3f} (embedding on the same sample "
                f"{result['local']['embedding_same_sample'][f'recall@{k}']:.3f})"
            )
    ok = result["embedding"]["recall@10"] >= RECALL_TARGET
    print(f"{'PASS' if ok else 'FAIL'} embedding-only recall@10 >= {RECALL_TARGET}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
