"""A 200-turn session over real HTTP stays within its token budget, with summaries.

The loopback server rejects any request whose tool calls and tool messages do not pair
up, so one bad cut would show up as a rejected request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.history import CHARS_PER_TOKEN
from tests.support.fake_openai import FAKE_KEY_VAR as KEY
from tests.support.fake_openai import FakeOpenAI, ToolCall, thread_config
from tests.support.trust import trust

TURNS = 200
BUDGET = 4000


def request_tokens(body: dict[str, Any]) -> int:
    """The budget estimate of a request, from what went over the wire."""
    chars = 0
    for message in body["messages"]:
        chars += len(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            chars += len(call["function"]["name"]) + len(call["function"]["arguments"])
    return chars // CHARS_PER_TOKEN


def configure(ws: Path, normal: FakeOpenAI, cheap: FakeOpenAI) -> None:
    def spec(server: FakeOpenAI) -> dict[str, Any]:
        url = server.base_url
        return {"platform": "openai", "model": "fake-model", "base_url": url, "api_key_env": KEY}

    config = {
        "confirm": "never",
        "max_iterations": TURNS + 5,
        "max_input_tokens": BUDGET,
        "attach_listing": 0,
        "model_groups": {"default": {"normal": spec(normal), "cheap": spec(cheap)}},
    }
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(ws)


def test_two_hundred_turns_stay_under_budget_with_no_rejected_request(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    lines = [f"row {i}: value {i * 37 % 101}" for i in range(60)]
    (ws / "data.txt").write_text("\n".join(lines) + "\n")
    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap)
        for turn in range(TURNS):
            args = {"path": "data.txt", "start_line": 1 + turn % 10}
            server.reply(text=f"step {turn}", tool_calls=[ToolCall("read_code", args)])
        server.reply(text="All rows read. !!!COMPLETE!!!")
        for n in range(TURNS):
            cheap.reply(text=f"Summary {n}: read data.txt repeatedly; rows hold values.")
        cleared: list[dict[str, Any]] = []
        get_event_bus().subscribe(Event.BEFORE_HISTORY_CLEAR, lambda _e, p: cleared.append(p))

        out = agent.invoke(
            {"task": "Read data.txt again and again."},
            {**thread_config("long"), "recursion_limit": 4 * TURNS + 50},
            context={"workspace": str(ws), "non_interactive": True},
        )

        summaries = len(cheap.requests)
    assert out["status"] == "completed", out.get("final_answer")
    assert not server.rejected and not cheap.rejected
    assert len(server.requests) == TURNS + 1
    sizes = [request_tokens(body) for body in server.requests]
    assert max(sizes) <= BUDGET, sizes
    assert summaries >= 5 and len(cleared) == summaries
    assert all(p["messages"] and p["removed"] == len(p["messages"]) for p in cleared)
    last = server.requests[-1]["messages"]
    assert last[0]["role"] == "system"
    assert last[1]["name"] == "jarvis_summary" and "Summary" in last[1]["content"]
