"""Ordinary work still runs in the sandbox, each a real ``jarvis run``.

Boundary: the same one as ``test_sandbox_escapes``, from the other side. A sandbox that
refuses what a developer's agent does every day would be turned off, so the sandbox
guarantees that, at ``auto`` (``bwrap`` here) and at ``landlock``, a script can run
``python3 -c``, read the workspace's files, write build outputs into the workspace, use
temporary files, run ``make`` and the C compiler, work with the workspace's git
repository (``status``, ``diff``, ``commit``), list installed Python packages and run the
workspace's own tests (``unittest`` and pytest). Each test asserts the exit code the
model sees, the output and the files left on disk.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.git import git, make_repo, set_identity
from tests.support.sandboxed import ScriptRun, run_script, use_level

BOTH = ["auto", "landlock"]


@pytest.fixture(params=BOTH)
def level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The sandbox level of the test's runs (``auto`` is ``bwrap`` here)."""
    yield use_level(monkeypatch, request.param)


def ran(ws: Path, tmp_path: Path, script: str) -> ScriptRun:
    """A run whose script must end with exit code 0; the run itself must end normally."""
    done = run_script(ws, tmp_path, script)
    assert done.done.returncode == 0, done.output
    assert done.result.startswith("exit code: 0\n"), done.result
    return done


def test_python_one_liner(level: str, workspace: Path, tmp_path: Path) -> None:
    run = ran(workspace, tmp_path, "python3 -c 'import json; print(json.dumps(sum(range(10))))'")
    assert run.result == "exit code: 0\n45\n"


def test_read_a_workspace_file(level: str, workspace: Path, tmp_path: Path) -> None:
    (workspace / "data.csv").write_text("a,1\nb,2\nc,3\n")
    run = ran(workspace, tmp_path, "wc -l < data.csv; grep b data.csv")
    assert run.result == "exit code: 0\n3\nb,2\n"


def test_write_a_build_output_and_use_temporary_files(
    level: str, workspace: Path, tmp_path: Path
) -> None:
    script = """
        tmp=$(mktemp)
        echo intermediate > "$tmp"
        mkdir -p build/out
        tr a-z A-Z < "$tmp" > build/out/result.txt
        python3 -c 'import tempfile; tempfile.TemporaryFile().write(b"x"); print("tempfile ok")'
        rm "$tmp"
    """
    run = ran(workspace, tmp_path, script)
    assert "tempfile ok" in run.result
    assert (workspace / "build" / "out" / "result.txt").read_text() == "INTERMEDIATE\n"


def test_make_and_the_c_compiler(level: str, workspace: Path, tmp_path: Path) -> None:
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.fail("make and cc must be installed for this test (an environment failure)")
    (workspace / "hello.c").write_text(
        '#include <stdio.h>\nint main(void) { puts("hello from cc"); return 0; }\n'
    )
    (workspace / "Makefile").write_text(
        "build/hello: hello.c\n\tmkdir -p build\n\tcc -o $@ $<\n"
        "run: build/hello\n\t./build/hello > build/hello.txt\n"
    )
    run = ran(workspace, tmp_path, "make run && cat build/hello.txt")
    assert run.result.endswith("hello from cc\n"), run.result
    assert (workspace / "build" / "hello.txt").read_text() == "hello from cc\n"
    assert (workspace / "build" / "hello").stat().st_mode & 0o111


def test_git_status_diff_and_commit(
    level: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(monkeypatch)
    make_repo(workspace, {"app.py": "print('hi')\n"})
    (workspace / "app.py").write_text("print('hello')\n")
    script = "git status --short; git diff --stat; git commit -qam 'say hello' && echo committed"
    run = ran(workspace, tmp_path, script)
    assert " M app.py" in run.result and "1 file changed" in run.result, run.result
    assert "committed" in run.result
    assert git(workspace, "log", "--format=%s", "-1") == "say hello\n"
    assert git(workspace, "status", "--porcelain", "--untracked-files=no") == ""


def test_pip_list(level: str, workspace: Path, tmp_path: Path) -> None:
    run = ran(workspace, tmp_path, "python3 -m pip list --disable-pip-version-check")
    assert "Package" in run.result and "pip " in run.result, run.result


TESTS = textwrap.dedent(
    """
    import unittest

    from calc import add


    class AddTest(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 3), 5)

        def test_add_negative(self):
            self.assertEqual(add(-2, 3), 1)
    """
)


@pytest.fixture
def project(workspace: Path) -> Path:
    """A workspace with a module and its tests."""
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "tests").mkdir()
    (workspace / "tests" / "__init__.py").write_text("")
    (workspace / "tests" / "test_calc.py").write_text(TESTS)
    return workspace


def test_the_workspaces_unittest_suite(level: str, project: Path, tmp_path: Path) -> None:
    run = ran(project, tmp_path, "python3 -m unittest discover -s tests -t . 2>&1")
    assert "Ran 2 tests" in run.result and "OK" in run.result, run.result


def test_the_workspaces_pytest_suite(level: str, project: Path, tmp_path: Path) -> None:
    found = subprocess.run([sys.executable, "-c", "import pytest"], check=False)
    assert found.returncode == 0  # the suite's own interpreter has pytest
    script = f"{sys.executable} -m pytest -q -p no:cacheprovider tests --junitxml=report.xml"
    run = ran(project, tmp_path, script)
    assert "2 passed" in run.result, run.result
    assert 'tests="2"' in (project / "report.xml").read_text()


def test_node_one_liner_writes_into_the_workspace(
    level: str, workspace: Path, tmp_path: Path
) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed here")
    script = "node -e \"require('fs').writeFileSync('out.json', JSON.stringify({n: 6 * 7}))\""
    ran(workspace, tmp_path, f"{script} && cat out.json")
    assert (workspace / "out.json").read_text() == '{"n":42}'
