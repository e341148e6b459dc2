"""The shared memory store on PostgreSQL: refused with the reason when it cannot serve.

Real servers: Debian's PostgreSQL (it has no pgvector) and the pgvector server of the
test session. The CLI runs as a real process, as a user runs it.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.cli import run_process, write_script
from tests.support.fake_openai import EMBED_DIMS, FakeOpenAI


def test_a_server_without_pgvector_is_refused_with_the_reason(
    workspace: Path, tmp_path: Path, postgres_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_STORE_URL", postgres_server.new_database())
    for args in (["memory", "list"], ["memory", "save", "a fact", "--type", "project_long_term"]):
        done = run_process(args, cwd=workspace)
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        assert "has no pgvector extension" in out and "unset JARVIS_STORE_URL" in out
        assert "postgresql://127.0.0.1:" in out and "Traceback" not in out
    script = write_script(tmp_path / "s.yaml", [{"text": "hi !!!COMPLETE!!!"}])
    args = ["run", "--platform", "scripted", "--script", str(script), "-n", "hi"]
    run = run_process(args, cwd=workspace)
    assert run.returncode == 1 and "has no pgvector extension" in run.stdout
    assert "hi" not in run.stdout.split("error:")[0]  # stopped before the run started
    assert not (workspace / ".jarvis" / "memory").exists()  # no fallback to local memory


def test_an_unreachable_server_is_one_line_without_the_password(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("JARVIS_STORE_URL", f"postgresql://mem7:pw-9x1@127.0.0.1:{port}/m")
    done = run_process(["memory", "list"], cwd=workspace)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"cannot open the memory store postgresql://127.0.0.1:{port}/m" in out
    assert "pw-9x1" not in out and "mem7" not in out and "Traceback" not in out


def test_memory_saved_by_one_project_is_found_from_another_machine_s_path(
    workspace: Path, tmp_path: Path, pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Global memory is one namespace in the shared store: a second checkout sees it."""
    monkeypatch.setenv("JARVIS_STORE_URL", pgvector_url)
    saved = run_process(
        ["memory", "save", "Deploys need the VPN", "--type", "global_long_term"], cwd=workspace
    )
    assert saved.returncode == 0, saved.stdout + saved.stderr
    other = tmp_path / "other-checkout"
    other.mkdir()
    elsewhere = tmp_path / "another-home"  # another user's machine: its own home and data
    monkeypatch.setenv("HOME", str(elsewhere))
    monkeypatch.setenv("JARVIS_HOME", str(elsewhere / ".jarvis"))
    found = run_process(["memory", "search", "what do deploys need?"], cwd=other)
    assert found.returncode == 0 and "Deploys need the VPN" in found.stdout


def test_a_laptop_s_memories_move_into_the_shared_store(
    workspace: Path, tmp_path: Path, pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = [
        ("Builds run on the staging box", "project_long_term"),
        ("I write in British English", "global_long_term"),
    ]
    for content, kind in facts:
        saved = run_process(["memory", "save", content, "--type", kind], cwd=workspace)
        assert saved.returncode == 0, saved.stdout + saved.stderr
    out = tmp_path / "memories.json"
    assert run_process(["memory", "export", str(out)], cwd=workspace).returncode == 0
    monkeypatch.setenv("JARVIS_STORE_URL", pgvector_url)
    before = run_process(["memory", "list"], cwd=workspace)
    assert before.returncode == 0 and "Builds run" not in before.stdout  # it starts empty
    imported = run_process(["memory", "import", str(out), "--yes"], cwd=workspace)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    found = run_process(["memory", "search", "where do builds run?"], cwd=workspace)
    assert found.returncode == 0 and "Builds run on the staging box" in found.stdout
    listed = run_process(["memory", "list"], cwd=workspace).stdout
    assert "I write in British English" in listed


def test_vectors_from_an_openai_compatible_endpoint(
    workspace: Path, pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_STORE_URL", pgvector_url)
    with FakeOpenAI(api_key="emb-key-123") as fake:
        monkeypatch.setenv("JARVIS_STORE_EMBED_MODEL", "text-embedding-fake")
        monkeypatch.setenv("JARVIS_STORE_EMBED_URL", fake.base_url)
        monkeypatch.setenv("JARVIS_STORE_EMBED_KEY", "emb-key-123")
        facts = ["Releases go out with make deploy", "The favourite editor is vim"]
        for fact in facts:
            saved = run_process(["memory", "save", fact, "--type", "project_long_term"], workspace)
            assert saved.returncode == 0, saved.stdout + saved.stderr
        found = run_process(["memory", "search", "how do releases go out", "-n", "1"], workspace)
        assert found.returncode == 0, found.stdout + found.stderr
        assert "make deploy" in found.stdout and "vim" not in found.stdout
        inputs = [str(b["input"]) for b in fake.embedded]
        assert any("make deploy" in i for i in inputs) and any(
            "releases go out" in i for i in inputs
        )
        assert {b["model"] for b in fake.embedded} == {"text-embedding-fake"}
    with psycopg.connect(pgvector_url) as conn:
        dims = conn.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'store_vectors'::regclass "
            "AND attname = 'embedding'"
        ).fetchone()
    assert dims == (EMBED_DIMS,)
    monkeypatch.delenv("JARVIS_STORE_EMBED_MODEL")  # back to MiniLM: 384 is not 64
    done = run_process(["memory", "list"], workspace)
    assert done.returncode == 1
    assert "holds 64-dimension vectors and this embedder gives 384" in done.stdout + done.stderr


def test_an_embeddings_endpoint_that_refuses_is_one_line(
    workspace: Path, pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_STORE_URL", pgvector_url)
    with FakeOpenAI(api_key="right") as fake:
        monkeypatch.setenv("JARVIS_STORE_EMBED_MODEL", "m")
        monkeypatch.setenv("JARVIS_STORE_EMBED_URL", fake.base_url)
        monkeypatch.setenv("JARVIS_STORE_EMBED_KEY", "wrong-key-999")
        done = run_process(["memory", "list"], workspace)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"the embeddings endpoint {fake.base_url} (model m) cannot be used" in out
    assert "wrong-key-999" not in out and "Traceback" not in out
