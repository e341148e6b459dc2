"""The agent graph served by ``langgraph dev`` (the API LangGraph Studio talks to).

Each test starts ``langgraph dev`` on a free loopback port with the repository's
``langgraph.json`` and drives it over HTTP with ``langgraph_sdk``, the way Studio does.
The server runs in a temporary working directory (``--config`` points at the repo's file):
the in-memory server pickles its threads into ``.langgraph_api/`` under its working
directory, and test threads must not show up in a developer's own ``langgraph dev``
session or race with another test run. The graph is imported in module form
(``jarvis_graph.graphs.agent:graph``), so the repo root goes on ``PYTHONPATH`` as it
would be for ``langgraph dev`` started in the repo root.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from jarvis_graph.loopback import start_listening
from jarvis_graph.ui.launch import stop_server

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 90.0
RUN_TIMEOUT = 60.0
AGENT_NODES = {
    "start_task",
    "call_model",
    "confirm_tools",
    "run_tools",
    "ask_user",
    "complete_task",
}


def _announced_url(log: str) -> str | None:
    """The URL in the server's banner (it moves to another port when ours was taken)."""
    match = re.search(r"API: (http://127\.0\.0\.1:\d+)", re.sub(r"\x1b\[[0-9;]*m", "", log))
    return match.group(1) if match else None


def _wait_until_ready(proc: subprocess.Popen[bytes], log_file: Path) -> str:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"langgraph dev exited with code {proc.returncode}:\n{log_file.read_text()}"
            pytest.fail(msg)
        url = _announced_url(log_file.read_text(errors="replace"))
        try:
            if url and httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                return url
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    msg = f"langgraph dev not ready after {STARTUP_TIMEOUT:g} s; its log:\n{log_file.read_text()}"
    pytest.fail(msg)


@contextmanager
def dev_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Run ``langgraph dev`` with the repository's config; yield its URL and its log file."""
    cwd = tmp_path / "server"
    cwd.mkdir()
    env = os.environ.copy()  # HOME and JARVIS_HOME already point at the test's home
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    langgraph = Path(sys.executable).with_name("langgraph")  # the venv's console script
    assert langgraph.is_file(), f"{langgraph} missing: install the dev extra (langgraph-cli[inmem])"
    log_file = tmp_path / "langgraph_dev.log"

    def on(port: int) -> subprocess.Popen[bytes]:
        cmd = [str(langgraph), "dev", "--config", str(REPO / "langgraph.json")]
        cmd += ["--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"]
        with log_file.open("ab") as log:
            return subprocess.Popen(
                cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    proc, _port = start_listening(on, STARTUP_TIMEOUT, lambda _p: log_file.read_text(), moves=True)
    try:
        yield _wait_until_ready(proc, log_file), log_file
    finally:
        stop_server(proc)


@pytest.fixture
def server_url(tmp_path: Path, isolated_home: Path) -> Iterator[str]:
    """Run ``langgraph dev`` for one test; yield its base URL."""
    with dev_server(tmp_path) as (url, _log):
        yield url


@pytest.fixture
def client(server_url: str) -> Iterator[SyncLangGraphClient]:
    with get_sync_client(url=server_url, api_key=None, timeout=RUN_TIMEOUT) as sdk:
        yield sdk


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "notes.md").write_text("# Notes\n")
    (workspace / "data.csv").write_text("a,b\n1,2\n")
    return workspace


def _script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"turns": turns}))  # JSON is valid YAML
    return str(path)


def _agent_id(client: SyncLangGraphClient, graph_id: str = "agent") -> str:
    found = client.assistants.search(graph_id=graph_id)
    assert len(found) == 1, found
    return str(found[0]["assistant_id"])


