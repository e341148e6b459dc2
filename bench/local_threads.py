"""Decode speed of the embedded model by thread count, on an idle and on a busy machine.

Run with ``.venv/bin/python bench/local_threads.py`` (``--model 0.5b``, ``--tokens N``,
``--reps N``). The model file must be assembled (``jarvis models pull local``).

For each load (idle; 1 busy core; every core busy: a ``while True: pass`` process per busy
core, started before and killed after), the same prose prompt is decoded greedily for
``--tokens`` tokens with each thread setting:

- ``all cores``: the old default, ``os.cpu_count()`` threads;
- ``1``: one thread;
- ``auto``: what Jarvis now chooses when each reply starts
  (:func:`jarvis_graph.platforms.local_threads.decode_threads`), printed with its value.

Decode tokens/s counts the tokens after the first over the time after the first (the prompt
is processed before the first token). Prompt tokens/s is the processing of
``--prompt-tokens`` tokens of this README from an empty context, with 1 thread, with every
core, and with what Jarvis chooses for prompts
(:func:`jarvis_graph.platforms.local_threads.batch_threads`). Medians of ``--reps``.
Figures are printed and written to ``bench/results/local_threads.json``. Always exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "local_threads.json"
PROMPT = (
    "<|im_start|>user\nDescribe in a few sentences how a river shapes the land it flows "
    "through.<|im_end|>\n<|im_start|>assistant\n"
)

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def decode_speed(llm: Any, threads: int, tokens: int) -> float:
    """Tokens/s of one greedy decode of ``tokens`` tokens with ``threads`` threads."""
    import llama_cpp

    llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
    first = 0.0
    count = 0
    for _chunk in llm.create_completion(PROMPT, max_tokens=tokens, temperature=0, stream=True):
        count += 1
        if count == 1:
            first = time.perf_counter()
    return (count - 1) / max(time.perf_counter() - first, 1e-9) if count > 1 else 0.0


def prompt_speed(llm: Any, threads: int, tokens: list[int]) -> float:
    """Tokens/s of processing ``tokens`` from an empty context with ``threads`` threads."""
    import llama_cpp

    llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    return len(tokens) / max(time.perf_counter() - started, 1e-9)


def spinners(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def measure(llm: Any, busy: int, reps: int, tokens: int, prompt: list[int]) -> dict[str, Any]:
    from jarvis_graph.platforms.local_threads import batch_threads, decode_threads

    procs = spinners(busy)
    try:
        time.sleep(0.5)  # the spinners are running before anything is measured
        auto = decode_threads()
        settings = {"all cores": os.cpu_count() or 1, "1": 1, "auto": auto}
        batch = {"all cores": os.cpu_count() or 1, "1": 1, "auto": batch_threads()}
        runs: dict[str, list[float]] = {name: [] for name in settings}
        prompts: dict[str, list[float]] = {name: [] for name in batch}
        for _ in range(reps):  # interleaved, so drift hits every setting alike
            for name, threads in settings.items():
                runs[name].append(decode_speed(llm, threads, tokens))
            for name, threads in batch.items():
                prompts[name].append(prompt_speed(llm, threads, prompt))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    return {
        "busy_cores": busy,
        "auto_threads": auto,
        "tok_s": {name: round(statistics.median(v), 1) for name, v in runs.items()},
        "runs": {name: [round(x, 1) for x in v] for name, v in runs.items()},
        "prompt_threads": batch["auto"],
        "prompt_tok_s": {name: round(statistics.median(v), 1) for name, v in prompts.items()},
        "prompt_runs": {name: [round(x, 1) for x in v] for name, v in prompts.items()},
    }


def print_table(
    title: str, rows: list[dict[str, Any]], speeds: str, threads: str, label: str
) -> float:
    """One table of tokens/s per load and setting, and its verdict; returns the worst
    ratio of ``auto`` to the better fixed setting."""
    print(title)
    print(f"  {'busy cores':<11}{'all cores':>11}{'1':>8}{'auto':>8}  auto threads")
    for row in rows:
        speed = row[speeds]
        print(
            f"  {row['busy_cores']:<11}{speed['all cores']:>11}{speed['1']:>8}"
            f"{speed['auto']:>8}  {row[threads]}"
        )
    worst = min(r[speeds]["auto"] / max(r[speeds]["all cores"], r[speeds]["1"]) for r in rows)
    verdict = "PASS" if worst >= 0.9 else "FAIL"
    print(f"  [{verdict}] {label} >= 0.9x the better fixed setting under every load: {worst:.2f}")
    return float(worst)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="", help="0.5b, 1.5b or a GGUF path (default: the default model)"
    )
    parser.add_argument("--tokens", type=int, default=96, help="tokens per decode")
    parser.add_argument("--reps", type=int, default=3, help="decodes per setting and load")
    parser.add_argument(
        "--prompt-tokens", type=int, default=400, help="tokens per prompt processed"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    from llama_cpp import Llama

    from jarvis_graph.platforms.errors import PlatformError
    from jarvis_graph.platforms.local_models import resolve_model_path

    try:
        path = resolve_model_path(args.model)
    except PlatformError as exc:
        print(f"not measured: {exc}")
        return 0
    cores = os.cpu_count() or 1
    llm = Llama(model_path=str(path), n_ctx=2048, n_threads=cores, verbose=False, seed=1)
    decode_speed(llm, cores, 8)  # warm-up
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    prompt = llm.tokenize(readme.encode("utf-8"))[: args.prompt_tokens]
    loads = sorted({0, 1, cores})
    rows = [measure(llm, busy, args.reps, args.tokens, prompt) for busy in loads]
    worst = print_table(
        f"Decode tokens/s of {path.name}, {args.tokens} tokens, median of {args.reps}:",
        rows,
        "tok_s",
        "auto_threads",
        "auto",
    )
    prompt_worst = print_table(
        f"Prompt tokens/s, {len(prompt)} tokens, median of {args.reps}:",
        rows,
        "prompt_tok_s",
        "prompt_threads",
        "prompt auto",
    )
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "model": path.name,
        "cores": cores,
        "tokens": args.tokens,
        "reps": args.reps,
        "loads": rows,
        "auto_vs_best_fixed_min": round(worst, 2),
        "prompt_tokens": len(prompt),
        "prompt_auto_vs_best_fixed_min": round(prompt_worst, 2),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"Wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
