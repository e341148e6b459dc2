"""A tool chain's graph on a real SQLite session store, with the run's real tools.

Each step is a node: its result is checkpointed before the next starts; conditions skip,
error policies stop, skip or retry; a risky step interrupts for confirmation exactly like
``confirm_tools`` (approve, edit, reject) and is declined in a non-interactive run.
"""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from jarvis_graph.chains.catalog import BUILTIN_DIR
from jarvis_graph.chains.spec import Chain, load_chain
from jarvis_graph.checkpointing import open_checkpointer
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.graphs.chain import build_chain_graph, compile_chain
from jarvis_graph.tools.sub_runs import take_output_file
from tests.support.snapshots import check_snapshot

SNAPSHOTS = Path(__file__).parent / "snapshots"

# A user tool that fails until it has been called ``times`` times (counted in a file).
FLAKY = '''
from pathlib import Path
from langchain_core.tools import tool

@tool
def flaky(counter: str, times: int) -> str:
    """Fail until called ``times`` times."""
    path = Path(counter)
    calls = int(path.read_text()) + 1 if path.exists() else 1
    path.write_text(str(calls))
    if calls < times:
        raise RuntimeError(f"call {calls} failed")
    return f"worked on call {calls}"
'''


@pytest.fixture
def saver(workspace: Path) -> Iterator[Any]:
    with open_checkpointer(workspace) as opened:
        yield opened


@pytest.fixture(autouse=True)
def flaky_tool(isolated_home: Path) -> None:
    folder = isolated_home / ".jarvis" / "tools"
    folder.mkdir(parents=True)
    (folder / "flaky.py").write_text(FLAKY)


def chain_of(tmp_path: Path, text: str) -> Chain:
    path = tmp_path / "chain.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_chain(path)


def run(
    chain: Chain, saver: Any, workspace: Path, given: dict[str, Any] | None = None, **ctx: Any
) -> tuple[Any, dict[str, Any]]:
    graph = compile_chain(chain, saver)
    config = {"configurable": {"thread_id": "t1"}}
    context = JarvisContext(workspace=str(workspace), platform="scripted", **ctx)
    state = {"chain": chain.name, "input": chain.arguments(given or {}), "status": "running"}
    graph.invoke(state, config, context=context)
    return graph, config