def test_langgraph_json_declares_the_agent_graph() -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["graphs"] == {
        "agent": "jarvis_graph.graphs.agent:graph",
        "planner": "jarvis_graph.graphs.planner:graph",
        "multi_agent": "jarvis_graph.graphs.multi_agent:graph",
        "expert_router": "jarvis_graph.graphs.multi_agent:router_graph",
        "security_scan": "jarvis_graph.graphs.security_scan:graph",
        "code_agent": "jarvis_graph.graphs.code_agent:graph",
    }
    assert config["dependencies"] == ["."]
    assert config["python_version"] == "3.11"
    # An env *file* would have to exist for `langgraph up`; the server inherits the shell's env.
    assert not isinstance(config.get("env"), str), "langgraph.json must not require a .env file"


def test_graph_and_context_schema_are_served(client: SyncLangGraphClient) -> None:
    assistant_id = _agent_id(client)
    drawing = client.assistants.get_graph(assistant_id)
    assert AGENT_NODES <= {node["id"] for node in drawing["nodes"]}
    schemas = client.assistants.get_schemas(assistant_id)
    fields = schemas["context_schema"]["properties"]
    assert {"workspace", "platform", "script", "non_interactive"} <= set(fields)


def test_non_interactive_run_completes(
    client: SyncLangGraphClient, ws: Path, tmp_path: Path
) -> None:
    script = _script(
        tmp_path / "script.yaml",
        [
            {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
            {"text": "The workspace holds data.csv and notes.md. !!!COMPLETE!!!"},
        ],
    )
    context = {"workspace": str(ws), "platform": "scripted", "script": script}
    thread = client.threads.create()
    output = client.runs.wait(
        thread["thread_id"],
        _agent_id(client),
        input={"task": "Which files are in the workspace?"},
        context={**context, "non_interactive": True},
    )
    assert isinstance(output, dict), output
    assert output["status"] == "completed", output
    assert output["final_answer"] == "The workspace holds data.csv and notes.md."
    tool_messages = [m for m in output["messages"] if m["type"] == "tool"]
    assert len(tool_messages) == 1
    assert "data.csv" in tool_messages[0]["content"]
    assert "notes.md" in tool_messages[0]["content"]
    state = client.threads.get_state(thread["thread_id"])
    assert state["next"] == []
    assert state["values"]["status"] == "completed"


def test_interactive_run_stops_for_confirmation_and_resumes(
    client: SyncLangGraphClient, ws: Path, tmp_path: Path
) -> None:
    script = _script(
        tmp_path / "script.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "echo hi > out.txt"}}]},
            {"text": "Wrote out.txt. !!!COMPLETE!!!"},
        ],
    )
    context = {"workspace": str(ws), "platform": "scripted", "script": script}
    context["non_interactive"] = False
    assistant_id = _agent_id(client)
    thread_id = client.threads.create()["thread_id"]

    client.runs.wait(thread_id, assistant_id, input={"task": "Write out.txt"}, context=context)
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["confirm_tools"]
    (interrupt,) = state["interrupts"]
    assert interrupt["value"]["type"] == "confirm_tools"
    (request,) = interrupt["value"]["requests"]
    assert (request["name"], request["kind"]) == ("execute_script", "confirm")
    assert not (ws / "out.txt").exists()  # nothing ran before the user said yes
    assert client.threads.get(thread_id)["status"] == "interrupted"

    output = client.runs.wait(
        thread_id, assistant_id, command={"resume": "approve"}, context=context
    )
    assert isinstance(output, dict), output
    assert output["status"] == "completed", output
    assert output["final_answer"] == "Wrote out.txt."
    assert (ws / "out.txt").read_text() == "hi\n"
    assert client.threads.get_state(thread_id)["next"] == []


