"""Notebooks under ``notebooks/`` run top to bottom and are committed without outputs.

The kernel is this test run's interpreter: a kernelspec pointing at ``sys.executable`` is
written to a temporary folder and handed to nbclient, so neither a kernel installed in the
user's home nor one on the system can stand in for the venv's ipykernel.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("**/*.ipynb"))
KERNEL_NAME = "jarvis-graph-test"
CELL_TIMEOUT = 120


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(REPO / "notebooks")) for p in paths]


@pytest.fixture
def kernel_manager(tmp_path: Path) -> AsyncKernelManager:
    """A kernel manager whose only kernelspec runs ipykernel with this interpreter."""
    spec_dir = tmp_path / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Jarvis Graph tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)])
    manager = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    assert manager.kernel_spec is not None
    assert manager.kernel_spec.argv[0] == sys.executable
    return manager


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no .ipynb files"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_without_errors(path: Path, kernel_manager: AsyncKernelManager) -> None:
    nb = nbformat.read(path, as_version=4)
    # Last cell, added in memory only: proves which interpreter ran the notebook.
    nb.cells.append(nbformat.v4.new_code_cell("import sys\nprint(sys.prefix)"))
    env = os.environ.copy()  # HOME and JARVIS_HOME point at the test's home
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    client = NotebookClient(
        nb,
        km=kernel_manager,
        timeout=CELL_TIMEOUT,
        startup_timeout=60,
        resources={"metadata": {"path": str(path.parent)}},  # cwd, as in Jupyter
    )
    # Raises CellExecutionError with the traceback on a failing cell; cleanup_kc shuts the
    # kernel down and closes its sockets although the test, not nbclient, owns the manager.
    client.execute(env=env, cleanup_kc=True)

    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    warnings = [
        out.text
        for out in outputs
        if out.output_type == "stream" and out.name == "stderr" and "Warning" in out.text
    ]
    assert not warnings, "".join(warnings)
    assert nb.cells[-1].outputs[0].text.strip() == sys.prefix


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"{path.name} cell {index} has outputs; strip them"
        assert cell.execution_count is None, f"{path.name} cell {index} has an execution count"
