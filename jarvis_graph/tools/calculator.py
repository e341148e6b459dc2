"""A calculator for the Python expressions a model writes to compute an answer.

Small models count, sum and compare badly in their heads but copy values into a Python
expression well ("program of thought"). The expression is checked against a whitelist
before it runs: literals, arithmetic, comparisons, comprehensions, a few pure builtins
(``len``, ``sum``, ``max`` ...) and string/list methods that read (``count``, ``split`` ...).
No names other than those, no attributes other than those methods, no imports, no dunders:
it cannot touch the network or the interpreter. It still runs in a separate, isolated
Python process with memory and CPU limits and a timeout, so that ``9**9**9`` or a huge
``range`` costs at most that.

Given a workspace, the expression may also read it: a Coder model computes "how many test
files", "the largest value in numbers.txt" or "the shipped orders in orders.csv" far more
reliably as ``len(glob('**/test_*.py'))`` or ``max(float(n) for n in open('numbers.txt'))``
than by copying every value into a literal. ``open`` only reads, only inside the workspace,
never hidden or secret-looking files; ``glob`` lists inside the workspace; ``csv``, ``json``
and ``re`` parse. The process may not write a byte to any file (``RLIMIT_FSIZE`` 0).

Pure module: no llama.cpp or langchain imports.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import subprocess
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import NamedTuple

from jarvis_graph.sandbox import Prepared
from jarvis_graph.secrets import SECRET_FILE_GLOBS, minimal_environment

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
FILE_NAMES = frozenset({"open", "glob", "csv", "json", "re"})
"""Names an expression may use when it runs over a workspace."""
FILE_METHODS = frozenset(
    {"DictReader", "reader", "load", "loads", "read", "readlines", "findall", "search", "group"}
)
_NODES = (
    ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Name,
    ast.Load, ast.Store, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
    ast.Call, ast.Attribute, ast.Subscript, ast.Slice, ast.ListComp, ast.SetComp,
    ast.GeneratorExp, ast.DictComp, ast.comprehension, ast.keyword, ast.operator,
    ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip

# Runs in the child process: the expression has been checked already; builtins are
# limited to the whitelist all the same. argv: allowed builtins, workspace (or ""), the glob
# patterns of secret-looking file names.
_CHILD = """
import builtins, csv, fnmatch, glob as globbing, json, os, re, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
names = {{n: getattr(builtins, n) for n in json.loads(sys.argv[1])}}
root, secret = sys.argv[2], json.loads(sys.argv[3])

def inside(path):
    full = os.path.realpath(path)
    rel = os.path.relpath(full, root)
    parts = rel.split(os.sep)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise PermissionError(f"{{path}} is outside the workspace")
    if any(p.startswith(".") for p in parts if p != ".") or any(
        fnmatch.fnmatchcase(p.lower(), g) for p in parts for g in secret
    ):
        raise PermissionError(f"{{path}} is private")
    return full

def read_only_open(path, mode="r", *args, **kwargs):
    if mode not in ("r", "rt"):
        raise PermissionError("files can only be read")
    return open(inside(path), encoding="utf-8", errors="replace", newline="")

def workspace_glob(pattern):
    found = globbing.glob(pattern, recursive=True)
    return sorted(p for p in found if os.path.isfile(p) and not _private(p))

def _private(path):
    try:
        inside(path)
    except PermissionError:
        return True
    return False

if root:
    os.chdir(root)
    names.update(open=read_only_open, glob=workspace_glob, csv=csv, json=json, re=re)
value = eval(sys.stdin.read(), {{"__builtins__": {{}}, **names}})  # globals: seen in comprehensions
if isinstance(value, float) and value.is_integer():
    value = int(value)
elif isinstance(value, float):
    value = round(value, 6)
