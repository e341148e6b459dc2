"""``jarvis sessions prune``: old sessions and checkpoints go, orphan parts are collected.

Both stores, real: the project's SQLite file and a PostgreSQL server on loopback. What is
kept must read back exactly; what goes must be gone from the tables.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import messages_to_dict

from jarvis_graph.checkpointing import open_checkpointer
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.session_prune import parse_duration, prune
from tests.support.cli import invoke, write_script


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    if request.param == "sqlite":
        return None
    found = str(request.getfixturevalue("pg_url"))
    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", found)
    return found


@pytest.fixture
def ws(workspace: Path) -> Path:
    for i in range(6):
        lines = [f"file {i} line {n}: " + "abcdefgh" * 12 for n in range(60)]
        (workspace / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    (workspace / ".jarvis").mkdir()
    config = {"attach_listing": 0, "tool_output_limit": 100_000, "max_input_tokens": 0}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    return workspace


def reading(ws: Path, tmp_path: Path, thread: str, files: list[int], *extra: str) -> Any:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_code", "args": {"path": f"f{i}.txt"}}]} for i in files
    ]
    script = write_script(tmp_path / f"{thread}.yaml", [*turns, {"text": "Read. !!!COMPLETE!!!"}])
    return invoke(
        ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script), "-n"]
        + ["--new-thread", thread, *extra, "read them"]
    )


def session(ws: Path, url: str | None, thread: str) -> tuple[Any, int]:
    """The messages of a session's state (fresh connection) and its checkpoint count."""
    with open_checkpointer(ws, url) as saver:
        graph = build_agent_graph().compile(checkpointer=saver)
        config = {"configurable": {"thread_id": thread}}
        state = graph.get_state(config)
        count = len(list(graph.get_state_history(config)))
    return messages_to_dict(state.values.get("messages", [])), count


def texts_stored(ws: Path, url: str | None) -> int:
    with open_checkpointer(ws, url) as saver:
        parts: Any = saver.serde.parts  # type: ignore[attr-defined]
        return sum(1 for _ in parts.ages("texts"))


def test_old_sessions_go_with_the_parts_only_they_used(
    ws: Path, tmp_path: Path, url: str | None
) -> None:
    assert reading(ws, tmp_path, "old", [0, 1, 2]).exit_code == 0
    middle = time.time()
    time.sleep(0.05)
    assert reading(ws, tmp_path, "new", [2, 3]).exit_code == 0
    kept = session(ws, url, "new")
    assert texts_stored(ws, url) == 4  # f0..f3: f2 once, shared

    later = time.time() + 1000
    with open_checkpointer(ws, url) as saver:
        report = prune(saver, older_than=later - middle, now=later, grace=0)

    assert report.sessions == ["old"] and report.busy == []
    assert report.parts["texts"] == 2  # f0 and f1; f2 is still used by "new"
    assert texts_stored(ws, url) == 2
    assert session(ws, url, "old") == ([], 0)
    assert session(ws, url, "new") == kept  # everything it needs is there
    listing = invoke(["sessions", "list", "-w", str(ws)]).output
    assert "new" in listing and "old" not in listing


def test_keep_last_trims_finished_sessions_and_they_go_on(
    ws: Path, tmp_path: Path, url: str | None
) -> None:
    assert reading(ws, tmp_path, "done", [0, 1, 2, 3, 4]).exit_code == 0
    risky = write_script(
        tmp_path / "risky.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": "echo hi"}}]},
            {"text": "ok !!!COMPLETE!!!"},
        ],
    )
    waiting = invoke(
        ["run", "-w", str(ws), "--platform", "scripted", "--script", str(risky)]
        + ["--new-thread", "waiting", "say hi"],
        input="",
    )
    assert waiting.exit_code == 130, waiting.output
    before, count = session(ws, url, "done")
    waiting_before = session(ws, url, "waiting")
    assert count > 3

    dry = invoke(["sessions", "prune", "--keep-last", "2", "--dry-run", "-w", str(ws)])
    assert dry.exit_code == 0, dry.output
    assert f"would remove 0 sessions, {count - 2} checkpoints" in dry.output
    assert session(ws, url, "done") == (before, count)  # a dry run changes nothing

    done = invoke(["sessions", "prune", "--keep-last", "2", "--grace", "0", "-w", str(ws)])
    assert done.exit_code == 0, done.output
    assert f"removed 0 sessions, {count - 2} checkpoints" in done.output
    assert session(ws, url, "done") == (before, 2)
    assert session(ws, url, "waiting") == waiting_before  # not finished: untouched
    if url is None:
        sizes = done.output.split("store: ")[1].split(" MB")
        assert float(sizes[1].split("-> ")[1]) < float(sizes[0])  # VACUUM gave space back
    # the trimmed session takes a new task, and the waiting one still goes on
    again = reading(ws, tmp_path, "again", [5])
    assert again.exit_code == 0
    # the scripted model numbers turns by the session's model calls: any turn answers
    more = write_script(tmp_path / "more.yaml", [{"text": "More. !!!COMPLETE!!!"}] * 12)
    cont = invoke(
        ["run", "-w", str(ws), "--platform", "scripted", "--script", str(more), "-n"]
        + ["--thread", "done", "and now?"]
    )
    assert cont.exit_code == 0 and "More." in cont.output, cont.output
    resumed = invoke(["sessions", "resume", "waiting", "-w", str(ws), "--yes"])
    assert resumed.exit_code == 0 and "ok" in resumed.output


