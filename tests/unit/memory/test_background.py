"""The background memory worker: jobs run after the caller moves on, and can be waited for."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, EventBus
from jarvis_graph.memory.background import after_run, submit, wait_for_background
from jarvis_graph.memory.episodic import open_archive, search_project
from jarvis_graph.memory.hooks import EpisodeIndexer


def test_a_job_runs_after_submit_returns_and_wait_sees_it_done() -> None:
    started, release, done = threading.Event(), threading.Event(), []

    def job() -> None:
        started.set()
        release.wait(5)
        done.append(1)

    submit(job)
    assert started.wait(5) and done == []  # the caller went on while the job runs
    assert wait_for_background(timeout=0.05) is False
    release.set()
    assert wait_for_background(timeout=5) is True and done == [1]


def test_a_failing_job_is_logged_and_does_not_stop_the_next() -> None:
    def boom() -> None:
        raise RuntimeError("no disk")

    submit(boom)
    later: list[int] = []
    submit(lambda: later.append(2))
    assert wait_for_background(timeout=5) is True and later == [2]


def test_the_archive_subscriber_returns_before_indexing_and_a_search_waits(
    workspace: Path,
) -> None:
    bus = EventBus()
    bus.subscribe(Event.TASK_COMPLETED, EpisodeIndexer(JarvisContext(workspace=str(workspace))))
    release = threading.Event()
    submit(lambda: release.wait(5))  # the worker is busy: what the emit queues must wait
    messages = [HumanMessage("Which port?", id="h"), AIMessage("Port 8443.", id="a")]
    bus.emit(Event.TASK_COMPLETED, {"thread_id": "t1", "checkpoint_id": "c", "messages": messages})
    assert not (workspace / ".jarvis" / "memory").exists()  # nothing indexed on this thread
    release.set()
    found = search_project(workspace, "port")  # waits for this process's pending archiving
    assert {e.value["message_id"] for e in found} == {"h", "a"}
    assert len(open_archive(workspace).search(limit=10)) == 2


def _graph(*nodes: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict, total=False):
        n: int

    builder = StateGraph(State)
    names = [f"n{i}" for i in range(len(nodes))]
    for name, node in zip(names, nodes, strict=True):
        builder.add_node(name, node)
    for a, b in zip([START, *names], [*names, END], strict=True):
        builder.add_edge(a, b)
    return builder.compile()


def test_a_job_queued_inside_a_run_starts_after_the_run_returns() -> None:
    order: list[str] = []

    def queue(_state: Any) -> dict[str, Any]:
        submit(after_run(lambda: order.append("job")))
        return {}

    def rest_of_the_run(_state: Any) -> dict[str, Any]:
        time.sleep(0.3)  # a free worker would have run the job by now
        order.append("run")
        return {}

    _graph(queue, rest_of_the_run).invoke({})
    assert wait_for_background(timeout=10) is True
    assert order == ["run", "job"]


def test_waiting_for_the_worker_inside_the_run_starts_the_job_at_once() -> None:
    order: list[str] = []

    def queue(_state: Any) -> dict[str, Any]:
        submit(after_run(lambda: order.append("job")))
        return {}

    def search(_state: Any) -> dict[str, Any]:  # a memory search of the same run
        start = time.monotonic()
        assert wait_for_background(timeout=10) is True
        order.append(f"searched after {time.monotonic() - start < 2}")
        return {}

    _graph(queue, search).invoke({})
    assert order == ["job", "searched after True"]


def test_a_job_queued_outside_a_run_is_not_held_back() -> None:
    job = lambda: None  # noqa: E731
    assert after_run(job) is job