print(value)
"""


class CalculationError(ValueError):
    """The expression is not allowed, does not parse, fails or takes too long."""


def _bound_names(tree: ast.AST) -> frozenset[str]:
    """The names the comprehensions of ``tree`` bind (``r`` in ``... for r in rows``)."""
    return frozenset(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.comprehension)
        for target in ast.walk(node.target)
        if isinstance(target, ast.Name)
    )


def _unknown_name(name: str, files: bool) -> str:
    """Why ``name`` is refused, and how to write what it stood for."""
    if not files:
        return f"unknown name {name!r}: use literal values"
    column = name if name.isidentifier() and name.islower() else "qty"
    return (
        f"unknown name {name!r}: an expression has no variables; read the values from the "
        f"file inside it, as in sum(float(r['{column}']) for r in csv.DictReader(open("
        "'data.csv'))) for a CSV column, or len(open('app.log').read().splitlines()) for "
        "the lines of a file (use the task's file names)"
    )


def check(expression: str, files: bool = False) -> ast.Expression:
    """Parse ``expression`` and check every node against the whitelist.

    ``files`` also allows the workspace names (:data:`FILE_NAMES`, :data:`FILE_METHODS`).
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        msg = f"the expression is longer than {MAX_EXPRESSION_CHARS} characters"
        raise CalculationError(msg)
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"not a Python expression: {exc.msg}") from exc
    names = ALLOWED_CALLS | (FILE_NAMES if files else frozenset()) | _bound_names(tree)
    methods = ALLOWED_METHODS | (FILE_METHODS if files else frozenset())
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise CalculationError(f"{type(node).__name__} is not allowed in a calculation")
        if isinstance(node, ast.Name) and node.id not in names:
            raise CalculationError(_unknown_name(node.id, files))
        if isinstance(node, ast.Attribute) and node.attr not in methods:
            if files and isinstance(node.value, ast.Name) and node.value.id not in names:
                name = f"{node.value.id}.{node.attr}"  # a file name written bare: numbers.txt
                example = (
                    f"len(list(csv.DictReader(open('{name}')))) for its data rows"
                    if node.attr.lower() == "csv"
                    else f"max(float(x) for x in open('{name}').read().split()) for numbers, "
                    "one or more per line"
                )
                raise CalculationError(
                    f"{name} is not a value: a file is read with open('{name}'), as in {example}"
                )
            raise CalculationError(f"the method {node.attr!r} is not allowed")
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise CalculationError("only builtins and methods may be called")
    return tree


def repair(expression: str) -> str:
    """``expression`` with a generator that fell outside its call put back in, if that parses.

    Small models write ``sum(int(r['n'])) for r in rows``: the call closed before the
    ``for``. Moving that closing parenthesis to the end gives the intended expression.
    Anything else is returned as it is.
    """
    text = expression.strip()
    try:
        ast.parse(text, mode="eval")
        return text
    except SyntaxError:
        pass
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0 and text.startswith(" for ", i) and text[:i].endswith(")"):
            fixed = f"{text[: i - 1]}{text[i:]})"
            try:
                ast.parse(fixed, mode="eval")
            except SyntaxError:
                return text
            return fixed
    return text


class Calculation(NamedTuple):
    """A computed value, and the expression computed when the given one was read as another."""

    value: str
    read_as: str = ""

    @property
    def text(self) -> str:
        """The value as the tool says it: with the reading, when there was one."""
        return f"{self.value}{READ_AS_NOTE}{self.read_as})" if self.read_as else self.value


def evaluate(
    expression: str,
    timeout: float = TIMEOUT_SECONDS,
    workspace: Path | None = None,
    private: Sequence[str] = SECRET_FILE_GLOBS,
    sandbox: Prepared | None = None,
) -> str:
    """The value of ``expression`` as text (see :func:`calculate`)."""
    return calculate(expression, timeout, workspace, private, sandbox).text


