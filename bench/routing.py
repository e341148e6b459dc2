"""Routing chat messages to their thread: right routes against two baselines, and new threads.

Run with ``.venv/bin/python bench/routing.py`` (``--model local:0.5b`` adds the local model
as the tie-breaker). The data (``bench/data/routing.yaml``): three open threads, 20
follow-up messages labelled with their thread in the order a user sent them, and 5
messages that belong to none. Each message is routed by :class:`ThreadRouter` with the
project's MiniLM embedder; a wrong route is overridden, as the user would (the message
joins its true thread's turns), so later messages see the same history either way.

Baselines, on the same messages: **stay** (the chat's current thread: where the previous
message went, what a chat without routing does) and **words** (the thread whose task and
turns share the most words with the message). Printed: right routes of 20, new threads
started among them (wrong), the unrelated messages sent to a new thread, ms per message.
Figures go to ``bench/results/routing.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jarvis_graph.memory.embedder import default_embedder  # noqa: E402
from jarvis_graph.runtime.thread_router import (  # noqa: E402
    ThreadProfile,
    ThreadRouter,
    model_tie_break,
)

DATA = ROOT / "bench" / "data" / "routing.yaml"
RESULTS = ROOT / "bench" / "results" / "routing.json"


def load() -> dict[str, Any]:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {"the", "a", "to", "and", "of", "in"}


def run(route: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Route every message with ``route(message, profiles, previous) -> thread id | None``.

    ``previous`` is the thread the message before went to (``None`` at the first).
    """
    turns: dict[str, list[str]] = {name: [] for name in data["threads"]}

    def profiles() -> list[ThreadProfile]:
        return [
            ThreadProfile(name, task, tuple(reversed(turns[name][-4:])))
            for name, task in data["threads"].items()
        ]

    right = new = 0
    previous = None
    started = time.perf_counter()
    for message in data["messages"]:
        chosen = route(message["text"], profiles(), previous)
        right += chosen == message["thread"]
        new += chosen is None
        turns[message["thread"]].append(message["text"])
        previous = message["thread"]
    elapsed = time.perf_counter() - started
    unrelated = sum(route(text, profiles(), previous) is None for text in data["new"])
    return {
        "right": right,
        "of": len(data["messages"]),
        "new_thread_among_them": new,
        "unrelated_to_new_thread": unrelated,
        "unrelated": len(data["new"]),
        "ms_per_message": round(1000 * elapsed / len(data["messages"]), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        help="tie-breaker model, e.g. local:0.5b (repeatable)",
    )
    parser.add_argument("--threshold", type=float, default=0.12)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    data = load()

    def stay(text: str, threads: list[ThreadProfile], previous: str | None) -> str | None:
        return previous or threads[0].thread_id  # the first message: the newest thread

    def words(text: str, threads: list[ThreadProfile], previous: str | None) -> str | None:
        want = _words(text)
        best = max(threads, key=lambda t: len(want & _words(" ".join(t.texts))))
        return best.thread_id if want & _words(" ".join(best.texts)) else None

    embedder = default_embedder()
    embedder.embed_query("warm up")
    router = ThreadRouter(embedder, threshold=args.threshold)
    rows = {
        "stay (no routing)": run(stay, data),
        "words (shared words)": run(words, data),
        "router (MiniLM)": run(
            lambda text, threads, _: router.route(text, threads).thread_id, data
        ),
    }
    for spec in args.model:
        from jarvis_graph.config import ModelSpec
        from jarvis_graph.platforms.registry import create_chat_model

        platform_name, _, model_name = spec.partition(":")
        model = create_chat_model(ModelSpec(platform=platform_name, model=model_name))
        tied = ThreadRouter(embedder, threshold=args.threshold, tie_break=model_tie_break(model))
        rows[f"router (MiniLM + {spec} on ties)"] = run(
            lambda text, threads, _, r=tied: r.route(text, threads).thread_id, data
        )
    print(f"{'method':<40} {'right':>7} {'new (wrong)':>12} {'unrelated -> new':>17} {'ms/msg':>8}")
    for name, row in rows.items():
        print(
            f"{name:<40} {row['right']:>4}/{row['of']:<2} {row['new_thread_among_them']:>12} "
            f"{row['unrelated_to_new_thread']:>11}/{row['unrelated']:<5} {row['ms_per_message']:>8}"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "date": dt.date.today().isoformat(),
                "machine": platform.machine(),
                "threshold": args.threshold,
                "data": str(DATA.relative_to(ROOT)),
                "results": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {args.output.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
