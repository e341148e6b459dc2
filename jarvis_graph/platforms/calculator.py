"""A calculator for the Python expressions a model writes to compute an answer.

Small models count, sum and compare badly in their heads but copy values into a Python
expression well ("program of thought"). The expression is checked against a whitelist
before it runs: literals, arithmetic, comparisons, comprehensions, a few pure builtins
(``len``, ``sum``, ``max`` ...) and string/list methods that read (``count``, ``split`` ...).
No names other than those, no attributes other than those methods, no imports, no dunders:
it cannot touch files, the network or the interpreter. It still runs in a separate,
isolated Python process with memory and CPU limits and a timeout, so that ``9**9**9`` or a
huge ``range`` costs at most that.

Pure module: no llama.cpp or langchain imports.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

MAX_EXPRESSION_CHARS = 4000
MAX_RESULT_CHARS = 500
TIMEOUT_SECONDS = 3.0
MEMORY_BYTES = 512 * 1024 * 1024

ALLOWED_CALLS = frozenset(
    {
        "abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len", "list",
        "max", "min", "range", "reversed", "round", "set", "sorted", "str", "sum", "tuple",
        "zip",
    }
)  # fmt: skip
ALLOWED_METHODS = frozenset(
    {
        "count", "endswith", "find", "get", "index", "isdigit", "items", "join", "keys",
        "lower", "lstrip", "replace", "rstrip", "split", "splitlines", "startswith", "strip",
        "upper", "values",
    }
)  # fmt: skip
_NODES = (
    ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Name,
    ast.Load, ast.Store, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
    ast.Call, ast.Attribute, ast.Subscript, ast.Slice, ast.ListComp, ast.SetComp,
    ast.GeneratorExp, ast.DictComp, ast.comprehension, ast.keyword, ast.operator,
    ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip

# Runs in the child process: the expression has been checked already; builtins are
# limited to the whitelist all the same.
_CHILD = """
import builtins, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
names = {{n: getattr(builtins, n) for n in json.loads(sys.argv[1])}}
value = eval(sys.stdin.read(), {{"__builtins__": {{}}}}, names)
if isinstance(value, float) and value.is_integer():
    value = int(value)
elif isinstance(value, float):
    value = round(value, 6)
print(value)
"""


class CalculationError(ValueError):
    """The expression is not allowed, does not parse, fails or takes too long."""


def check(expression: str) -> ast.Expression:
    """Parse ``expression`` and check every node against the whitelist."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        msg = f"the expression is longer than {MAX_EXPRESSION_CHARS} characters"
        raise CalculationError(msg)
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"not a Python expression: {exc.msg}") from exc
    bound = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.comprehension)
        for target in ast.walk(node.target)
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise CalculationError(f"{type(node).__name__} is not allowed in a calculation")
        if isinstance(node, ast.Name) and node.id not in ALLOWED_CALLS | bound:
            raise CalculationError(f"unknown name {node.id!r}: use literal values")
        if isinstance(node, ast.Attribute) and node.attr not in ALLOWED_METHODS:
            raise CalculationError(f"the method {node.attr!r} is not allowed")
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise CalculationError("only builtins and methods may be called")
    return tree


def evaluate(expression: str, timeout: float = TIMEOUT_SECONDS) -> str:
    """The value of ``expression`` as text, computed in an isolated, limited process."""
    check(expression)
    code = _CHILD.format(mem=MEMORY_BYTES, cpu=max(1, int(timeout)))
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, json.dumps(sorted(ALLOWED_CALLS))],
            input=expression.strip(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CalculationError(f"the calculation took longer than {timeout:g} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["it was stopped"])[-1]
        raise CalculationError(f"the calculation failed: {last}")
    value = done.stdout.strip()
    if len(value) > MAX_RESULT_CHARS:
        value = value[:MAX_RESULT_CHARS] + " ..."
    return value