def calculate(
    expression: str,
    timeout: float = TIMEOUT_SECONDS,
    workspace: Path | None = None,
    private: Sequence[str] = SECRET_FILE_GLOBS,
    sandbox: Prepared | None = None,
) -> Calculation:
    """The value of ``expression``, computed in an isolated, limited process.

    Args:
        expression: A Python expression over literals (and the workspace, if given).
        timeout: Seconds the calculation may take.
        workspace: A folder the expression may read with ``open`` and ``glob``.
        private: Lower-case glob patterns of file and folder names that may not be read
            (any part of the path), hidden files aside.
        sandbox: The OS sandbox to compute in (see :mod:`jarvis_graph.sandbox`).
    """
    try:
        check(expression, files=workspace is not None)
    except CalculationError as exc:
        meant = reading(expression, workspace, private) if workspace is not None else None
        if meant:  # sum(numbers.txt), max(temp_c): one reading only, said with the value
            return Calculation(calculate(meant, timeout, workspace, private, sandbox).value, meant)
        example = suggestion(expression, workspace, private) if workspace is not None else None
        if example:
            raise CalculationError(f"{exc}. In this workspace that is: {example}") from None
        raise
    code = _CHILD.format(mem=MEMORY_BYTES, cpu=max(1, int(timeout)))
    root = str(workspace.resolve()) if workspace is not None else ""
    argv = [json.dumps(sorted(ALLOWED_CALLS)), root, json.dumps(list(private))]
    command = [sys.executable, "-I", "-S", "-c", code, *argv]
    variables = minimal_environment()  # the expression needs nothing of the user's
    fds: tuple[int, ...] = ()
    if sandbox is not None:
        command, variables, fds = sandbox.wrap(command), sandbox.env, sandbox.pass_fds
    try:
        done = subprocess.run(
            command,
            input=expression.strip(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=variables,
            cwd=root or None,
            pass_fds=fds,
        )
    except subprocess.TimeoutExpired as exc:
        raise CalculationError(f"the calculation took longer than {timeout:g} s") from exc
    finally:
        if sandbox is not None:
            sandbox.close()
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["it was stopped"])[-1]
        raise CalculationError(f"the calculation failed: {last}")
    value = done.stdout.strip()
    if len(value) > MAX_RESULT_CHARS:
        value = value[:MAX_RESULT_CHARS] + " ..."
    return Calculation(value)


_AGGREGATES = ("sum", "max", "min", "len", "sorted")
_SCAN_FILES = 2_000
"""Files looked at when a suggestion looks for the file a name stands for."""


def suggestion(expression: str, workspace: Path, private: Sequence[str]) -> str | None:
    """A runnable expression for what a refused one meant, with the workspace's file.

    Small models write ``max(temp_c)`` for a CSV column and ``len(users.csv)`` for a file:
    the expression they meant reads the one file that has that column (or that name).
    Only a suggestion for the model's next call: nothing is run here.
    """
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        return None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    known = ALLOWED_CALLS | FILE_NAMES | _bound_names(tree)
    files: list[str] | None = None  # the workspace is walked once, when a name needs it
    for node in ast.walk(tree):
        func = _enclosing_aggregate(node, parents)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id not in known:  # a file name written bare: numbers.txt
                files = _workspace_files(workspace, private) if files is None else files
                path = _named_file(files, f"{node.value.id}.{node.attr}")
                if path is not None:
                    return _checked(_over_file(func, path, workspace))
        elif isinstance(node, ast.Name) and node.id not in known and node.id.isidentifier():
            files = _workspace_files(workspace, private) if files is None else files
            found = _column_file(workspace, files, node.id)
            if found is not None:
                return _checked(_over_column(func, node.id, found))
    return None


_READ_AS = ("sum", "max", "min")
READ_AS_NOTE = " (read as "
"""How a result says what its expression was read as (``sum(numbers.txt) = 256 (read as ...)``)."""


def single_call(expression: str, names: Collection[str]) -> tuple[str, ast.expr] | None:
    """``(function, argument)`` of an expression that is one call of ``names``, one argument.

    ``sum(numbers.txt)`` is; ``sum(a) + 1``, ``max(a, b)``, ``sum(x, start=1)`` and text
    that does not parse are not.
    """
    try:
        call = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        return None
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in names
        and len(call.args) == 1
        and not call.keywords
    ):
        return call.func.id, call.args[0]
    return None


