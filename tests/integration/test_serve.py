"""``jarvis serve``: several server workers on one PostgreSQL and one Redis.

Each worker is a real ``jarvis serve`` process of the server environment (``make
serve-env`` builds ``.venv-serve``) on a free loopback port, driven over HTTP with
``langgraph_sdk`` as Studio and any client would. PostgreSQL (a database of the test's own)
and Redis are real servers started by the fixtures. Models are scripted; the tools are real.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from jarvis_graph.config import user_config_path
from tests.support.cli import run_process
from tests.support.serve import REPO, Worker, serve_jarvis, server_env, workers

pytestmark = pytest.mark.slow

HEARTBEAT = 2  # seconds: a dead worker's run moves to another within a few of these


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``jarvis serve`` of the server environment that is expected to refuse to start."""
    return subprocess.run(
        [str(serve_jarvis()), "serve", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _refused(
    args: list[str], env: dict[str, str], cwd: Path
) -> tuple[subprocess.CompletedProcess[str], str]:
    """``jarvis serve`` that must refuse to start: exit 2 and one line on stderr (returned)."""
    done = _serve(args, env, cwd)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return done, lines[0]


@pytest.fixture
def two_workers(pg_url: str, redis_url: str, tmp_path: Path) -> Iterator[tuple[Worker, Worker]]:
    with workers("ab", server_env(pg_url, redis_url), tmp_path, heartbeat=HEARTBEAT) as (a, b):
        yield a, b


def _client(w: Worker) -> SyncLangGraphClient:
    return get_sync_client(url=w.url, api_key=None, timeout=60.0)


def _agent(client: SyncLangGraphClient) -> str:
    (found,) = client.assistants.search(graph_id="agent")
    return str(found["assistant_id"])


def _script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"turns": turns}))  # JSON is valid YAML
    return str(path)


def _context(ws: Path, script: str) -> dict[str, Any]:
    """The run's context; the model and the confirmation policy are the user's settings.

    A caller of the API may not choose them in the context (``jarvis_graph.api_auth``):
    they go in the user's config, which the workers (HOME and JARVIS_HOME are the test's)
    read at each run.
    """
    spec = {"platform": "scripted", "script": script}
    config = {"model_groups": {"default": {"normal": spec, "cheap": spec}}, "confirm": "never"}
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(json.dumps(config))
    return {"workspace": str(ws), "non_interactive": True}


def _wait(client: SyncLangGraphClient, thread_id: str, task: str, context: dict[str, Any]) -> Any:
    """The values a run of the agent on ``task`` ends with."""
    return client.runs.wait(thread_id, _agent(client), input={"task": task}, context=context)


def _wait_run(client: SyncLangGraphClient, thread_id: str, run_id: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = str(client.runs.get(thread_id, run_id)["status"])
        if status not in ("pending", "running"):
            return status
        time.sleep(0.25)
    pytest.fail(f"run {run_id} still not done after {timeout:g} s")


# --- refusing to start ---------------------------------------------------------------------


def test_serve_outside_its_environment_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", "postgresql://127.0.0.1:1/x")
    done = run_process(["serve"], cwd=tmp_path)  # the test environment's jarvis
    assert done.returncode == 2, done.stdout + done.stderr
    assert "make serve-env" in done.stderr
    assert "Traceback" not in done.stderr


def _closed_port() -> int:
    return _free_port()  # nothing listens there once the probe socket is closed


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("no_database", "no database: set JARVIS_CHECKPOINT_URL=postgresql://"),
        ("sqlite_database", "is not a postgresql:// URL"),
        ("no_redis", "no Redis: set JARVIS_REDIS_URL=redis://"),
        ("database_down", "cannot reach PostgreSQL at postgresql://127.0.0.1:"),
        ("redis_down", "cannot reach Redis at redis://127.0.0.1:"),
        ("no_config", "langgraph.json not found: run jarvis serve in the project root"),
    ],
)
def test_serve_refuses_a_bad_setup_with_one_clear_line(
    case: str, expected: str, pg_url: str, tmp_path: Path
) -> None:
    secret = "s3cret-pw"
    env = os.environ.copy()
    env["JARVIS_CHECKPOINT_URL"] = pg_url
    env["JARVIS_REDIS_URL"] = f"redis://:{secret}@127.0.0.1:{_closed_port()}/0"
    args = ["--config", str(REPO / "langgraph.json")]
    if case == "no_database":
        del env["JARVIS_CHECKPOINT_URL"]
    elif case == "sqlite_database":
        env["JARVIS_CHECKPOINT_URL"] = str(tmp_path / "sessions.sqlite")
    elif case == "no_redis":
        del env["JARVIS_REDIS_URL"]
    elif case == "database_down":
        env["JARVIS_CHECKPOINT_URL"] = f"postgresql://jarvis:{secret}@127.0.0.1:{_closed_port()}/x"
    elif case == "no_config":
        args = []  # the working folder has no langgraph.json
    done, line = _refused(args, env, tmp_path)
    assert line.startswith("error: ")
    assert expected in line
    assert secret not in done.stdout + done.stderr


