"""``compute``: evaluate a checked Python expression over the workspace, read-only.

Small models count, sum and compare badly in their heads; written as one expression
(``len(glob('**/test_*.py'))``, ``sum(float(r['qty']) for r in csv.DictReader(open('s.csv')))``)
the value is right and its result is evidence the answer check accepts. The expression is
checked and run by :mod:`jarvis_graph.tools.calculator`: a whitelist of names and methods,
an isolated process with limits, files read-only inside the workspace, never secret ones.
"""

from __future__ import annotations

import ast

from langchain_core.tools import tool

from jarvis_graph import sandbox
from jarvis_graph.secrets import SECRET_FILE_GLOBS, minimal_environment
from jarvis_graph.tools import artifacts, calculator
from jarvis_graph.tools.artifacts import ARTIFACT_KIND, ComputationArtifact
from jarvis_graph.tools.base import ToolFailure, current_env


@tool(parse_docstring=True, response_format="content_and_artifact")
def compute(expression: str) -> tuple[str, ComputationArtifact]:
    """Compute a value with one Python expression: a count, a sum, a largest value, a total.

    The expression may read workspace files with open(path) and glob(pattern), and parse
    them with csv.DictReader, json.load or re.findall; then len, sum, max, min, sorted,
    round and comprehensions. No statements, imports or variables.

    Args:
        expression: The Python expression; paths are relative to the workspace.
    """
    env = current_env()
    expression = calculator.repair(expression)
    if _only_a_value(expression):
        msg = (
            f"{expression} is a value, not a computation: write the expression that computes "
            "it from the files, e.g. len(open('data.csv').readlines()) - 1"
        )
        raise ToolFailure(msg)
    try:
        confined = sandbox.prepare_for(
            env.settings,
            env.workspace,
            env.workspace,
            minimal_environment(),
            workspace_writable=False,
            what="the calculation",
        )
    except sandbox.SandboxUnavailable:
        # Without a sandbox the calculation runs as it always has: its expression was
        # checked to be arithmetic over read-only workspace files, in a limited process.
        confined = None
    try:
        result = calculator.calculate(
            expression, workspace=env.workspace, private=SECRET_FILE_GLOBS, sandbox=confined
        )
    except calculator.CalculationError as exc:
        raise ToolFailure(f"{expression} failed: {exc}") from exc
    finally:
        if confined is not None:
            confined.close()  # also when the expression was refused before it ran
    artifact = artifacts.computation(expression, result.value, result.read_as)
    return f"{expression} = {result.text}", artifact


def _only_a_value(expression: str) -> bool:
    """Whether the expression is a bare literal (``100``, ``-3.5``, ``'x'``): no evidence.

    Its result would be taken as computed evidence for an answer the model made up.
    """
    try:
        body = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        return False  # the calculator says what is wrong
    if isinstance(body, ast.UnaryOp):
        body = body.operand
    return isinstance(body, ast.Constant)


compute.metadata = {"computes": True, ARTIFACT_KIND: "computation"}