def test_planner_and_multi_agent_graphs_are_served_with_their_subgraphs(
    client: SyncLangGraphClient,
) -> None:
    planner = client.assistants.get_graph(_agent_id(client, "planner"), xray=True)
    ids = {node["id"] for node in planner["nodes"]}
    assert {"decide_plan", "run_step", "adjust_plan", "write_back"} <= ids
    assert {f"agent:{node}" for node in AGENT_NODES} <= ids  # the agent subgraph, drawn inside
    multi = client.assistants.get_graph(_agent_id(client, "multi_agent"), xray=True)
    ids = {node["id"] for node in multi["nodes"]}
    for agent in ("lead", "coder", "reviewer"):
        assert {f"{agent}:call_model", f"{agent}:run_tools"} <= ids
    flat = client.assistants.get_graph(_agent_id(client, "multi_agent"))
    handoffs = {(e["source"], e["target"]) for e in flat["edges"]}
    assert {("lead", "coder"), ("coder", "reviewer"), ("reviewer", "lead")} <= handoffs
    router = client.assistants.get_graph(_agent_id(client, "expert_router"))
    assert {("pick_expert", "coder")} <= {(e["source"], e["target"]) for e in router["edges"]}


def _completed_run(
    client: SyncLangGraphClient, graph_id: str, task: str, context: dict[str, Any]
) -> dict[str, Any]:
    """Run ``task`` on a new thread of ``graph_id``; the run must complete."""
    output = client.runs.wait(
        client.threads.create()["thread_id"],
        _agent_id(client, graph_id),
        input={"task": task},
        context=context,
    )
    assert isinstance(output, dict), output
    assert output["status"] == "completed", output
    return output


def test_planner_run_splits_and_answers_from_the_results(
    client: SyncLangGraphClient, ws: Path, tmp_path: Path
) -> None:
    steps = [
        {"id": "rows", "task": "Count the rows of data.csv"},
        {"id": "sum", "task": "Sum column b of data.csv"},
    ]
    script = _script(
        tmp_path / "plan.yaml",
        [
            {"when": "<RESULT_SUMMARY>", "text": "1 row; b sums to 2. !!!COMPLETE!!!"},
            {
                "when": "Decide whether the task",
                "tool_calls": [{"name": "PlanDecision", "args": {"split": True, "steps": steps}}],
            },
            {"when": "Count the rows", "text": "1 row !!!COMPLETE!!!"},
            {"when": "Sum column b", "text": "b sums to 2 !!!COMPLETE!!!"},
        ],
    )
    context = {"workspace": str(ws), "platform": "scripted", "script": script}
    context |= {"non_interactive": True, "plan_max_depth": 1}
    task = "How many rows has data.csv and what does column b sum to?"
    output = _completed_run(client, "planner", task, context)
    assert output["final_answer"] == "1 row; b sums to 2."
    results = output["step_results"]
    assert {k: (v["status"], v["answer"]) for k, v in results.items()} == {
        "rows": ("completed", "1 row"),
        "sum": ("completed", "b sums to 2"),
    }


def test_multi_agent_run_hands_off_and_answers(
    client: SyncLangGraphClient, ws: Path, tmp_path: Path
) -> None:
    send = {"to": "coder", "content": "List the CSV files."}
    script = _script(
        tmp_path / "team.yaml",
        [
            {"when": "Write a hand-off summary", "text": "Done: nothing yet. Next step: list."},
            {"when": "Message from coder", "text": "There is one: data.csv. !!!COMPLETE!!!"},
            {"when": "agent 'lead'", "tool_calls": [{"name": "send_message", "args": send}]},
            {"when": "agent 'coder'", "tool_calls": [{"name": "list_files", "args": {}}]},
            {"when": "agent 'coder'", "text": "data.csv"},
        ],
    )
    context = {"workspace": str(ws), "platform": "scripted", "script": script}
    output = _completed_run(client, "multi_agent", "Which CSV files are there?", context)
    assert output["final_answer"] == "There is one: data.csv."
    assert output["handoffs"] == 2  # lead -> coder, and coder's answer back to lead
    notes = [m["content"] for m in output["messages"] if m["type"] == "ai"]
    assert notes[0] == "lead -> coder: List the CSV files."
