"""``jarvis sessions export`` / ``import``: a laptop's sessions into PostgreSQL and back.

Real stores on both sides: the project's SQLite file and a PostgreSQL server on loopback.
A session is compared by what a user gets back: the messages of its state, its history,
and a run that goes on from where it stopped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import messages_to_dict

from jarvis_graph.checkpointing import open_checkpointer
from jarvis_graph.graphs.agent import build_agent_graph
from tests.support.cli import invoke, write_script

BIG = 4


@pytest.fixture
def ws(workspace: Path) -> Path:
    for i in range(BIG):
        lines = [f"file {i} line {n}: " + "abcdefgh" * 12 for n in range(60)]
        (workspace / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    (workspace / ".jarvis").mkdir()
    config = {"attach_listing": 0, "tool_output_limit": 100_000, "max_input_tokens": 0}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    return workspace


def reads(tmp_path: Path) -> Path:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_code", "args": {"path": f"f{i}.txt"}}]} for i in range(BIG)
    ]
    run = {"tool_calls": [{"name": "execute_script", "args": {"script": "echo ran >> ran.txt"}}]}
    end = {"text": "Read them. !!!COMPLETE!!!"}
    return write_script(tmp_path / "reads.yaml", [*turns, run, end])


def state_of(ws: Path, url: str | None, thread: str) -> tuple[list[Any], list[Any]]:
    """The messages of a session's state, and of every checkpoint of its history."""
    with open_checkpointer(ws, url) as saver:
        graph = build_agent_graph().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": thread}}
        state = graph.get_state(config)
        history = [
            messages_to_dict(s.values.get("messages", [])) for s in graph.get_state_history(config)
        ]
    return messages_to_dict(state.values["messages"]), history


def use(monkeypatch: pytest.MonkeyPatch, url: str | None) -> None:
    if url:
        monkeypatch.setenv("JARVIS_CHECKPOINT_URL", url)
    else:
        monkeypatch.delenv("JARVIS_CHECKPOINT_URL", raising=False)


def test_sessions_move_to_postgresql_and_back_unchanged(
    ws: Path, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = reads(tmp_path)
    run = ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script)]
    done = invoke([*run, "-n", "--yes", "--new-thread", "done", "read the files"])
    assert done.exit_code == 0, done.output
    # stopped at the confirmation of its script: it must go on after the move
    waiting = invoke([*run, "--new-thread", "waiting", "read the files"], input="")
    assert waiting.exit_code == 130, waiting.output
    before = {t: state_of(ws, None, t) for t in ("done", "waiting")}

    out = tmp_path / "sessions.jsonl"
    exported = invoke(["sessions", "export", str(out), "-w", str(ws)])
    assert exported.exit_code == 0, exported.output
    assert re.search(r"exported 2 sessions \(\d+ checkpoints\)", exported.output)
    assert json.loads(out.read_text().splitlines()[0])["format"] == "jarvis-graph-sessions"

    use(monkeypatch, pg_url)
    imported = invoke(["sessions", "import", str(out), "-w", str(ws)])
    assert imported.exit_code == 0, imported.output
    assert "imported 2 sessions" in imported.output
    assert {t: state_of(ws, pg_url, t) for t in before} == before
    listing = invoke(["sessions", "list", "-w", str(ws)]).output
    assert "done" in listing and "waiting" in listing
    resumed = invoke(["sessions", "resume", "waiting", "-w", str(ws), "--yes"])
    assert resumed.exit_code == 0, resumed.output
    assert "Read them." in resumed.output
    assert (ws / "ran.txt").read_text() == "ran\nran\n"  # "done" ran it, then "waiting"

    back = tmp_path / "back.jsonl"
    assert invoke(["sessions", "export", str(back), "-w", str(ws)]).exit_code == 0
    (ws / ".jarvis" / "sessions.sqlite").unlink()
    for leftover in (ws / ".jarvis").glob("sessions.sqlite-*"):
        leftover.unlink()
    use(monkeypatch, None)
    assert invoke(["sessions", "import", str(back), "-w", str(ws)]).exit_code == 0
    assert state_of(ws, None, "done") == before["done"]
    finished = state_of(ws, None, "waiting")[0]
    assert "Read them." in json.dumps(finished)  # the run that went on in PostgreSQL


def test_an_import_skips_sessions_the_store_has_unless_told_to_replace(
    ws: Path, tmp_path: Path
) -> None:
    script = reads(tmp_path)
    run = ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script), "-n", "--yes"]
    assert invoke([*run, "--new-thread", "s1", "read"]).exit_code == 0
    out = tmp_path / "s.jsonl"
    assert invoke(["sessions", "export", str(out), "-w", str(ws)]).exit_code == 0
    again = invoke(["sessions", "export", str(out), "-w", str(ws)])
    assert again.exit_code == 1 and "exists; pass --force" in again.output

    skipped = invoke(["sessions", "import", str(out), "-w", str(ws)])
    assert skipped.exit_code == 0, skipped.output
    assert "imported 0 sessions" in skipped.output
    assert "skipped 1 sessions this store already has: s1" in skipped.output
    replaced = invoke(["sessions", "import", str(out), "-w", str(ws), "--replace"])
    assert replaced.exit_code == 0 and "replaced s1" in replaced.output
    assert state_of(ws, None, "s1")[0][-1]["data"]["content"].startswith("Read them.")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("not json\n", "is not a sessions export"),
        ('{"format": "jarvis-graph-sessions", "version": 9}\n', "version 9"),
        (
            '{"format": "jarvis-graph-sessions", "version": 1}\n{"thread_id": "x"\n',
            "line 2: not a checkpoint record; nothing was imported",
        ),
        (
            '{"format": "jarvis-graph-sessions", "version": 1}\n'
            '{"thread_id": "x", "checkpoint": ["msgpack", "!!"], "metadata": ["json", "e30="]}\n',
            "cannot be read",
        ),
        (
            '{"format": "jarvis-graph-sessions", "version": 1}\n'
            '{"thread_id": "x", "checkpoint": ["msgpack"]}\n',
            "cannot be read (a stored value is not a [kind, base64] pair)",
        ),
    ],
)
def test_a_bad_export_file_is_a_clear_error_and_imports_nothing(
    ws: Path, tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "in.jsonl"
    if content is not None:
        path.write_text(content)
    result = invoke(["sessions", "import", str(path), "-w", str(ws)])
    assert result.exit_code == 1, result.output
    assert "error:" in result.output and message in result.output
    assert "no sessions yet" in invoke(["sessions", "list", "-w", str(ws)]).output


def test_exporting_a_session_that_does_not_exist_writes_nothing(ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "none.jsonl"
    result = invoke(["sessions", "export", str(out), "-t", "nope", "-w", str(ws)])
    assert result.exit_code == 1 and "no session 'nope'" in result.output
    assert not out.exists() and not list(tmp_path.glob(".none.jsonl.*"))
