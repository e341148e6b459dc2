"""Code tools: edit_file, rewrite_file, search_code (real files in a tmp workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from jarvis_graph.config import Settings
from jarvis_graph.context import JarvisContext
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools.base import ToolEnv, ToolFailure, ToolInputError
from jarvis_graph.tools.code_tools import (
    FileEdits,
    edit_file,
    edit_file_impl,
    rewrite_file,
    rewrite_file_impl,
    search_code,
)
from jarvis_graph.tools.registry import is_risky


@pytest.fixture
def env(workspace: Path) -> ToolEnv:
    return ToolEnv(workspace.resolve(), Settings())


def test_edit_file_edits_and_reports(env: ToolEnv) -> None:
    (env.workspace / "a.py").write_text("def f():\n    return 1\n")
    out = edit_file_impl(
        env, [{"path": "a.py", "diffs": [{"SEARCH": "return 1", "REPLACE": "return 2"}]}]
    )
    assert out.startswith("Edited a.py: 1 edit applied.")
    assert (env.workspace / "a.py").read_text() == "def f():\n    return 2\n"


def test_edit_file_failure_is_a_tool_failure_and_changes_nothing(env: ToolEnv) -> None:
    (env.workspace / "a.py").write_text("x = 1\n")
    (env.workspace / "b.py").write_text("y = 1\n")
    with pytest.raises(ToolFailure) as err:
        edit_file_impl(
            env,
            [
                {"path": "a.py", "diffs": [{"search": "x = 1", "replace": "x = 2"}]},
                {"path": "b.py", "diffs": [{"search": "y = 9", "replace": "y = 2"}]},
            ],
        )
    assert "No file was changed" in str(err.value)
    assert "Did you mean these lines (line 1)?" in str(err.value)
    assert (env.workspace / "a.py").read_text() == "x = 1\n"


def test_edit_file_refuses_bad_input(env: ToolEnv) -> None:
    with pytest.raises(ToolInputError, match="files is empty"):
        edit_file_impl(env, [])
    with pytest.raises(ToolInputError, match="unknown key 'old'"):
        edit_file_impl(env, [{"path": "a.py", "diffs": [{"old": "x"}]}])


def test_edit_file_stays_in_the_workspace_and_out_of_git(env: ToolEnv, tmp_path: Path) -> None:
    (env.workspace / ".git").mkdir()
    (env.workspace / ".git" / "config").write_text("[core]\n")
    for path in ("../evil.py", str(tmp_path / "evil.py"), ".git/config"):
        with pytest.raises(ToolFailure) as err:
            edit_file_impl(env, [{"path": path, "diffs": [{"search": "", "replace": "x"}]}])
        assert "outside the workspace" in str(err.value) or ".git folder" in str(err.value)
    assert not (tmp_path / "evil.py").exists()
    assert (env.workspace / ".git" / "config").read_text() == "[core]\n"


def test_outside_the_workspace_when_allowed(workspace: Path, tmp_path: Path) -> None:
    env = ToolEnv(workspace.resolve(), Settings(allow_outside_workspace=True))
    out = rewrite_file_impl(env, str(tmp_path / "out.txt"), "ok\n")
    assert out.startswith("Created") and (tmp_path / "out.txt").read_text() == "ok\n"


def test_rewrite_file_creates_and_rewrites(env: ToolEnv) -> None:
    assert rewrite_file_impl(env, "pkg/new.txt", "a\nb\n") == "Created pkg/new.txt (2 lines)."
    assert rewrite_file_impl(env, "pkg/new.txt", "c") == "Rewrote pkg/new.txt (1 lines)."
    assert (env.workspace / "pkg" / "new.txt").read_text() == "c"


def test_rewrite_file_failure(env: ToolEnv) -> None:
    (env.workspace / "d").mkdir()
    with pytest.raises(ToolFailure, match="d was not changed: d is not a regular file"):
        rewrite_file_impl(env, "d", "x")


def test_lint_hint_names_installed_linters(env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/bin/x" if name == "bash" else None)
    out = rewrite_file_impl(env, "run.sh", "echo hi\n")
    assert "Installed linters for these files: bash -n run.sh" in out


def test_tools_through_langchain(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)  # outside a graph run the workspace is the current folder
    (workspace / "m.py").write_text("A = 1\nB = 2\n")
    files = [{"path": "m.py", "diffs": [{"search": "A = 1", "replace": "A = 3"}]}]
    assert edit_file.invoke({"files": files}).startswith("Edited m.py")
    assert "1 matching line in 1 file" in search_code.invoke(
        {"pattern": "b = ", "ignore_case": True}
    )
    assert rewrite_file.invoke({"path": "m.py", "content": "C = 1\n"}).startswith("Rewrote")


def test_schemas_and_risk() -> None:
    schema = convert_to_openai_tool(edit_file)["function"]["parameters"]
    diff = schema["properties"]["files"]["items"]["properties"]["diffs"]["items"]["properties"]
    assert set(diff) >= {"search", "replace", "search_start", "search_end", "range"}
    raw = {"path": "a", "diffs": [{"SEARCH": "x", "Reason": "why"}]}
    assert FileEdits.model_validate(raw).diffs[0].search == "x"
    assert is_risky(edit_file) and is_risky(rewrite_file) and not is_risky(search_code)


def test_the_code_tool_set(workspace: Path) -> None:
    plain = RunServices(JarvisContext(workspace=str(workspace)))
    code = RunServices(JarvisContext(workspace=str(workspace), toolset="code"))
    assert not {"rewrite_file", "search_code"} & set(plain.tools)
    assert {"write_file", "edit_file"} <= set(plain.tools)  # jarvis run writes files too
    names = set(code.tools)
    assert "write_file" not in names  # the code tool set has its own: rewrite_file
    assert {"read_code", "execute_script", "edit_file", "rewrite_file", "search_code"} <= names
    assert "Edit with edit_file" in code.system_prompt()
    assert "git repository" in code.system_prompt()
    assert "git repository" not in plain.system_prompt()