def test_serve_refuses_a_port_in_use_instead_of_moving(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    """The upstream server would bind another port and the banner would name the taken one."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        args = ["--port", str(port), "--config", str(REPO / "langgraph.json")]
        done, line = _refused(args, server_env(pg_url, redis_url), tmp_path)
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}: "), line
    assert "pass --port with a free one" in line


def test_a_worker_whose_port_was_taken_starts_on_another_and_is_the_one_used(
    pg_url: str, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy machine may take a picked port before the worker binds it: the worker must
    not be mistaken for whatever answers there."""
    from tests.integration.test_loopback_ports import _impostor, _Ok, _taken_first

    with _impostor(_Ok) as taken:
        picks = _taken_first(monkeypatch, taken)
        env = server_env(pg_url, redis_url)
        with workers("a", env, tmp_path) as (a,), _client(a) as client:
            assert picks[0] == taken
            assert not a.url.endswith(f":{taken}")
            assert _agent(client)  # the LangGraph API of the worker started, not the impostor


# --- two workers ---------------------------------------------------------------------------


def test_a_thread_started_on_one_worker_continues_on_the_other(
    two_workers: tuple[Worker, Worker],
    workspace: Path,
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = two_workers
    (workspace / "notes.md").write_text("the launch is on Friday\n")
    # the scripted model answers turn by turn over the whole thread: both tasks' turns
    script = _script(
        tmp_path / "thread.yaml",
        [
            {"tool_calls": [{"name": "read_code", "args": {"path": "notes.md"}}]},
            {"text": "The launch is on Friday. !!!COMPLETE!!!"},
            {"text": "It was Friday. !!!COMPLETE!!!"},
        ],
    )
    with _client(a) as via_a, _client(b) as via_b:
        thread_id = via_a.threads.create()["thread_id"]
        out = _wait(via_a, thread_id, "When is the launch?", _context(workspace, script))
        assert isinstance(out, dict) and out["status"] == "completed", out
        # the thread and its history are B's too
        assert via_b.threads.get(thread_id)["status"] == "idle"
        assert via_b.threads.get_state(thread_id)["values"]["final_answer"] == (
            "The launch is on Friday."
        )
        out = _wait(via_b, thread_id, "Which day did you say?", _context(workspace, script))
        assert isinstance(out, dict) and out["status"] == "completed", out
        contents = [str(m["content"]) for m in out["messages"]]
        assert "When is the launch?" in " ".join(contents)  # the first task's turn is there
        assert any("the launch is on Friday" in c for c in contents), contents  # tool result
        assert out["final_answer"] == "It was Friday."
        runs = via_a.runs.list(thread_id)
        assert sorted(r["status"] for r in runs) == ["success", "success"]
    # The CLI reads the same sessions (compact checkpoints in the same database).
    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", pg_url)
    listed = run_process(["sessions", "list"], cwd=workspace)
    assert listed.returncode == 0, listed.stderr
    assert str(thread_id) in listed.stdout


def test_a_killed_worker_s_run_finishes_on_the_other_without_repeating_a_tool_call(
    two_workers: tuple[Worker, Worker], workspace: Path, tmp_path: Path
) -> None:
    a, b = two_workers
    steps = ["one", "two", "three", "four", "five"]
    turns: list[dict[str, Any]] = [
        {
            "delay": 1.0,
            "tool_calls": [
                {"name": "execute_script", "args": {"script": f"echo {s} >> calls.log"}}
            ],
        }
        for s in steps
    ]
    turns.append({"delay": 1.0, "text": "Wrote five lines. !!!COMPLETE!!!"})
    script = _script(tmp_path / "steps.yaml", turns)
    calls = workspace / "calls.log"
    with _client(a) as via_a, _client(b) as via_b:
        thread_id = via_a.threads.create()["thread_id"]
        run = via_a.runs.create(
            thread_id, _agent(via_a), input={"task": "write the steps"},
            context=_context(workspace, script),
        )  # fmt: skip
        run_id = str(run["run_id"])
        deadline = time.monotonic() + 60
        while not calls.exists() or len(calls.read_text().split()) < 2:
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        # The worker that took the run says so in its log; kill that one.
        running = [w for w in (a, b) if w.started(run_id)]
        assert len(running) == 1, "exactly one worker runs the run"
        dead, alive = (a, via_b) if running[0] is a else (b, via_a)
        dead.kill()
        # What the dead worker had recorded (the other takes the run up only once its
        # heartbeat has expired, a few seconds from now).
        recorded = _tool_results(alive.threads.get_state(thread_id)["values"])
        status = _wait_run(alive, thread_id, run_id, timeout=120)
        assert status == "success"
        state = alive.threads.get_state(thread_id)
        assert state["values"]["status"] == "completed"
        assert state["values"]["final_answer"] == "Wrote five lines."
    lines = calls.read_text().split()
    # A call whose result was recorded never runs again; the one running at the kill (its
    # result unrecorded) may run twice, and every step ran, in order.
    assert 1 <= len(recorded) <= len(steps)
    assert lines[: len(recorded)] == steps[: len(recorded)]
    assert [s for i, s in enumerate(lines) if s not in lines[:i]] == steps
    assert len(lines) <= len(steps) + 1


def _tool_results(values: dict[str, Any]) -> list[Any]:
    return [m for m in values.get("messages", []) if m.get("type") == "tool"]


def test_the_workers_share_one_memory_store(
    pg_url: str, redis_url: str, pgvector_url: str, tmp_path: Path
) -> None:
    env = server_env(pg_url, redis_url, JARVIS_STORE_URL=pgvector_url)
    with workers("ab", env, tmp_path, heartbeat=HEARTBEAT) as (a, b):
        with _client(a) as via_a, _client(b) as via_b:
            value = {"type": "global_long_term", "tags": ["ops"], "content": "Deploys on Tuesday"}
            via_a.store.put_item(["global_long_term"], "fact-1", value)
            found = via_b.store.search_items(["global_long_term"], query="when do we deploy")
            assert [i["key"] for i in found["items"]] == ["fact-1"]
            item = via_b.store.get_item(["global_long_term"], "fact-1")
            assert item is not None and item["value"]["content"] == "Deploys on Tuesday"
        banner = a.log.read_text(errors="replace")
    assert re.search(r"jarvis serve: API http://127\.0\.0\.1:\d+", banner), banner
    assert "in-memory server" not in banner


def test_a_database_it_may_not_write_is_one_clear_line(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    """PostgreSQL 15 lets no other role create tables in a database's public schema."""
    import uuid

    import psycopg

    role = f"reader_{uuid.uuid4().hex[:8]}"  # roles belong to the whole (shared) server
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 's3cret-pw'")
    parts = pg_url.split("://", 1)[1].split("@", 1)[1]  # host:port/db
    env = os.environ.copy()
    env["JARVIS_CHECKPOINT_URL"] = f"postgresql://{role}:s3cret-pw@{parts}"
    env["JARVIS_REDIS_URL"] = redis_url
    args = ["--config", str(REPO / "langgraph.json"), "--port", str(_closed_port())]
    done, line = _refused(args, env, tmp_path)
    assert line.startswith("error: cannot set up the server's tables in postgresql://")
    assert "permission denied" in line
    assert "s3cret-pw" not in done.stdout + done.stderr


def test_a_sub_agent_and_its_tool_chain_run_inside_a_served_run(
    pg_url: str, redis_url: str, workspace: Path, tmp_path: Path
) -> None:
    """Runs nested in a served run (a sub-agent, the tool chain it calls) checkpoint in the
    session store too: the server's own wrapper of it has no sync methods for them."""
    (workspace / "a.txt").write_text("a\n")
    chains = workspace / ".jarvis" / "chains"
    chains.mkdir(parents=True)
    (chains / "quick.yaml").write_text("steps:\n  - {id: one, tool: list_files}\n")
    task = "SUB-TASK: list the files with the quick chain"
    script = _script(
        tmp_path / "nested.yaml",
        [
            {"when": "SUB-TASK: list", "tool_calls": [{"name": "quick", "args": {}}]},
            {"when": "SUB-TASK: list", "text": "The chain listed a.txt. !!!COMPLETE!!!"},
            {"when": "Delegate", "tool_calls": [{"name": "sub_agent", "args": {"task": task}}]},
            {"when": "Delegate", "text": "Delegated. !!!COMPLETE!!!"},
        ],
    )
    env = server_env(pg_url, redis_url)
    with workers("a", env, tmp_path, heartbeat=HEARTBEAT) as (a,), _client(a) as client:
        thread_id = client.threads.create()["thread_id"]
        out = _wait(client, thread_id, "Delegate the listing", _context(workspace, script))
    assert isinstance(out, dict) and out["status"] == "completed", out
    (delegated,) = [m for m in out["messages"] if m["type"] == "tool"]
    assert delegated["status"] == "success", delegated["content"]
    run = delegated["artifact"]["sub_run"]
    assert (run["kind"], run["status"], run["answer"]) == (
        "sub-agent", "completed", "The chain listed a.txt."
    )  # fmt: skip
    (chain,) = run["children"]
    assert (chain["name"], chain["status"], chain["steps"]) == (
        "quick", "completed", {"one": "succeeded"}
    )  # fmt: skip
