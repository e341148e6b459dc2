"""Built-in tools: read_code, list_files, search_files, execute_script, ask_user."""

from __future__ import annotations

import re
import shutil
import stat
import threading
import time
from pathlib import Path

import pytest

from jarvis_graph.config import Settings
from jarvis_graph.context import JarvisContext
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools import builtin
from jarvis_graph.tools.base import ToolEnv, ToolInputError
from jarvis_graph.tools.builtin import (
    execute_script_impl,
    list_files_impl,
    read_code_impl,
    search_files_impl,
)
from jarvis_graph.tools.registry import asks_user, is_risky


@pytest.fixture
def env(workspace: Path) -> ToolEnv:
    return ToolEnv(workspace.resolve(), Settings(execute_timeout=30))


def put(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- read_code ------------------------------------------------------------------------------


def test_read_code_numbers_lines(env: ToolEnv) -> None:
    put(env.workspace, "a.py", "".join(f"line {n}\n" for n in range(1, 13)))
    out = read_code_impl(env, "a.py")
    lines = out.splitlines()
    assert lines[0] == "a.py (lines 1-12 of 12)"
    assert lines[1] == " 1 | line 1"
    assert lines[12] == "12 | line 12"
    assert "more lines" not in out


def test_read_code_counts_the_data_rows_of_a_table(env: ToolEnv) -> None:
    put(env.workspace, "t.csv", "id,name\n1,a\n2,b\n\n")
    assert read_code_impl(env, "t.csv").splitlines()[0] == (
        "t.csv (lines 1-4 of 4: a header line and 2 data rows)"
    )
    put(env.workspace, "one.tsv", "id\tname\n1\ta\n")
    assert "a header line and 1 data row)" in read_code_impl(env, "one.tsv")


def test_read_code_range(env: ToolEnv) -> None:
    put(env.workspace, "a.py", "".join(f"l{n}\n" for n in range(1, 21)))
    out = read_code_impl(env, "a.py", 5, 7)
    assert out.splitlines() == [
        "a.py (lines 5-7 of 20)",
        "5 | l5",
        "6 | l6",
        "7 | l7",
        "[13 more lines; call read_code with start_line=8]",
    ]


def test_read_code_end_past_the_end_is_clipped(env: ToolEnv) -> None:
    put(env.workspace, "a.py", "one\ntwo\n")
    assert read_code_impl(env, "a.py", 2, 99).splitlines() == ["a.py (lines 2-2 of 2)", "2 | two"]


@pytest.mark.parametrize(("start", "end"), [(0, None), (5, 3), (-1, 2), (4, None), (9, 12)])
def test_read_code_bad_range(env: ToolEnv, start: int, end: int | None) -> None:
    put(env.workspace, "a.py", "1\n2\n3\n")
    with pytest.raises(ToolInputError) as info:
        read_code_impl(env, "a.py", start, end)
    assert f"bad range start_line={start}, end_line={end}; lines are 1..3" in str(info.value)


def test_read_code_more_lines_note(env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "MAX_READ_LINES", 4)
    put(env.workspace, "big.txt", "".join(f"{n}\n" for n in range(1, 11)))
    out = read_code_impl(env, "big.txt", 3)
    assert out.splitlines()[0] == "big.txt (lines 3-6 of 10)"
    assert out.endswith("[4 more lines; call read_code with start_line=7]")


def test_read_code_missing_file(env: ToolEnv) -> None:
    with pytest.raises(ToolInputError) as info:
        read_code_impl(env, "nope.py")
    assert "'nope.py' does not exist" in str(info.value)
    assert "use list_files" in str(info.value)


def test_read_code_on_a_folder_lists_it(env: ToolEnv) -> None:
    (env.workspace / "d" / "sub").mkdir(parents=True)
    (env.workspace / "d" / "a.md").write_text("x\n")
    (env.workspace / "d" / "sub" / "b.md").write_text("y\n")
    out = read_code_impl(env, "d")
    assert out.startswith("d is a folder, not a file.\n2 files under d")
    assert "a.md" in out and "sub/b.md" in out


def test_read_code_binary(env: ToolEnv) -> None:
    put(env.workspace, "blob.bin", b"\x7fELF\x00\x01\x02" + b"x" * 100)
    with pytest.raises(ToolInputError, match=r"looks binary \(107 bytes\)"):
        read_code_impl(env, "blob.bin")


def test_read_code_invalid_utf8_is_replaced(env: ToolEnv) -> None:
    put(env.workspace, "latin.txt", "caf\xe9\n".encode("latin-1"))
    assert "1 | caf\ufffd" in read_code_impl(env, "latin.txt")


def test_read_code_refuses_outside(env: ToolEnv) -> None:
    with pytest.raises(ToolInputError, match="outside the workspace"):
        read_code_impl(env, "../secret.txt")


# --- list_files -----------------------------------------------------------------------------


def test_list_files_skips_tool_and_vcs_dirs(env: ToolEnv) -> None:
    for rel in (
        "a.py",
        "src/b.py",
        "src/c.txt",
        ".git/config",
        ".venv/lib/x.py",
        "node_modules/m/index.js",
        ".jarvis/tool_outputs/o.txt",
        "pkg/__pycache__/b.cpython.pyc",
        ".github/ci.yml",
    ):
        put(env.workspace, rel, "x")
    assert list_files_impl(env).splitlines() == [
        "4 files under . (2 .py, 1 .yml, 1 .txt):",
        "a.py",
        ".github/ci.yml",
        "src/b.py",
        "src/c.txt",
    ]


def test_list_files_pattern_and_subdir(env: ToolEnv) -> None:
    for rel in ("a.py", "src/b.py", "src/c.txt", "src/deep/d.py"):
        put(env.workspace, rel, "x")
    assert list_files_impl(env, pattern="*.py").splitlines() == [
        "3 files under .:",
        "a.py",
        "src/b.py",
        "src/deep/d.py",
    ]
    assert list_files_impl(env, "src", "*.py").splitlines()[1:] == ["b.py", "deep/d.py"]
    assert list_files_impl(env, pattern="*.rs") == "no files matching '*.rs' under ."


def test_list_files_caps_the_listing(env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "MAX_LIST_ENTRIES", 2)
    for n in range(5):
        put(env.workspace, f"f{n}.txt", "x")
    lines = list_files_impl(env).splitlines()
    assert lines == [
        "5 files under .:",  # one extension: no counts
        "f0.txt",
        "f1.txt",
        "[3 more; narrow with path or pattern]",
    ]


def test_list_files_on_a_file_or_missing_path(env: ToolEnv) -> None:
    put(env.workspace, "a.py", "x")
    assert (
        list_files_impl(env, "a.py") == "a.py is a file, not a folder. a.py (lines 1-1 of 1)\n1 | x"
    )
    with pytest.raises(ToolInputError, match="'missing' does not exist"):
        list_files_impl(env, "missing")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        list_files_impl(env, "..")


# --- search_files ---------------------------------------------------------------------------


def hit_lines(out: str) -> list[str]:
    """The matches of a search_files result, after its "N matching lines in M files:" line."""
    head, _, body = out.partition("\n")
    assert re.fullmatch(r"\d+ matching lines? in \d+ files?:", head), head
    return body.splitlines()


SEARCH_FILES = {
    "a.py": "import os\ndef main():\n    return os.getcwd()\n",
    "src/b.py": "def helper():\n    pass\n",
    "src/notes.txt": "def is not code here\n",
    ".venv/lib.py": "def hidden_in_venv():\n",
    ".git/HEAD": "def in_git\n",
    "blob.bin": "def \0 binary\n",
    ".github/ci.yml": "def in_ci\n",
}
EXPECTED_DEF_HITS = {
    "a.py:2:def main():",
    "src/b.py:1:def helper():",
    "src/notes.txt:1:def is not code here",
    ".github/ci.yml:1:def in_ci",
}


@pytest.fixture
def search_env(env: ToolEnv) -> ToolEnv:
    for rel, text in SEARCH_FILES.items():
        put(env.workspace, rel, text)
    return env


@pytest.fixture(params=["rg", "python"])
def search_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "rg":
        if shutil.which("rg") is None:
            pytest.skip("ripgrep is not installed")
    else:
        monkeypatch.setattr(builtin.shutil, "which", lambda name: None)
    return request.param


def test_search_finds_lines(search_env: ToolEnv, search_mode: str) -> None:
    out = search_files_impl(search_env, r"^def ")
    assert set(hit_lines(out)) == EXPECTED_DEF_HITS


def test_search_glob_and_path(search_env: ToolEnv, search_mode: str) -> None:
    out = search_files_impl(search_env, r"def", glob="*.py")
    assert set(hit_lines(out)) == {"a.py:2:def main():", "src/b.py:1:def helper():"}
    out = search_files_impl(search_env, r"def", path="src")
    assert set(hit_lines(out)) == {"b.py:1:def helper():", "notes.txt:1:def is not code here"}


def test_search_without_matches(search_env: ToolEnv, search_mode: str) -> None:
    assert search_files_impl(search_env, "zebra") == "no matches for 'zebra' under ."


def test_a_glob_no_file_name_matches_is_named_as_the_reason(
    search_env: ToolEnv, search_mode: str
) -> None:
    out = search_files_impl(search_env, "a.py", glob=".*def.*")  # the arguments swapped
    assert out.startswith("no file under . has a name matching the glob '.*def.*'")
    assert "pattern is the text to find inside the files" in out
    assert search_files_impl(search_env, "zebra", glob="*.py") == "no matches for 'zebra' under ."
    out = search_files_impl(search_env, "def", glob="src/*.py")  # a relative path matches
    assert set(hit_lines(out)) == {"src/b.py:1:def helper():"}


def test_search_invalid_regex(search_env: ToolEnv, search_mode: str) -> None:
    with pytest.raises(ToolInputError) as info:
        search_files_impl(search_env, "def (")
    assert "invalid regular expression 'def ('" in str(info.value)
    assert "escape special characters" in str(info.value)


def test_a_file_name_glob_given_as_the_pattern_lists_the_files_it_names(
    search_env: ToolEnv, search_mode: str
) -> None:
    out = search_files_impl(search_env, "*.py", path="src")  # invalid as a regex
    assert out.startswith("'*.py' is a file name pattern, not text to find inside files")
    assert out.endswith("1 file under src:\nb.py")
    assert "2 files under ." in search_files_impl(search_env, "*.py")
    with pytest.raises(ToolInputError, match="invalid regular expression"):
        search_files_impl(search_env, "*def (")  # not a name: still an invalid regex


def test_a_pattern_with_doubled_backslashes_is_read_once_unescaped(
    search_env: ToolEnv, search_mode: str
) -> None:
    put(search_env.workspace, "todo.py", "x = 1  # TODO(priya): check\n")
    for where in (".", "todo.py"):
        out = search_files_impl(search_env, "TODO\\\\(\\w+\\\\)", path=where)
        assert out.startswith(
            "(read as 'TODO\\\\(\\\\w+\\\\)': the pattern's backslashes were doubled)"
        )
        assert "# TODO(priya): check" in out


def test_a_file_name_glob_that_matches_no_line_names_the_files_it_matches(
    search_env: ToolEnv, search_mode: str
) -> None:
    out = search_files_impl(search_env, "b*.py")  # a valid regex too: no line has it
    assert out.startswith("no lines match 'b*.py' under .; as a file name pattern it names")
    assert out.endswith("1 file under .:\nsrc/b.py")


def test_search_in_one_file_or_a_missing_path(search_env: ToolEnv, search_mode: str) -> None:
    text = (search_env.workspace / "a.py").read_text()
    expected = [f"a.py:{n}:{line}" for n, line in enumerate(text.splitlines(), 1) if "def" in line]
    assert expected and hit_lines(search_files_impl(search_env, "def", path="a.py")) == expected
    assert "no matches" in search_files_impl(search_env, "zzz_nothing", path="a.py")
    with pytest.raises(ToolInputError, match="'missing' does not exist"):
        search_files_impl(search_env, "def", path="missing")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        search_files_impl(search_env, "def", path="../")


def test_python_search_caps_results(env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin.shutil, "which", lambda name: None)
    monkeypatch.setattr(builtin, "MAX_SEARCH_RESULTS", 3)
    put(env.workspace, "many.txt", "hit\n" * 5)
    assert hit_lines(search_files_impl(env, "hit")) == [
        "many.txt:1:hit",
        "many.txt:2:hit",
        "many.txt:3:hit",
        "[2 more matches; narrow the search]",
    ]


def _fake_rg(folder: Path, body: str) -> str:
    """An executable standing in for ripgrep; records its arguments in ``args.txt``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rg"
    path.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{folder}/args.txt"\n{body}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_rg_output_is_parsed_and_dirs_excluded(
    search_env: ToolEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rg = _fake_rg(tmp_path / "bin", "echo './a.py:2:def main():'; echo 'src/b.py:1:x'; exit 0")
    monkeypatch.setattr(builtin.shutil, "which", lambda name: rg)
    out = search_files_impl(search_env, "def", glob="*.py")
    assert hit_lines(out) == ["a.py:2:def main():", "src/b.py:1:x"]
    args = (tmp_path / "bin" / "args.txt").read_text().splitlines()
    assert args[-3:] == ["--", "def", "."]
    assert "*.py" in args
    assert "--glob=!.venv" in args
    assert "--glob=!.git" in args


def test_rg_error_falls_back_to_python(
    search_env: ToolEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rust regexes have no look-around; Python's do. rg exits 2 and prints nothing.
    rg = _fake_rg(tmp_path / "bin", "echo 'regex parse error' >&2; exit 2")
    monkeypatch.setattr(builtin.shutil, "which", lambda name: rg)
    out = search_files_impl(search_env, r"def (?=main)")
    assert hit_lines(out) == ["a.py:2:def main():"]


def test_rg_no_match_exit_code_is_not_an_error(
    search_env: ToolEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rg = _fake_rg(tmp_path / "bin", "exit 1")
    monkeypatch.setattr(builtin.shutil, "which", lambda name: rg)
    assert search_files_impl(search_env, "def") == "no matches for 'def' under ."


# --- execute_script -------------------------------------------------------------------------


def test_execute_reports_exit_code_and_output(env: ToolEnv) -> None:
    out = execute_script_impl(env, "echo out; echo err >&2; echo again; exit 3")
    assert out == "exit code: 3\nout\nerr\nagain\n"


def test_a_file_run_as_a_command_gets_the_command_that_runs_it(env: ToolEnv) -> None:
    (env.workspace / "compute.py").write_text("print(140)\n")
    out = execute_script_impl(env, "compute.py --fast")
    assert out.startswith("exit code: 127\n")
    assert out.endswith(
        "[compute.py is a file, not a command: run it with `python3 compute.py --fast`]"
    )
    assert "is a file" not in execute_script_impl(env, "nosuch.py")  # no such file: no hint
    assert "is a file" not in execute_script_impl(env, "../compute.py")  # not in the workspace
    assert execute_script_impl(env, "python3 compute.py") == "exit code: 0\n140\n"


def test_execute_runs_in_the_workspace(env: ToolEnv) -> None:
    out = execute_script_impl(env, "pwd; echo data > made.txt")
    assert out == f"exit code: 0\n{env.workspace}\n"
    assert (env.workspace / "made.txt").read_text() == "data\n"


def test_execute_has_no_stdin(env: ToolEnv) -> None:
    assert execute_script_impl(env, "cat; echo done") == "exit code: 0\ndone\n"


def test_execute_cwd_must_stay_inside(env: ToolEnv) -> None:
    (env.workspace / "sub").mkdir()
    assert execute_script_impl(env, "basename $PWD", cwd="sub") == "exit code: 0\nsub\n"
    with pytest.raises(ToolInputError, match="outside the workspace"):
        execute_script_impl(env, "pwd", cwd="..")


@pytest.mark.parametrize("script", ["", "   \n\t"])
def test_execute_empty_script(env: ToolEnv, script: str) -> None:
    with pytest.raises(ToolInputError, match="script is empty"):
        execute_script_impl(env, script)


PF_EXITING = 0x4  # linux/sched.h: set when the process starts to exit
SIGKILL_BIT = 1 << (9 - 1)


def _process_killed(pid: int) -> bool:
    """True when ``pid`` is gone, a zombie, exiting, or has SIGKILL pending.

    Read from /proc, so the check needs no waiting: a signalled process is in one of
    these states from the moment ``killpg`` returns.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    fields = stat[stat.rindex(")") + 2 :].split()
    state, flags = fields[0], int(fields[6])
    pending = 0
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            pending |= int(line.split()[1], 16)
    return state in ("Z", "X") or bool(flags & PF_EXITING) or bool(pending & SIGKILL_BIT)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("level", ["off", "landlock"])  # the machine's pids (not bwrap's)
def test_execute_timeout_kills_the_process_group(workspace: Path, level: str) -> None:
    env = ToolEnv(workspace.resolve(), Settings(execute_timeout=30, sandbox=level))
    # The child does not hold the output pipe, so only a group kill can stop it.
    script = (
        "(sleep 300; echo late > late.txt) >/dev/null 2>&1 & echo $! > child.pid;"
        " echo started; wait"
    )
    out = execute_script_impl(env, script, timeout=1)
    assert out.startswith("timed out after 1 s (process killed)\noutput so far:\n")
    assert "started" in out
    child = int((env.workspace / "child.pid").read_text())
    assert _process_killed(child)  # the background child died with the group
    assert not (env.workspace / "late.txt").exists()


def test_execute_timeout_defaults_to_the_setting(workspace: Path) -> None:
    env = ToolEnv(workspace.resolve(), Settings(execute_timeout=0.5))
    out = execute_script_impl(env, "echo begin; exec sleep 300")
    assert out.startswith("timed out after 0.5 s")
    assert out.endswith("begin\n")


# --- the langchain wrappers -----------------------------------------------------------------


def test_tool_wrappers_outside_a_run_use_the_cwd(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    put(workspace, "a.py", "print(1)\n")
    assert builtin.read_code.invoke({"path": "a.py"}).endswith("1 | print(1)")
    assert builtin.list_files.invoke({}).splitlines() == ["1 file under .:", "a.py"]
    monkeypatch.setattr(builtin.shutil, "which", lambda name: None)
    assert hit_lines(builtin.search_files.invoke({"pattern": "print"})) == ["a.py:1:print(1)"]
    assert builtin.execute_script.invoke({"script": "cat a.py"}) == "exit code: 0\nprint(1)\n"


def test_ask_user_without_a_user_says_so() -> None:
    out = builtin.ask_user.invoke({"question": "Which colour?"})
    assert "No user is available" in out
    assert "say in your answer what you assumed" in out


def test_a_run_has_the_builtins_with_their_flags(workspace: Path) -> None:
    tools = RunServices(JarvisContext(workspace=str(workspace))).tools
    assert set(tools) == {
        *("read_code", "list_files", "search_files", "execute_script", "ask_user"),
        *("write_file", "edit_file"),  # jarvis run writes files too (risky: confirmed)
        "compute",  # the local model (no key configured) computes with checked expressions
        *("save_memory", "retrieve_memory", "clear_memory", "search_episodic_memory"),
        "methodology",
        *("ask_document", "read_document"),  # documents: read-only
    }
    assert [name for name, t in tools.items() if is_risky(t)] == [
        *("execute_script", "write_file", "edit_file", "clear_memory", "methodology")
    ]
    # a global memory reaches every later prompt: that save is confirmed, a project one not
    memory = {"memories": [{"memory_type": "global_long_term", "content": "x"}]}
    assert is_risky(tools["save_memory"], memory)
    memory["memories"][0]["memory_type"] = "project_long_term"
    assert not is_risky(tools["save_memory"], memory)
    assert [name for name, t in tools.items() if asks_user(t)] == ["ask_user"]
    assert all(t.description for t in tools.values())
    assert set(tools["read_code"].args) == {"path", "start_line", "end_line"}


def test_kill_running_scripts_interrupts_the_call(env: ToolEnv) -> None:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            execute_script_impl(env, "echo started > started.txt; exec sleep 300")
        except BaseException as exc:  # the interrupt is what we check
            errors.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    deadline = time.monotonic() + 30
    # synchronisation only: wait until the script runs and the tool has registered it (the
    # script may write its file before the Popen call returns to the tool)
    while time.monotonic() < deadline and not (
        (env.workspace / "started.txt").exists() and builtin._running
    ):
        time.sleep(0.01)

    assert builtin.kill_running_scripts() == 1
    worker.join(30)

    assert not worker.is_alive()
    assert len(errors) == 1
    assert isinstance(errors[0], builtin.ScriptInterrupted)
    assert "killed because the run was interrupted" in str(errors[0])
    assert builtin.kill_running_scripts() == 0  # nothing left running


def test_search_counts_matches_and_hints_at_list_files(search_env: ToolEnv) -> None:
    out = search_files_impl(search_env, "def")
    files = {line.split(":", 1)[0] for line in hit_lines(out)}
    assert out.startswith(f"{len(hit_lines(out))} matching lines in {len(files)} files:")
    miss = search_files_impl(search_env, "test_*.py")
    assert "find files by name with list_files" in miss
