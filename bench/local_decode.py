"""Decode speed of a prose answer inside Jarvis against raw llama.cpp on the same tokens.

Run with ``.venv/bin/python bench/local_decode.py`` (``--model 0.5b``, ``--reps N``; by
default the model ``jarvis run`` uses). The model file must be assembled (``jarvis models
pull local``).

For each prose question (no tool needed), three decodes on the same loaded model, the
same threads and the same prompt, interleaved ``--reps`` times:

- **jarvis**: the local platform's answer (``LocalChatModel.invoke``): prose is decoded
  without a grammar (only the JSON of a tool call is constrained); its
  ``tokens_per_second`` (tokens after the first / decode seconds);
- **raw**: ``create_completion`` on the prompt Jarvis built, no grammar, as many tokens as
  Jarvis generated (``max_tokens``, end of turn ignored): the cost of decoding alone;
- **grammar**: the same as raw under a JSON grammar (``{"answer": "..."}``) all the way,
  which is what every reply cost when replies were JSON objects: for reference.

Decode tokens/s counts the tokens after the first over the time after the first. The target:
jarvis >= 0.9x raw, median over questions. Figures are printed and written to
``bench/results/local_decode.json``. Always exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "local_decode.json"
TARGET = 0.9
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
QUESTIONS = [
    "Describe in a few sentences how a river shapes the land it flows through.",
    "Explain briefly why the sky looks blue during the day and red at sunset.",
    "What are the main differences between a list and a tuple in Python? Answer in prose.",
    "Give a short explanation of what a database index is and when it helps.",
]


def timed(completion: Any) -> tuple[int, float]:
    """Tokens of a streamed completion and the seconds after its first token."""
    count, first = 0, 0.0
    for _chunk in completion:
        count += 1
        if count == 1:
            first = time.perf_counter()
    return count, (time.perf_counter() - first) if count > 1 else 0.0


def rate(count: int, seconds: float) -> float:
    return (count - 1) / seconds if count > 1 and seconds > 0 else 0.0


def measure(model: Any, question: str, reps: int) -> dict[str, Any]:
    """Interleaved jarvis / raw / grammar decodes of one question."""
    from langchain_core.messages import HumanMessage

    from jarvis_graph.platforms import local

    messages = [HumanMessage(question)]
    prompt = model.build_prompt(messages)
    grammar = local._grammar(json.dumps(ANSWER_SCHEMA))
    llm, _lock = local._load(model.model_path, model.n_ctx)
    runs: dict[str, list[float]] = {"jarvis": [], "raw": [], "grammar": []}
    tokens: list[int] = []
    answer = ""
    for _ in range(reps):
        reply = model.invoke(messages)
        meta, usage = reply.response_metadata, reply.usage_metadata or {}
        answer = str(reply.content)
        n = int(usage.get("output_tokens") or 0)
        tokens.append(n)
        runs["jarvis"].append(float(meta.get("tokens_per_second") or 0.0))
        for name, extra in (("raw", {}), ("grammar", {"grammar": grammar})):
            completion = llm.create_completion(
                prompt, max_tokens=n, temperature=0, stream=True, **extra
            )
            runs[name].append(rate(*timed(completion)))
    med = {name: statistics.median(v) for name, v in runs.items()}
    return {
        "question": question,
        "answer": answer[:300],
        "tokens": statistics.median(tokens),
        "tok_s": {k: round(v, 1) for k, v in med.items()},
        "runs": {k: [round(x, 1) for x in v] for k, v in runs.items()},
        "jarvis_over_raw": med["jarvis"] / med["raw"] if med["raw"] else 0.0,
        "grammar_over_raw": med["grammar"] / med["raw"] if med["raw"] else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="", help="0.5b, 1.5b or a GGUF path (default: the default local model)"
    )
    parser.add_argument("--reps", type=int, default=3, help="decodes per question and kind")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from jarvis_graph.config import ModelSpec
    from jarvis_graph.platforms.errors import PlatformError
    from jarvis_graph.platforms.local import create_local_model

    try:
        model = create_local_model(ModelSpec(platform="local", model=args.model))
    except PlatformError as exc:
        print(f"not measured: {exc}")
        return 0
    # No tools offered: every reply is prose (with tools the first token also decides
    # between a call and prose; prose is then decoded the same way).
    model = model.bind_tools([])
    measure(model, "Say hello.", 1)  # warm-up: load the model
    rows = [measure(model, q, args.reps) for q in QUESTIONS]
    print(
        f"Decode tokens/s of prose answers ({Path(model.model_path).name}), median of {args.reps}:"
    )
    print(f"  {'tokens':>7}{'jarvis':>8}{'raw':>8}{'grammar':>9}{'jarvis/raw':>12}  question")
    for row in rows:
        s = row["tok_s"]
        print(
            f"  {row['tokens']:>7.0f}{s['jarvis']:>8}{s['raw']:>8}{s['grammar']:>9}"
            f"{row['jarvis_over_raw']:>12.2f}  {row['question'][:48]}"
        )
    ratio = statistics.median(r["jarvis_over_raw"] for r in rows)
    grammar = statistics.median(r["grammar_over_raw"] for r in rows)
    verdict = "PASS" if ratio >= TARGET else "FAIL"
    print(
        f"  [{verdict}] jarvis decodes prose at {ratio:.2f}x raw llama.cpp (target >= {TARGET}); "
        f"under a JSON grammar all the way it is {grammar:.2f}x"
    )
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "model": Path(model.model_path).name,
        "reps": args.reps,
        "questions": rows,
        "jarvis_over_raw_median": round(ratio, 3),
        "grammar_over_raw_median": round(grammar, 3),
        "pass": ratio >= TARGET,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"Wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