def reading(expression: str, workspace: Path, private: Sequence[str]) -> str | None:
    """The expression ``sum``/``max``/``min`` of one bare name means, if it means one.

    ``max(numbers.txt)`` is the largest number in the workspace's one file of that name
    (not a CSV file: which column would it be?), ``sum(qty)`` the sum of the column of the
    one CSV file that has it. Anything more (``len(users.csv) - 1``, two names) is not
    read: the refusal then suggests an expression for the model to write itself.
    """
    call = single_call(expression, _READ_AS)
    if call is None:
        return None
    (func, arg), known = call, ALLOWED_CALLS | FILE_NAMES
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
        if arg.value.id in known:
            return None
        path = _named_file(_workspace_files(workspace, private), f"{arg.value.id}.{arg.attr}")
        if path is None or path.lower().endswith(".csv"):
            return None
        return _checked(_over_file(func, path, workspace))
    if isinstance(arg, ast.Name) and arg.id not in known:
        found = _column_file(workspace, _workspace_files(workspace, private), arg.id)
        return _checked(_over_column(func, arg.id, found)) if found else None
    return None


def _enclosing_aggregate(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The aggregate (``sum``, ``max``, ...) whose call holds ``node`` (``sum`` if none)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _AGGREGATES:
                return node.func.id
    return "sum"


def _over_file(func: str, path: str, workspace: Path) -> str:
    if path.lower().endswith(".csv"):
        column = None if func == "len" else _numeric_column(workspace / path)
        return _over_column(func, column, path)
    if func == "len":
        return f"len(open({path!r}).read().splitlines())"
    return f"{func}(float(x) for x in open({path!r}).read().split())"


def _over_column(func: str, column: str | None, path: str) -> str:
    """``func`` over a CSV column of ``path``; its data rows counted for ``len`` or no column."""
    if func == "len" or column is None:
        return f"len(list(csv.DictReader(open({path!r}))))"
    return f"{func}(float(r[{column!r}]) for r in csv.DictReader(open({path!r})))"


def _checked(example: str) -> str | None:
    try:
        check(example, files=True)
    except CalculationError:
        return None
    return example


def _workspace_files(workspace: Path, private: Sequence[str]) -> list[str]:
    """Relative paths of plain files (hidden, private and linked ones left out), bounded."""
    out: list[str] = []
    root = workspace.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if not _hidden_or_private(d, private))
        for name in sorted(filenames):
            if _hidden_or_private(name, private) or Path(dirpath, name).is_symlink():
                continue  # a link may lead out of the workspace: never read for a hint
            out.append((rel_dir / name).as_posix())
            if len(out) >= _SCAN_FILES:
                return out
    return out


def _hidden_or_private(name: str, private: Sequence[str]) -> bool:
    return name.startswith(".") or any(fnmatch.fnmatch(name.lower(), p) for p in private)


def _named_file(files: list[str], name: str) -> str | None:
    """The one of ``files`` called ``name`` (its relative path), if exactly one."""
    found = [f for f in files if f.rsplit("/", 1)[-1] == name]
    return found[0] if len(found) == 1 else None


def _header(path: Path) -> list[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return [cell.strip() for cell in handle.readline().split(",")]
    except OSError:
        return []


def _column_file(workspace: Path, files: list[str], column: str) -> str | None:
    """The one CSV file among ``files`` with a column ``column``, if exactly one."""
    tables = [f for f in files if f.lower().endswith(".csv")]
    found = [f for f in tables if column in _header(workspace / f)]
    return found[0] if len(found) == 1 else None


def _numeric_column(path: Path) -> str | None:
    """The first column of a CSV file whose first data row holds a number."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            header, row = handle.readline(), handle.readline()
    except OSError:
        return None
    for name, cell in zip(header.split(","), row.split(","), strict=False):
        try:
            float(cell)
        except ValueError:
            continue
        return name.strip()
    return None
