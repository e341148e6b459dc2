"""EventBus: delivery, isolation of failing subscribers, stream output, callback folders."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from jarvis_graph.config import project_config_path
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import (
    Event,
    EventBus,
    get_event_bus,
    load_after_tool_call_callbacks,
    reset_event_buses,
)
from jarvis_graph.runtime.services import RunServices
from tests.support.trust import trust


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Event, dict[str, Any]]] = []

    def __call__(self, event: Event, payload: dict[str, Any]) -> None:
        self.calls.append((event, payload))


def test_subscribers_get_their_event_only() -> None:
    bus = EventBus()
    started, completed = Recorder(), Recorder()
    bus.subscribe(Event.TASK_STARTED, started)
    bus.subscribe("task_completed", completed)

    bus.emit(Event.TASK_STARTED, {"task": "t", "max_iterations": 3})

    assert started.calls == [(Event.TASK_STARTED, {"task": "t", "max_iterations": 3})]
    assert completed.calls == []


def test_subscribers_run_in_subscription_order() -> None:
    bus = EventBus()
    order: list[str] = []
    bus.subscribe(Event.AFTER_MODEL_CALL, lambda e, p: order.append("first"))
    bus.subscribe(Event.AFTER_MODEL_CALL, lambda e, p: order.append("second"))
    bus.emit(Event.AFTER_MODEL_CALL)
    assert order == ["first", "second"]


def test_unsubscribe_stops_delivery() -> None:
    bus = EventBus()
    kept, dropped, returned = Recorder(), Recorder(), Recorder()
    bus.subscribe(Event.BEFORE_TOOL_CALL, kept)
    bus.subscribe(Event.BEFORE_TOOL_CALL, dropped)
    undo = bus.subscribe(Event.BEFORE_TOOL_CALL, returned)

    bus.unsubscribe(Event.BEFORE_TOOL_CALL, dropped)
    undo()
    bus.unsubscribe(Event.BEFORE_TOOL_CALL, Recorder())  # unknown callback: ignored
    bus.emit(Event.BEFORE_TOOL_CALL, {"name": "x"})

    assert len(kept.calls) == 1
    assert dropped.calls == []
    assert returned.calls == []


def test_subscribers_cannot_change_the_callers_payload() -> None:
    bus = EventBus()

    def mutate(_event: Event, payload: dict[str, Any]) -> None:
        payload["name"] = "changed"

    bus.subscribe(Event.AFTER_TOOL_CALL, mutate)
    original = {"name": "read_code"}
    bus.emit(Event.AFTER_TOOL_CALL, original)
    assert original == {"name": "read_code"}


def test_failing_subscriber_is_logged_and_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    before, after = Recorder(), Recorder()

    def broken(_event: Event, _payload: dict[str, Any]) -> None:
        raise RuntimeError("subscriber exploded")

    bus.subscribe(Event.TASK_COMPLETED, before)
    bus.subscribe(Event.TASK_COMPLETED, broken)
    bus.subscribe(Event.TASK_COMPLETED, after)

    with caplog.at_level(logging.ERROR, logger="jarvis_graph.events"):
        bus.emit(Event.TASK_COMPLETED, {"status": "completed"})

    assert len(before.calls) == 1
    assert len(after.calls) == 1
    failures = [r for r in caplog.records if r.name == "jarvis_graph.events"]
    assert len(failures) == 1
    assert "task_completed" in failures[0].getMessage()
    assert failures[0].exc_info is not None
    assert "subscriber exploded" in str(failures[0].exc_info[1])


def test_unknown_event_name_is_rejected() -> None:
    bus = EventBus()
    with pytest.raises(ValueError, match="no_such_event"):
        bus.subscribe("no_such_event", Recorder())
    with pytest.raises(ValueError, match="no_such_event"):
        bus.emit("no_such_event")


def test_emit_outside_a_graph_run_is_fine() -> None:
    bus = EventBus()
    rec = Recorder()
    bus.subscribe(Event.TASK_STARTED, rec)
    bus.emit(Event.TASK_STARTED, {"task": "x"})  # no runnable context: no stream write
    assert len(rec.calls) == 1


class _State(TypedDict):
    n: int


def _tiny_graph(bus_name: str) -> Any:
    def emit_twice(state: _State) -> dict[str, int]:
        bus = get_event_bus(bus_name)
        bus.emit(Event.TASK_STARTED, {"task": "tiny", "max_iterations": 1})
        bus.emit(Event.TASK_COMPLETED, {"status": "completed", "final_answer": "", "iterations": 1})
        return {"n": state["n"] + 1}

    builder = StateGraph(_State)
    builder.add_node("emit_twice", emit_twice)
    builder.add_edge(START, "emit_twice")
    builder.add_edge("emit_twice", END)
    return builder.compile()


def test_events_are_written_to_the_custom_stream() -> None:
    graph = _tiny_graph("stream-test")
    items = list(graph.stream({"n": 0}, stream_mode="custom"))
    assert items == [
        {"event": "task_started", "payload": {"task": "tiny", "max_iterations": 1}},
        {
            "event": "task_completed",
            "payload": {"status": "completed", "final_answer": "", "iterations": 1},
        },
    ]


def test_subscribers_also_run_inside_a_graph() -> None:
    rec = Recorder()
    get_event_bus("inside-graph").subscribe(Event.TASK_STARTED, rec)
    assert _tiny_graph("inside-graph").invoke({"n": 0}) == {"n": 1}
    assert [e for e, _ in rec.calls] == [Event.TASK_STARTED]


def test_buses_are_cached_by_name_and_reset() -> None:
    first = get_event_bus("cached")
    assert get_event_bus("cached") is first
    assert get_event_bus("other") is not first
    reset_event_buses()
    assert get_event_bus("cached") is not first


# --- after-tool-call callbacks -------------------------------------------------------------


def _write_callbacks(folder: Path, log: Path) -> None:
    """Three modules, one per export style, each appending its name to ``log``."""
    folder.mkdir(parents=True, exist_ok=True)
    header = f"from pathlib import Path\nLOG = Path({str(log)!r})\n"

    def record(tag: str) -> str:
        return (
            "def _cb(payload):\n"
            "    with LOG.open('a') as f:\n"
            f"        f.write({tag!r} + ':' + payload['name'] + '\\n')\n"
        )

    (folder / "a_plain.py").write_text(
        header + record("plain") + "after_tool_call_cb = _cb\n", encoding="utf-8"
    )
    (folder / "b_getter.py").write_text(
        header + record("getter") + "def get_after_tool_call_cb():\n    return _cb\n",
        encoding="utf-8",
    )
    (folder / "c_register.py").write_text(
        header
        + record("register")
        + "def register_after_tool_call_cb():\n    return [_cb, 'not callable']\n",
        encoding="utf-8",
    )
    (folder / "d_broken.py").write_text("import no_such_module_for_jarvis\n", encoding="utf-8")
    (folder / "e_nothing.py").write_text("VALUE = 1\n", encoding="utf-8")
    (folder / "notes.txt").write_text("after_tool_call_cb = 1\n", encoding="utf-8")


def test_load_callbacks_in_all_three_styles_and_skip_broken(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "log.txt"
    _write_callbacks(tmp_path / "cbs", log)

    with caplog.at_level(logging.ERROR, logger="jarvis_graph.events"):
        callbacks = load_after_tool_call_callbacks([str(tmp_path / "cbs")])

    assert len(callbacks) == 3
    for cb in callbacks:
        cb({"name": "read_code"})
    assert log.read_text().splitlines() == [
        "plain:read_code",
        "getter:read_code",
        "register:read_code",
    ]
    broken = [r.getMessage() for r in caplog.records if "d_broken.py" in r.getMessage()]
    assert len(broken) == 1


def test_missing_callback_folder_gives_no_callbacks(tmp_path: Path) -> None:
    assert load_after_tool_call_callbacks([str(tmp_path / "missing")]) == []


def test_bus_subscribes_callbacks_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "log.txt"
    _write_callbacks(tmp_path / "cbs", log)
    monkeypatch.setenv("JARVIS_AFTER_TOOL_CALL_CB_DIRS", str(tmp_path / "cbs"))

    with caplog.at_level(logging.ERROR, logger="jarvis_graph.events"):
        bus = get_event_bus("with-callbacks")
    bus.emit(Event.BEFORE_TOOL_CALL, {"name": "not-after"})
    bus.emit(Event.AFTER_TOOL_CALL, {"name": "list_files"})

    assert sorted(log.read_text().splitlines()) == [
        "getter:list_files",
        "plain:list_files",
        "register:list_files",
    ]
    assert any("d_broken.py" in r.getMessage() for r in caplog.records)


def test_failing_callback_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cbs"
    folder.mkdir()
    log = tmp_path / "log.txt"
    (folder / "a_raises.py").write_text(
        "def after_tool_call_cb(payload):\n    raise ValueError('callback failed')\n"
    )
    (folder / "b_ok.py").write_text(
        "from pathlib import Path\n"
        "def after_tool_call_cb(payload):\n"
        f"    Path({str(log)!r}).write_text('ok\\n')\n"
    )
    monkeypatch.setenv("JARVIS_AFTER_TOOL_CALL_CB_DIRS", str(folder))
    with caplog.at_level(logging.ERROR, logger="jarvis_graph.events"):
        get_event_bus().emit(Event.AFTER_TOOL_CALL, {"name": "x"})
    assert log.read_text() == "ok\n"
    assert any(r.exc_info and "callback failed" in str(r.exc_info[1]) for r in caplog.records)


def test_a_run_bus_uses_the_configured_callback_dirs(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "log.txt"
    _write_callbacks(tmp_path / "cbs", log)
    config = project_config_path(workspace)
    config.parent.mkdir(parents=True)
    config.write_text(f"after_tool_call_cb_dirs: [{str(tmp_path / 'cbs')!r}]\n")
    trust(workspace)

    bus = RunServices(JarvisContext(workspace=str(workspace), event_bus="configured")).bus
    bus.emit(Event.AFTER_TOOL_CALL, {"name": "search_files"})

    assert len(log.read_text().splitlines()) == 3


def test_explicit_empty_dirs_ignore_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log.txt"
    _write_callbacks(tmp_path / "cbs", log)
    monkeypatch.setenv("JARVIS_AFTER_TOOL_CALL_CB_DIRS", str(tmp_path / "cbs"))
    get_event_bus("no-callbacks", cb_dirs=[]).emit(Event.AFTER_TOOL_CALL, {"name": "x"})
    assert not log.exists()
