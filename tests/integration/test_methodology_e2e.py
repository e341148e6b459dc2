"""Methodologies end to end: a local bare git repository is the central repository.

One user adds and shares a methodology through the CLI (commit + push after confirming);
another user syncs it; at task start the cheap model picks it by number and it reaches the
model's system prompt over real HTTP; after a completed task the analysis saves a new one.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from jarvis_graph.methodology.git_sync import STAMP, sync
from jarvis_graph.methodology.store import central_dir, home_dir, load_dir
from tests.support.cli import invoke
from tests.support.fake_openai import FAKE_KEY_VAR, FakeOpenAI, thread_config
from tests.support.trust import trust

GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@localhost"]


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def central(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A bare repository, configured as the central methodology repository."""
    bare = tmp_path / "central.git"
    git("init", "--quiet", "--bare", str(bare), cwd=tmp_path)
    monkeypatch.setenv("JARVIS_CENTRAL_METHODOLOGY_REPO", str(bare))
    return str(bare)


def switch_user(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JARVIS_HOME", str(home / ".jarvis"))


def files_in(bare: str, tmp_path: Path) -> dict[str, Any]:
    """The JSON files on the bare repository's default branch, via a fresh clone."""
    check = tmp_path / f"check-{time.monotonic_ns()}"
    git("clone", "--quiet", bare, str(check), cwd=tmp_path)
    return {p.name: json.loads(p.read_text()) for p in check.glob("*.json")}


def test_share_pushes_after_confirmation_and_sync_brings_it_to_another_user(
    central: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = "1. Run pytest -x.\n2. Read the first failure.\n3. Fix the cause, not the test."
    added = invoke(["methodology", "add", "Fix a failing test", "--content", steps])
    assert added.exit_code == 0, added.output

    declined = invoke(["methodology", "share"], input="n\n")
    assert declined.exit_code == 1 and "nothing shared" in declined.output
    assert files_in(central, tmp_path) == {}

    shared = invoke(["methodology", "share"], input="y\n")
    assert shared.exit_code == 0, shared.output
    assert "methodologies: Fix a failing test" in shared.output
    [record] = files_in(central, tmp_path).values()
    assert record == {"problem_type": "Fix a failing test", "content": steps}

    switch_user(tmp_path / "other", monkeypatch)
    synced = invoke(["methodology", "sync"])
    assert synced.exit_code == 0 and synced.output.startswith("cloned"), synced.output
    listed = invoke(["methodology", "list"])
    assert "Fix a failing test\t" in listed.output and "central_methodology_repo" in listed.output
    assert load_dir(home_dir()) == []  # it lives in the clone, not in the user's own folder


def test_the_clone_is_pulled_at_most_daily(central: str, tmp_path: Path) -> None:
    assert sync(central) == "cloned"
    writer = tmp_path / "writer"
    git("clone", "--quiet", central, str(writer), cwd=tmp_path)
    (writer / "deploy.json").write_text(json.dumps({"problem_type": "Deploy", "content": "x"}))
    git("add", ".", cwd=writer)
    git(*GIT_ID, "commit", "--quiet", "-m", "deploy", cwd=writer)
    git("push", "--quiet", "origin", "HEAD", cwd=writer)

    assert sync(central) == "up to date"  # pulled less than a day ago
    assert not (central_dir() / "deploy.json").exists()
    day_ago = time.time() - 25 * 3600
    os.utime(central_dir() / ".git" / STAMP, (day_ago, day_ago))
    assert sync(central) == "pulled"
    assert [m.problem_type for m in load_dir(central_dir())] == ["Deploy"]


def configure(ws: Path, normal: FakeOpenAI, cheap: FakeOpenAI, **settings: Any) -> None:
    def spec(server: FakeOpenAI) -> dict[str, Any]:
        url = server.base_url
        return {"platform": "openai", "model": "m", "base_url": url, "api_key_env": FAKE_KEY_VAR}

    config = {
        "confirm": "never",
        "attach_listing": 0,
        "model_groups": {"default": {"normal": spec(normal), "cheap": spec(cheap)}},
        **settings,
    }
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(ws)


def test_task_start_picks_from_the_central_repo_and_analysis_saves_a_new_one(
    central: str, agent: Any, server: FakeOpenAI, ws: Path, tmp_path: Path
) -> None:
    writer = tmp_path / "writer"
    git("clone", "--quiet", central, str(writer), cwd=tmp_path)
    for name, text in (("Deploy", "tag and push"), ("Count CSV rows", "use wc -l minus 1")):
        (writer / f"{len(text)}.json").write_text(
            json.dumps({"problem_type": name, "content": text})
        )
    git("add", ".", cwd=writer)
    git(*GIT_ID, "commit", "--quiet", "-m", "two", cwd=writer)
    git("push", "--quiet", "origin", "HEAD", cwd=writer)
    new = {"problem_type": "Answer row counts", "content": "1. count lines\n2. drop the header"}
    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap, use_analysis=True)
        cheap.reply(text="2")  # the pick at task start (listing order: as the files load)
        cheap.reply(text=f"A reusable one: {json.dumps(new)}")  # the analysis
        server.reply(text="The file has 3 rows. !!!COMPLETE!!!")

        out = agent.invoke(
            {"task": "How many rows does data.csv have?"},
            thread_config("m"),
            context={"workspace": str(ws), "non_interactive": True},
        )
        pick_prompt = cheap.requests[0]["messages"][-1]["content"]
        analysis_prompt = cheap.requests[1]["messages"][-1]["content"]

    assert out["status"] == "completed"
    listing = [line for line in pick_prompt.splitlines() if line[:2] in ("1.", "2.")]
    assert len(listing) == 2
    picked = listing[1].split(". ", 1)[1]
    system = server.requests[0]["messages"][0]["content"]
    assert "## Methodologies" in system and f"### {picked}" in system
    other = "Deploy" if picked != "Deploy" else "Count CSV rows"
    assert f"### {other}" not in system
    assert "How many rows does data.csv have?" in analysis_prompt
    assert "The file has 3 rows." in analysis_prompt
    assert [(m.problem_type, m.content) for m in load_dir(home_dir())] == [
        (new["problem_type"], new["content"])
    ]


def test_interactive_runs_ask_for_feedback_before_the_analysis(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    from langgraph.types import Command

    with FakeOpenAI(api_key=server.api_key) as cheap:
        configure(ws, server, cheap, use_analysis=True)
        cheap.reply(text="NONE")
        server.reply(text="Done. !!!COMPLETE!!!")
        context = {"workspace": str(ws)}
        agent.invoke({"task": "say done"}, thread_config("i"), context=context)
        state = agent.get_state(thread_config("i"))
        [pending] = state.interrupts
        assert pending.value["type"] == "feedback"
        assert not cheap.requests  # nothing analyzed before the user answered

        agent.invoke(Command(resume="no: too slow"), thread_config("i"), context=context)
        [request] = cheap.requests

    assert "The user's feedback on the result: no: too slow" in request["messages"][-1]["content"]
    assert agent.get_state(thread_config("i")).next == ()
    assert load_dir(home_dir()) == []  # NONE: nothing saved
