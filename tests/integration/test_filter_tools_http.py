"""filter_tools over real HTTP: the cheap model picks by number, the model sees only those."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jarvis_graph.events import Event, get_event_bus
from tests.support.fake_openai import FAKE_KEY_VAR, FakeOpenAI, thread_config
from tests.support.trust import trust


def configure(ws: Path, normal: FakeOpenAI, cheap: FakeOpenAI, **settings: Any) -> None:
    def spec(server: FakeOpenAI) -> dict[str, Any]:
        return {
            "platform": "openai",
            "model": "fake-model",
            "base_url": server.base_url,
            "api_key_env": FAKE_KEY_VAR,
        }

    config = {
        "confirm": "never",
        "attach_listing": 0,
        "tool_filter_threshold": 3,
        "model_groups": {"default": {"normal": spec(normal), "cheap": spec(cheap)}},
        **settings,
    }
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(ws)


def numbered(prompt: str) -> list[str]:
    """Tool names of the picking prompt's numbered list, in order."""
    return [m.group(1) for m in re.finditer(r"^\d+\. (\w+):", prompt, re.MULTILINE)]


def offered(body: dict[str, Any]) -> list[str]:
    return sorted(t["function"]["name"] for t in body.get("tools") or [])


def run(agent: Any, ws: Path) -> tuple[dict[str, Any], list[tuple[Event, dict[str, Any]]]]:
    events: list[tuple[Event, dict[str, Any]]] = []
    for event in (Event.BEFORE_TOOL_FILTER, Event.TOOL_FILTERED):
        get_event_bus().subscribe(event, lambda e, p: events.append((e, p)))
    out = agent.invoke(
        {"task": "List the files in the workspace folder."},
        thread_config("f"),
        context={"workspace": str(ws), "non_interactive": True},
    )
    return out, events


def test_the_cheap_models_pick_is_all_the_model_is_offered(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap, tool_filter_always_include=["read_co*"])
        cheap.reply(text="1")
        server.reply(text="Done. !!!COMPLETE!!!")
        out, events = run(agent, ws)
        pick_request = cheap.requests[0]

    assert out["status"] == "completed"
    (_, before), (_, filtered) = events
    assert before["available"] == filtered["available"] > 3
    listed = numbered(pick_request["messages"][-1]["content"])
    assert len(listed) == filtered["available"]  # fewer tools than tool_filter_candidates
    assert filtered["selected"] == [listed[0], "read_code"]  # the pick, then always-included
    assert offered(server.requests[0]) == sorted({listed[0], "read_code"})
    assert "tools" not in pick_request  # the picking model is not offered tools


def test_a_malformed_answer_is_retried_then_the_top_ranked_are_kept(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap, tool_filter_fallback=2)
        cheap.reply(text="I would list the files.")
        cheap.reply(text="list_files please")
        server.reply(text="Done. !!!COMPLETE!!!")
        out, events = run(agent, ws)
        retry = cheap.requests[1]["messages"]
        cheap_prompt = cheap.requests[0]["messages"][-1]["content"]

    assert out["status"] == "completed"
    assert len(events) == 2
    selected = events[1][1]["selected"]
    assert selected == numbered(cheap_prompt)[:2]  # the two best-ranked
    assert offered(server.requests[0]) == sorted(selected)
    assert retry[-2] == {"role": "assistant", "content": "I would list the files."}
    assert "numbers only" in retry[-1]["content"]


def test_few_tools_are_not_filtered(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap, tool_filter_threshold=200)
        server.reply(text="Done. !!!COMPLETE!!!")
        out, events = run(agent, ws)
        assert not cheap.requests
    assert out["status"] == "completed" and events == []
    assert len(offered(server.requests[0])) > 3
