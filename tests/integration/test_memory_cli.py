"""``jarvis memory``: save, list, search, export/import, Jarvis files, organize, clear.

Every test runs on the three long-term stores: the local FAISS stores, PostgreSQL with
pgvector (``JARVIS_STORE_URL``, a server started for the test session), and a Mem0 server
(``JARVIS_STORE_URL=mem0+http://...``, a Mem0-shaped REST server on loopback).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import invoke, write_script
from tests.support.mem0_server import Mem0Server

FACTS = [
    ("Releases are deployed with ./deploy.sh --prod", ["deploy", "ops"], "project_long_term"),
    ("Run the deploy only after the tests pass", ["deploy", "ops"], "project_long_term"),
    ("My favourite editor is vim", ["editor"], "global_long_term"),
]


@pytest.fixture(autouse=True, params=["local", "postgres", "mem0"])
def memory_store(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> Iterator[str]:
    if request.param == "postgres":
        monkeypatch.setenv("JARVIS_STORE_URL", str(request.getfixturevalue("pgvector_url")))
    if request.param == "mem0":  # a Mem0-shaped REST server on loopback, with a key
        server = Mem0Server(key="m0-test-key")
        server.__enter__()
        request.addfinalizer(lambda: server.__exit__(None, None, None))
        monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+{server.url}")
        monkeypatch.setenv("JARVIS_STORE_KEY", "m0-test-key")
    yield str(request.param)
    if request.param != "local":  # nothing was written to the local stores
        assert not (workspace / ".jarvis" / "memory").exists()


def jarvis(workspace: Path, *args: str, input: str | None = None) -> Any:
    return invoke(["memory", *args, "--workspace", str(workspace)], input=input)


def save_facts(workspace: Path) -> None:
    for content, tags, kind in FACTS:
        tag_args = [a for t in tags for a in ("--tag", t)]
        out = jarvis(workspace, "save", content, "--type", kind, *tag_args)
        assert out.exit_code == 0, out.output
        assert out.output.startswith("saved ")


def ids_in(output: str) -> list[str]:
    return [line.split()[0] for line in output.splitlines() if "[" in line and "tags:" in line]


def test_save_list_and_search(workspace: Path, memory_store: str) -> None:
    save_facts(workspace)
    if memory_store == "postgres":  # the records and their vectors are in the database
        import os

        import psycopg

        with psycopg.connect(os.environ["JARVIS_STORE_URL"]) as conn:
            rows = conn.execute(
                "SELECT s.prefix, v.embedding IS NOT NULL FROM store AS s "
                "JOIN store_vectors AS v ON v.prefix = s.prefix AND v.key = s.key"
            ).fetchall()
        assert len(rows) == 3 and all(has for _p, has in rows), rows
        assert sum(p.startswith("jarvis.global.") for p, _ in rows) == 1

    listed = jarvis(workspace, "list")
    assert listed.exit_code == 0 and len(ids_in(listed.output)) == 3
    only_global = jarvis(workspace, "list", "--type", "global_long_term")
    assert "vim" in only_global.output and "deploy" not in only_global.output
    by_tag = jarvis(workspace, "list", "--tag", "ops")
    assert len(ids_in(by_tag.output)) == 2

    found = jarvis(workspace, "search", "preferred text editor", "-n", "1")
    assert found.exit_code == 0
    assert "My favourite editor is vim" in found.output and "score" in found.output


def test_export_clear_import_round_trip(workspace: Path, tmp_path: Path) -> None:
    save_facts(workspace)
    before = json.loads(json.dumps(sorted(ids_in(jarvis(workspace, "list").output))))
    dump = tmp_path / "memories.json"
    assert jarvis(workspace, "export", str(dump)).output.startswith("exported 3 memories")
    data = json.loads(dump.read_text())
    assert data["format"] == "jarvis-graph-memory" and len(data["memories"]) == 3

    cleared = jarvis(workspace, "clear", "--all", "--yes")
    assert cleared.output.strip() == "deleted 3 memories"
    assert jarvis(workspace, "list").output.strip() == "no memories"

    again = jarvis(workspace, "import", str(dump), "--yes")  # it holds a global memory
    assert again.output.strip() == "imported 3 new, replaced 0, skipped 0 existing"
    assert sorted(ids_in(jarvis(workspace, "list").output)) == before
    # the records come back whole, vectors included: search still works
    assert "vim" in jarvis(workspace, "search", "text editor", "-n", "1").output
    twice = jarvis(workspace, "import", str(dump), "--yes")
    assert twice.output.strip() == "imported 0 new, replaced 0, skipped 3 existing"


def test_import_filters_and_overwrite_policies(workspace: Path, tmp_path: Path) -> None:
    save_facts(workspace)
    dump = tmp_path / "memories.json"
    jarvis(workspace, "export", str(dump), "--tag", "editor")
    data = json.loads(dump.read_text())
    (vim,) = data["memories"]
    vim["content"] = "My favourite editor is helix now"
    vim["updated_at"] = "2000-01-01T00:00:00+00:00"  # older than what is stored
    dump.write_text(json.dumps(data))

    newer = jarvis(workspace, "import", str(dump), "--overwrite", "newer", "--yes")
    assert newer.output.strip() == "imported 0 new, replaced 0, skipped 1 existing"
    replaced = jarvis(workspace, "import", str(dump), "--overwrite", "replace", "--yes")
    assert replaced.output.strip() == "imported 0 new, replaced 1, skipped 0 existing"
    assert "helix" in jarvis(workspace, "list", "--tag", "editor").output
    filtered = jarvis(workspace, "import", str(dump), "--type", "project_long_term")
    assert filtered.output.strip() == "imported 0 new, replaced 0, skipped 0 existing"


def test_import_of_jarvis_memory_files(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "old" / ".jarvis" / "memory"
    folder.mkdir(parents=True)
    (folder / "20240102_101500_123456.json").write_text(
        json.dumps(
            {
                "id": "20240102_101500_123456",
                "type": "project_long_term",
                "tags": ["build", "cmake"],
                "content": "Build with cmake -B build && cmake --build build",
                "created_at": "2024-01-02T10:15:00",
                "updated_at": "2024-01-02T10:15:00",
            }
        ),
        encoding="utf-8",
    )
    (folder / "20240103_090000_000001.json").write_text(
        json.dumps({"tags": ["style"], "content": "Use four spaces"}), encoding="utf-8"
    )
    out = jarvis(workspace, "import", str(folder), "--jarvis")
    assert out.exit_code == 0, out.output
    assert out.output.strip() == "imported 2 new, replaced 0, skipped 0 existing"
    listed = jarvis(workspace, "list").output
    assert "20240102_101500_123456" in listed and "20240103_090000_000001" in listed
    assert "updated 2024-01-02T10:15:00" in listed


def test_organize_dry_run_then_merge(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_facts(workspace)
    dry = jarvis(workspace, "organize", "--dry-run")
    assert dry.exit_code == 0
    assert "group 1 [project_long_term]" in dry.output and "dry run: 1 groups" in dry.output
    assert len(ids_in(jarvis(workspace, "list").output)) == 3

    answer = (
        "<merged_memory>\ncontent: Deploy with ./deploy.sh --prod, after the tests pass.\n"
        "tags: [deploy, ops]\n</merged_memory>"
    )
    script = write_script(tmp_path / "cheap.yaml", [{"text": answer}])
    monkeypatch.setenv("JARVIS_PLATFORM", "scripted")
    monkeypatch.setenv("JARVIS_SCRIPT", str(script))
    merged = jarvis(workspace, "organize")
    assert merged.exit_code == 0, merged.output
    assert "merged 2 into" in merged.output
    project = jarvis(workspace, "list", "--type", "project_long_term").output
    assert ids_in(project) and len(ids_in(project)) == 1
    assert "Deploy with ./deploy.sh --prod, after the tests pass." in project
    assert "vim" in jarvis(workspace, "list").output  # the other tier is untouched


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "--type", "forever"], "unknown long-term memory type 'forever'"),
        (["list", "--type", "short_term"], "unknown long-term memory type 'short_term'"),
        (["save", "  "], "memory content is empty"),
        (["clear"], "say what to delete"),
        (["import", "missing.json"], "does not exist"),
        (["import", "bad.json"], "is not valid JSON"),
        (["import", "notes.json"], "is not a memory export"),
        (
            ["import", "x.json", "--overwrite", "always"],
            "--overwrite must be skip, replace or newer",
        ),
        (
            ["import", ".", "--jarvis", "--jarvis-type", "short_term"],
            "unknown long-term memory type",
        ),
        (["export", "no/such/dir/out.json"], "does not exist"),
    ],
)
def test_bad_input_gets_a_clear_message(workspace: Path, args: list[str], message: str) -> None:
    (workspace / "bad.json").write_text("{not json")
    (workspace / "notes.json").write_text('{"hello": 1}')
    args = [a if not a.endswith(".json") or "/" in a else str(workspace / a) for a in args]
    if args[0] == "export":
        args[1] = str(workspace / args[1])
    out = jarvis(workspace, *args)
    assert out.exit_code == 2
    assert message in out.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "garbage"], "'garbage' is not an episode anchor; anchors look like"),
        (["show", "t1:cp:3"], "no sessions are stored at"),
        (["search", "deploy", "--kind", "answer"], "unknown episode kind 'answer'; use one of"),
    ],
)
def test_bad_episode_input_gets_a_clear_message(
    workspace: Path, args: list[str], message: str
) -> None:
    out = jarvis(workspace, "episodes", *args)
    assert out.exit_code == 2
    assert message in out.output


def test_episodes_of_an_unknown_session_and_an_empty_archive(workspace: Path) -> None:
    from jarvis_graph.checkpointing import default_sessions_path, open_checkpointer

    with open_checkpointer(workspace):  # an empty session store
        assert default_sessions_path(workspace).is_file()
    out = jarvis(workspace, "episodes", "show", "nobody:latest:0")
    assert out.exit_code == 2 and "session 'nobody' has no checkpoint 'latest'" in out.output
    assert jarvis(workspace, "episodes", "search", "anything").output.strip() == "no episodes"
    assert not (workspace / ".jarvis" / "memory").exists()  # nothing created to find nothing


def test_memory_help_names_the_archive_and_force_save() -> None:
    out = invoke(["memory", "--help"])
    text = " ".join(out.output.split())
    assert "episodes" in text and "force_save_memory" in text
