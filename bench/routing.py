"""Routing chat messages to their thread: right routes against two baselines, and new threads.

Run with ``.venv/bin/python bench/routing.py`` (``--model local:0.5b`` adds the local model
as the tie-breaker). The data: three sets, each of three open threads, 20 follow-up
messages labelled with their thread in the order a user sent them, and 5 messages that
belong to none: ``bench/data/routing.yaml`` (``dev``: looked at while the router was
built) and the two of ``bench/data/routing_heldout.yaml`` (``office``, ``research``:
written before the router's scoring was changed; the scoring and the threshold were
then chosen on all three sets, see bench/README.md). Each message is
routed by :class:`ThreadRouter` with the project's MiniLM embedder; a wrong route is
overridden, as the user would (the message joins its true thread's turns), so later
messages see the same history either way.

Baselines, on the same messages: **stay** (the chat's current thread: where the previous
message went, what a chat without routing does) and **words** (the thread whose task and
turns share the most words with the message). Printed: right routes of 20, new threads
started among them (wrong), the unrelated messages sent to a new thread, ms per message.
Printed per set and in total; figures go to ``bench/results/routing.json``.
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
    THRESHOLD,
    ThreadProfile,
    ThreadRouter,
    model_tie_break,
)

DATA = ROOT / "bench" / "data" / "routing.yaml"
HELD_OUT = ROOT / "bench" / "data" / "routing_heldout.yaml"
RESULTS = ROOT / "bench" / "results" / "routing.json"


def load() -> dict[str, dict[str, Any]]:
    """The sets by name: ``dev`` first, then the held-out ones."""
    sets = {"dev": yaml.safe_load(DATA.read_text(encoding="utf-8"))}
    sets.update(yaml.safe_load(HELD_OUT.read_text(encoding="utf-8"))["sets"])
    return sets


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


def run_sets(route: Any, sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """:func:`run` on every set, with a ``total`` row summed over them."""
    rows = {name: run(route, data) for name, data in sets.items()}
    total = {key: sum(row[key] for row in rows.values()) for key in ("right", "of")}
    for key in ("new_thread_among_them", "unrelated_to_new_thread", "unrelated"):
        total[key] = sum(row[key] for row in rows.values())
    total["ms_per_message"] = round(
        sum(row["ms_per_message"] * row["of"] for row in rows.values()) / total["of"], 1
    )
    return {**rows, "total": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        help="tie-breaker model, e.g. local:0.5b (repeatable)",
    )
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    sets = load()

    def stay(text: str, threads: list[ThreadProfile], previous: str | None) -> str | None:
        return previous or threads[0].thread_id  # the first message: the newest thread

    def words(text: str, threads: list[ThreadProfile], previous: str | None) -> str | None:
        want = _words(text)
        best = max(threads, key=lambda t: len(want & _words(" ".join(t.texts))))
        return best.thread_id if want & _words(" ".join(best.texts)) else None

    embedder = default_embedder()
    embedder.embed_query("warm up")
    router = ThreadRouter(embedder, threshold=args.threshold)
    methods = {
        "stay (no routing)": run_sets(stay, sets),
        "words (shared words)": run_sets(words, sets),
        "router (MiniLM)": run_sets(
            lambda text, threads, _: router.route(text, threads).thread_id, sets
        ),
    }
    for spec in args.model:
        # deferred: a model is loaded only when one is asked for
        from jarvis_graph.config import ModelSpec
        from jarvis_graph.platforms.registry import create_chat_model

        platform_name, _, model_name = spec.partition(":")
        model = create_chat_model(ModelSpec(platform=platform_name, model=model_name))
        tied = ThreadRouter(embedder, threshold=args.threshold, tie_break=model_tie_break(model))
        methods[f"router (MiniLM + {spec} on ties)"] = run_sets(
            lambda text, threads, _, r=tied: r.route(text, threads).thread_id, sets
        )
    print(
        f"{'method':<40} {'set':<9} {'right':>7} {'new (wrong)':>12} "
        f"{'unrelated -> new':>17} {'ms/msg':>8}"
    )
    for name, rows in methods.items():
        for set_name, row in rows.items():
            print(
                f"{name:<40} {set_name:<9} {row['right']:>4}/{row['of']:<2} "
                f"{row['new_thread_among_them']:>12} "
                f"{row['unrelated_to_new_thread']:>11}/{row['unrelated']:<5} "
                f"{row['ms_per_message']:>8}"
            )
            name = ""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "date": dt.date.today().isoformat(),
                "machine": platform.machine(),
                "threshold": args.threshold,
                "data": [str(DATA.relative_to(ROOT)), str(HELD_OUT.relative_to(ROOT))],
                "results": methods,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