def values(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    return dict(graph.get_state(config).values)


def test_the_topology_is_one_node_per_step_with_an_exit_after_each() -> None:
    chain = load_chain(BUILTIN_DIR / "todo_report.yaml")
    drawing = build_chain_graph(chain).compile().get_graph().draw_mermaid(with_styles=False)
    check_snapshot(SNAPSHOTS / "chain_todo_report.mmd", drawing)


def test_steps_run_in_order_reading_earlier_results_and_each_is_checkpointed(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    chain = chain_of(
        tmp_path,
        """
        input:
          name: {type: string}
        steps:
          - id: read
            tool: read_code
            args: {path: "${input.name}"}
          - id: copy
            tool: write_file
            args: {path: copy.txt, content: "${steps.read.result}"}
          - id: check
            tool: search_files
            args: {pattern: beta, path: copy.txt}
        output: "copied; check: ${steps.check.result}"
        """,
    )
    graph, config = run(chain, saver, workspace, {"name": "notes.txt"}, confirm="never")

    out = values(graph, config)
    assert out["status"] == "completed"
    assert [(k, v["status"]) for k, v in out["steps"].items()] == [
        ("read", "succeeded"),
        ("copy", "succeeded"),
        ("check", "succeeded"),
    ]
    assert "beta" in (workspace / "copy.txt").read_text()
    assert out["output"].startswith("Chain chain completed: read succeeded, copy succeeded")
    assert "copied; check: 1 matching line in 1 file:\ncopy.txt:" in out["output"]
    # a checkpoint after each step: the next step to run, and the results so far
    history = [
        (h.next, sorted(h.values.get("steps") or {})) for h in graph.get_state_history(config)
    ]
    assert list(reversed(history))[1:] == [
        (("read",), []),
        (("copy",), ["read"]),
        (("check",), ["copy", "read"]),
        (("finish",), ["check", "copy", "read"]),
        ((), ["check", "copy", "read"]),
    ]


def test_a_false_condition_skips_and_a_reader_of_a_skipped_step_is_skipped_too(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    chain = chain_of(
        tmp_path,
        """
        steps:
          - id: find
            tool: search_files
            args: {pattern: NOTHING_HERE}
          - id: write
            tool: write_file
            if: "not ${steps.find.result} startswith 'no matches'"
            args: {path: out.txt, content: "${steps.find.result}"}
          - id: again
            tool: write_file
            args: {path: again.txt, content: "${steps.write.result}"}
          - id: last
            tool: list_files
        """,
    )
    graph, config = run(chain, saver, workspace, confirm="never")

    out = values(graph, config)
    steps = out["steps"]
    assert out["status"] == "completed"
    assert steps["write"]["status"] == "skipped"
    assert "its condition" in steps["write"]["result"]
    assert steps["again"] == {
        "status": "skipped",
        "result": "not run: it reads step 'write', which skipped",
        "attempts": 0,
    }
    assert steps["last"]["status"] == "succeeded"
    assert not (workspace / "out.txt").exists() and not (workspace / "again.txt").exists()


@pytest.mark.parametrize(
    ("policy", "times", "status", "attempts", "last_ran"),
    [
        ("stop", 2, "failed", 1, False),  # fails once: the chain stops there
        ("skip", 2, "completed", 1, True),  # fails once: the chain goes on
        ("retry 2", 3, "completed", 3, True),  # works on the third call
        ("retry 1", 3, "failed", 2, False),  # still failing after its one retry
    ],
)
def test_error_policies(
    tmp_path: Path,
    workspace: Path,
    saver: Any,
    policy: str,
    times: int,
    status: str,
    attempts: int,
    last_ran: bool,
) -> None:
    chain = chain_of(
        tmp_path,
        f"""
        steps:
          - id: shaky
            tool: flaky
            args: {{counter: "{workspace / "calls.txt"}", times: {times}}}
            on_error: {policy}
          - id: last
            tool: write_file
            args: {{path: last.txt, content: done}}
        """,
    )
    graph, config = run(chain, saver, workspace, confirm="never")

    out = values(graph, config)
    assert out["status"] == status
    assert out["steps"]["shaky"]["attempts"] == attempts
    assert (workspace / "calls.txt").read_text() == str(attempts)
    assert (workspace / "last.txt").exists() is last_ran
    if status == "failed":
        assert (
            "Stopped at step shaky (flaky): Error: tool flaky failed: RuntimeError" in out["output"]
        )


CONFIRMED = """
steps:
  - id: write
    tool: write_file
    args: {path: out.txt, content: "from the chain"}
  - id: after
    tool: list_files
"""


def test_a_risky_step_asks_like_confirm_tools_and_approve_runs_it(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    graph, config = run(chain_of(tmp_path, CONFIRMED), saver, workspace)  # confirm: risky

    state = graph.get_state(config)
    (waiting,) = state.interrupts
    assert waiting.value["type"] == "confirm_tools"
    (request,) = waiting.value["requests"]
    assert request["name"] == "write_file" and request["kind"] == "confirm"
    assert (request["chain"], request["step"]) == ("chain", "write")
    assert request["args"] == {"path": "out.txt", "content": "from the chain"}
    assert not (workspace / "out.txt").exists()  # nothing ran before the answer

    graph.invoke(Command(resume="approve"), config, context=JarvisContext(workspace=str(workspace)))

    assert (workspace / "out.txt").read_text() == "from the chain"
    assert values(graph, config)["status"] == "completed"


def test_edit_runs_the_step_with_the_users_arguments(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    graph, config = run(chain_of(tmp_path, CONFIRMED), saver, workspace)
    request = graph.get_state(config).interrupts[0].value["requests"][0]

    edited = {"path": "edited.txt", "content": "edited"}
    decision = {request["id"]: {"action": "edit", "args": edited}}
    graph.invoke(Command(resume=decision), config, context=JarvisContext(workspace=str(workspace)))

    assert (workspace / "edited.txt").read_text() == "edited"
    assert not (workspace / "out.txt").exists()


def test_reject_stops_the_chain_with_the_reason(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    graph, config = run(chain_of(tmp_path, CONFIRMED), saver, workspace)
    request = graph.get_state(config).interrupts[0].value["requests"][0]

    decision = {request["id"]: {"action": "reject", "reason": "not today"}}
    graph.invoke(Command(resume=decision), config, context=JarvisContext(workspace=str(workspace)))

    out = values(graph, config)
    assert out["status"] == "stopped"
    assert out["steps"]["write"]["result"] == "declined by the user (not today)"
    assert "after" not in out["steps"]
    assert not (workspace / "out.txt").exists()


def test_a_non_interactive_run_declines_a_risky_step_and_never_runs_it(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    graph, config = run(chain_of(tmp_path, CONFIRMED), saver, workspace, non_interactive=True)

    out = values(graph, config)
    assert graph.get_state(config).interrupts == ()
    assert out["status"] == "stopped"
    assert out["steps"]["write"]["result"].startswith("not run: this run is non-interactive")
    assert not (workspace / "out.txt").exists()


def test_a_step_stays_inside_the_workspace_as_a_direct_call_does(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret plans")
    (workspace / "link.txt").symlink_to(outside)
    chain = chain_of(
        tmp_path,
        """
        steps:
          - id: read
            tool: read_code
            args: {path: link.txt}
        """,
    )
    graph, config = run(chain, saver, workspace, confirm="never")

    out = values(graph, config)
    assert out["status"] == "failed"
    assert "outside the workspace" in out["steps"]["read"]["result"]
    assert "secret plans" not in out["output"]


def test_a_secret_in_a_steps_result_never_reaches_the_checkpoint(
    tmp_path: Path, workspace: Path, saver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-chain-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    (workspace / "leak.txt").write_text(f"key={key}\n")
    chain = chain_of(tmp_path, "steps:\n  - {id: read, tool: read_code, args: {path: leak.txt}}\n")
    graph, config = run(chain, saver, workspace, confirm="never")

    assert "key=***" in values(graph, config)["steps"]["read"]["result"]
    db = workspace / ".jarvis" / "sessions.sqlite"
    stored = b"".join(
        bytes(row[0]) for row in sqlite3.connect(db).execute("SELECT checkpoint FROM checkpoints")
    )
    blobs = b"".join(p.read_bytes() for p in db.parent.rglob("*") if p.is_file() and p != db)
    assert key.encode() not in stored + blobs


def test_a_long_chain_runs_past_langgraphs_default_step_limit(
    tmp_path: Path, workspace: Path
) -> None:
    import jarvis_graph.graphs  # noqa: F401 - registers the chain graph, as every run does
    from jarvis_graph.runtime.services import RunServices

    folder = workspace / ".jarvis" / "chains"
    folder.mkdir(parents=True)
    steps = "".join(f"  - {{id: s{i}, tool: list_files}}\n" for i in range(40))
    (folder / "long.yaml").write_text(f"steps:\n{steps}")
    services = RunServices(JarvisContext(workspace=str(workspace), platform="scripted"))

    report = services.tools["long"].invoke({})

    assert report.startswith("Chain long completed: s0 succeeded,")
    assert "s39 succeeded." in report


def test_a_steps_streamed_output_file_is_reported_with_its_result(
    tmp_path: Path, workspace: Path, saver: Any
) -> None:
    """execute_script notes the file it streamed to; the chain reports it, as run_tools does."""
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text("tool_output_limit: 300\n")
    seen: list[dict[str, Any]] = []
    get_event_bus("chain-output-test").subscribe(
        Event.AFTER_TOOL_CALL, lambda _e, payload: seen.append(payload)
    )
    chain = chain_of(
        tmp_path,
        """
        steps:
          - id: count
            tool: execute_script
            args: {script: "seq 1 500"}
        """,
    )
    run(chain, saver, workspace, confirm="never", event_bus="chain-output-test")

    (after,) = seen
    saved = Path(after["output_path"])
    assert saved.parent == workspace.resolve() / ".jarvis" / "tool_outputs"
    assert saved.read_text() == "".join(f"{n}\n" for n in range(1, 501))
    assert take_output_file(after["tool_call_id"]) is None  # taken, not left behind