def test_a_dry_run_says_what_it_would_free_and_changes_nothing(
    ws: Path, tmp_path: Path, url: str | None
) -> None:
    assert reading(ws, tmp_path, "old", [0, 1, 2]).exit_code == 0
    before = session(ws, url, "old")
    args = ["sessions", "prune", "--older-than", "0", "--grace", "0", "-w", str(ws)]

    dry = invoke([*args, "--dry-run"])

    assert dry.exit_code == 0, dry.output
    # the parts only the doomed session refers to count, though it is still there
    assert "would remove 1 sessions, " in dry.output and "orphan parts (3 texts" in dry.output
    freed = re.search(r"would free about ([\d.]+) (kB|MB)", dry.output)
    assert freed and float(freed.group(1)) > 0, dry.output
    assert " -> " not in dry.output  # no store size "after": nothing was done
    assert session(ws, url, "old") == before and texts_stored(ws, url) == 3
    done = invoke(args)
    assert done.exit_code == 0, done.output
    would = dry.output.split("would remove ", 1)[1].splitlines()[0]
    assert done.output.split("removed ", 1)[1].splitlines()[0] == would  # as said
    assert session(ws, url, "old") == ([], 0) and texts_stored(ws, url) == 0


def test_young_orphans_are_kept_for_the_grace_period(
    ws: Path, tmp_path: Path, url: str | None
) -> None:
    assert reading(ws, tmp_path, "gone", [0, 1]).exit_code == 0
    deleted = invoke(["sessions", "delete", "gone", "--yes", "-w", str(ws)])
    assert deleted.exit_code == 0, deleted.output
    kept = invoke(["sessions", "prune", "-w", str(ws)])
    assert kept.exit_code == 0 and "orphan parts (0 texts" in kept.output
    assert texts_stored(ws, url) == 2
    swept = invoke(["sessions", "prune", "--grace", "0", "-w", str(ws)])
    assert "orphan parts (2 texts" in swept.output
    assert texts_stored(ws, url) == 0


def test_a_session_in_use_by_a_run_is_left_alone(ws: Path, tmp_path: Path, url: str | None) -> None:
    from tests.adversarial.test_integrity import WAIT_RELEASE, Run, _wait_file

    step = f"touch holding; {WAIT_RELEASE}"
    script = write_script(
        tmp_path / "held.yaml",
        [
            {"tool_calls": [{"name": "execute_script", "args": {"script": step}}]},
            {"text": "done !!!COMPLETE!!!"},
        ],
    )
    run = Run(
        ["run", "--platform", "scripted", "--script", str(script), "-n", "--yes"]
        + ["--new-thread", "busy", "hold on"],
        ws,
    )
    try:
        _wait_file(ws / "holding", run)
        later = time.time() + 1000
        with open_checkpointer(ws, url) as saver:
            report = prune(saver, older_than=1, now=later, grace=0)
        assert report.busy == ["busy"] and report.sessions == []
    finally:
        (ws / "release").touch()
        assert run.finish() == 0, run.output
    assert session(ws, url, "busy")[1] > 0


@pytest.mark.parametrize("text", ["30", "30s", "90m", "12h", "30d", "2w", "1.5h"])
def test_durations(text: str) -> None:
    assert parse_duration(text) > 0


def test_a_bad_duration_or_keep_last_is_a_clear_error(ws: Path) -> None:
    bad = invoke(["sessions", "prune", "--older-than", "soon", "-w", str(ws)])
    assert bad.exit_code == 1 and "'soon' is not a duration" in bad.output
    zero = invoke(["sessions", "prune", "--keep-last", "0", "-w", str(ws)])
    assert zero.exit_code == 1 and "--keep-last must be at least 1" in zero.output
