"""The table of edit cases in ``edit_corpus.yaml``, run against real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jarvis_graph.editing import EditError, FilePatch, apply_patch, edits_from_dicts
from jarvis_graph.tools.base import ToolEnv

CORPUS = yaml.safe_load((Path(__file__).parent / "edit_corpus.yaml").read_text(encoding="utf-8"))


def as_bytes(spec: Any) -> bytes:
    if isinstance(spec, dict):
        return str(spec["text"]).encode(spec.get("encoding", "utf-8"))
    return str(spec).encode("utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_corpus_is_big_and_covers_every_kind() -> None:
    assert len(CORPUS) >= 40
    ids = " ".join(case["id"] for case in CORPUS)
    for topic in (
        "reindent",
        "ambiguous",
        "crlf",
        "unicode",
        "empty",
        "new-file",
        "range",
        "two-files",
    ):
        assert topic in ids, topic


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_edit_case(case: dict[str, Any], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, spec in case["files"].items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(as_bytes(spec))
    before = snapshot(ws)
    message, ok, kinds = "", False, set()
    try:
        patches = [FilePatch(f["path"], edits_from_dicts(f["diffs"])) for f in case["patch"]]
    except EditError as exc:
        message, kinds = str(exc), {exc.kind}
    else:
        outcome = apply_patch(patches, ToolEnv(ws).resolve)
        message, ok = outcome.report(), outcome.ok
        kinds = {f.kind for f in outcome.files if not f.ok}
    if "error" in case:
        assert not ok, message
        assert snapshot(ws) == before, "a failed call changed files"
        assert not (tmp_path / "outside.py").exists()
        for text in case["error"].get("contains", []):
            assert text in message, f"{text!r} not in:\n{message}"
        if "kind" in case["error"]:
            assert case["error"]["kind"] in kinds, (kinds, message)
    else:
        assert ok, message
    for name, spec in (case.get("expect") or {}).items():
        if spec is None:
            assert not (ws / name).exists()
        else:
            assert (ws / name).read_bytes() == as_bytes(spec), name
    assert not [p for p in ws.rglob("*.tmp")], "a temporary file was left behind"
