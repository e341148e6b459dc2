"""MemoryStore: the one LangGraph store of Jarvis memory, routing namespaces to backends.

Graphs are compiled with ``store=memory_store()`` and ``langgraph.json`` names the same
function, so tools and nodes reach memory through ``runtime.store`` (or
``langgraph.config.get_store()``) in CLI runs and ``langgraph dev`` runs alike. The first
label of a namespace says where an item lives:

- ``("short_term", <thread>, ...)``: the process-wide ``InMemoryStore``, namespace as is;
- ``("project_long_term", <workspace>, ...)``: the :class:`FaissStore` in
  ``<workspace>/.jarvis/memory/`` under ``("project_long_term", ...)``;
- ``("project_store", <workspace>, ...)``: that same store under the rest of the namespace
  (the episodic archive and the force-save markers live there);
- ``("global_long_term", ...)``: the :class:`FaissStore` in
  ``~/.jarvis/memory/global_long_term/``, namespace as is.

With a shared store (``JARVIS_STORE_URL``), the tiers live there. On PostgreSQL the rest of
a project store does too; a Mem0 server holds memories only (each is shown to people, in
OpenMemory), so the rest (the episodic archive's snippets, markers, ratings, the
documents index) stays in the project's FAISS store.

``<workspace>`` is the workspace path encoded by :func:`namespace_label`. The namespaces
inside each FAISS store are the ones written before this router existed, so stores on
disk read the same. Reads of a store whose file does not exist return nothing and create
nothing; only a write opens it. FAISS and numpy load on the first operation, not here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchOp,
    validate_op_namespace,
)

from jarvis_graph.config import jarvis_home
from jarvis_graph.memory.filters import listed_namespaces, with_namespace

SHORT_TERM = "short_term"
PROJECT = "project_long_term"
PROJECT_STORE = "project_store"
GLOBAL = "global_long_term"
ROOTS = (SHORT_TERM, PROJECT, PROJECT_STORE, GLOBAL)
_ALL = 1_000_000_000
"""Limit of the per-backend reads a fanned-out request merges (they are cut after)."""


def namespace_label(name: str) -> str:
    """``name`` (a folder name, a path, a thread id: user input) as a namespace label.

    LangGraph's stores join labels with ``.`` and refuse labels holding one, so ``.`` and
    the escape character ``%`` are percent-encoded: reversible (:func:`label_name`), and
    every name without them (most) is its own label.
    """
    return name.replace("%", "%25").replace(".", "%2E") or "%"


def label_name(label: str) -> str:
    """The name :func:`namespace_label` encoded as ``label``."""
    if label == "%":
        return ""
    return label.replace("%2E", ".").replace("%25", "%")


class _Backend(NamedTuple):
    """One store behind the router: the short-term store (``folder`` None) or a folder."""

    folder: Path | None
    workspace: str = ""
    """Label of the workspace of a project store ('' for the others)."""
    local: bool = False
    """The folder's own store even when a shared store is set (see the module docstring)."""


class _Part(NamedTuple):
    """An op as one backend runs it, and how its namespaces read from outside."""

    backend: _Backend
    op: Op
    outer: Callable[[tuple[str, ...]], tuple[str, ...]]


def _same(namespace: tuple[str, ...]) -> tuple[str, ...]:
    return namespace


def _store_outer(workspace: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """Inner namespaces of a project store below ``("project_store", <workspace>)``."""

    def outer(inner: tuple[str, ...]) -> tuple[str, ...]:
        return (PROJECT_STORE, workspace, *inner)

    return outer


def _project_outer(workspace: str) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """Inner namespaces of a project store as the router lists them (tier first)."""

    def outer(inner: tuple[str, ...]) -> tuple[str, ...]:
        if inner[:1] == (PROJECT,):
            return (PROJECT, workspace, *inner[1:])
        return (PROJECT_STORE, workspace, *inner)

    return outer


class MemoryStore(BaseStore):
    """A LangGraph store over the three memory tiers (see the module docstring).

    It holds no state of its own: the FAISS stores are the process-wide ones of
    :func:`jarvis_graph.memory.backends.open_store` (closed by ``close_stores()``), so any
    number of instances see the same items.
    """

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``; each backend runs its share as one batch, results keep op order."""
        ops = list(ops)
        plans = [self._plan(op) for op in ops]
        shares: dict[_Backend, list[tuple[int, int]]] = {}
        for n, parts in enumerate(plans):
            for m, part in enumerate(parts):
                shares.setdefault(part.backend, []).append((n, m))
        answers: dict[tuple[int, int], Result] = {}
        for backend, where in shares.items():
            store = _open(backend, write=any(_writes(plans[n][m].op) for n, m in where))
            if store is None:
                continue  # nothing stored there yet: reads find nothing, deletes do nothing
            results = store.batch([plans[n][m].op for n, m in where])
            answers.update(zip(where, results, strict=True))
        pairs = enumerate(zip(ops, plans, strict=True))
        return [_combine(op, parts, n, answers) for n, (op, parts) in pairs]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (SQLite and FAISS calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _plan(self, op: Op) -> list[_Part]:
        validate_op_namespace(op)
        if isinstance(op, GetOp | PutOp):
            backend, inner, outer = _route(op.namespace)
            return [_Part(backend, op._replace(namespace=inner), outer)]
        if isinstance(op, SearchOp):
            return _search_parts(op)
        if isinstance(op, ListNamespacesOp):
            return [
                _Part(b, ListNamespacesOp(limit=_ALL), _outer_of(b))
                for b in _known_backends(op.match_conditions or ())
            ]
        msg = (
            f"unknown store operation {type(op).__name__}; "
            "use GetOp, PutOp, SearchOp or ListNamespacesOp"
        )
        raise ValueError(msg)


def _route(
    namespace: tuple[str, ...], *, whole_store: bool = False
) -> tuple[_Backend, tuple[str, ...], Callable[[tuple[str, ...]], tuple[str, ...]]]:
    """The backend of a namespace, the namespace inside it, and the way back out.

    ``whole_store``: ``("project_store", <workspace>)`` alone names the whole project
    store (a search prefix); a get or put needs a namespace below it.
    """
    root = namespace[0] if namespace else ""
    if root == SHORT_TERM:
        return _Backend(None), namespace, _same
    if root == GLOBAL:
        return _Backend(global_memory_dir()), namespace, _same
    if root in (PROJECT, PROJECT_STORE) and len(namespace) >= 2:
        workspace = namespace[1]
        backend = _Backend(_project_dir(workspace), workspace)
        if root == PROJECT:
            return backend, (PROJECT, *namespace[2:]), _project_outer(workspace)
        if namespace[2:] or whole_store:
            backend = backend._replace(local=_records_stay_local())
            return backend, namespace[2:], _store_outer(workspace)
    msg = (
        f"memory namespace {namespace} has no store; start it with ('short_term', <thread>), "
        "('project_long_term', <workspace>), ('project_store', <workspace>, ...) or "
        "('global_long_term',), the workspace path encoded by namespace_label()"
    )
    raise ValueError(msg)


def _search_parts(op: SearchOp) -> list[_Part]:
    """A search in the one store its prefix names, or in every store under a short prefix."""
    prefix = tuple(op.namespace_prefix)
    if prefix and (len(prefix) >= 2 or prefix[0] not in (PROJECT, PROJECT_STORE)):
        backend, inner, outer = _route(prefix, whole_store=True)
        return [_Part(backend, op._replace(namespace_prefix=inner), outer)]
    wide = op._replace(offset=0, limit=max(0, op.offset + op.limit))
    local = _records_stay_local()
    parts = []
    for backend in _known_backends(()):
        if not prefix:
            parts.append(_Part(backend, wide._replace(namespace_prefix=()), _outer_of(backend)))
        elif backend.workspace and prefix == (PROJECT,) and not backend.local:
            tier = wide._replace(namespace_prefix=(PROJECT,))
            parts.append(_Part(backend, tier, _project_outer(backend.workspace)))
        elif backend.workspace and prefix == (PROJECT_STORE,) and backend.local == local:
            whole = wide._replace(namespace_prefix=())
            parts.append(_Part(backend, whole, _store_outer(backend.workspace)))
    return parts


def _outer_of(backend: _Backend) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    if backend.local:
        return _store_outer(backend.workspace)
    return _project_outer(backend.workspace) if backend.workspace else _same


def _known_backends(conditions: Iterable[MatchCondition]) -> list[_Backend]:
    """The stores a request over many namespaces reads: those that exist or are open.

    A project store is known when this process opened it, or when a prefix condition
    names its workspace.
    """
    # deferred: the backends load numpy and FAISS, which wait for the first operation
    from jarvis_graph.memory.backends import open_folders

    projects = {
        folder
        for folder in open_folders()
        if folder.name == "memory" and folder.parent.name == ".jarvis"
    }
    for cond in conditions:
        path = tuple(cond.path)
        if cond.match_type == "prefix" and path[:1] in ((PROJECT,), (PROJECT_STORE,)):
            if len(path) >= 2 and path[1] != "*":
                projects.add(_project_dir(path[1]).resolve())
    backends = [_Backend(None), _Backend(global_memory_dir())]
    local = _records_stay_local()
    for folder in sorted(projects):
        workspace = namespace_label(str(folder.parent.parent))
        backends.append(_Backend(folder, workspace))
        if local:  # the project's own records, beside its memories on the server
            backends.append(_Backend(folder, workspace, local=True))
    return backends


def _records_stay_local() -> bool:
    """Whether a project's records other than memories stay on local disk (a Mem0 server)."""
    # deferred: the shared stores' modules load their clients (httpx, psycopg) when used
    from jarvis_graph.memory.mem0_store import is_mem0_url
    from jarvis_graph.memory.pg_store import store_url

    return is_mem0_url(store_url() or "")


def _open(backend: _Backend, *, write: bool) -> BaseStore | None:
    """The store of ``backend`` (``None``: its file does not exist and this only reads)."""
    # deferred: the backends load numpy and FAISS, which wait for the first operation
    from jarvis_graph.memory.backends import (
        existing_store,
        open_store,
        remember_folder,
        short_term_store,
    )
    from jarvis_graph.memory.pg_store import prefix_of, shared_store, store_url

    if backend.folder is None:
        return short_term_store()
    url = store_url()
    if url and not backend.local:  # the shared store: every folder is a prefix in it
        remember_folder(backend.folder)
        return PrefixedStore(shared_store(url), prefix_of(backend.workspace))
    return open_store(backend.folder) if write else existing_store(backend.folder)


def _writes(op: Op) -> bool:
    return isinstance(op, PutOp) and op.value is not None


def _combine(op: Op, parts: list[_Part], n: int, answers: dict[tuple[int, int], Result]) -> Result:
    """The answer to ``op`` from its parts' answers, in the router's namespaces."""
    got = [(part, answers.get((n, m))) for m, part in enumerate(parts)]
    if isinstance(op, GetOp):
        part, item = got[0]
        return _item_out(item, part.outer) if isinstance(item, Item) else None
    if isinstance(op, SearchOp):
        found = [_item_out(i, part.outer) for part, items in got for i in _listed(items)]
        if len(parts) == 1:
            return found
        if op.query:
            found.sort(key=lambda i: -1e9 if i.score is None else -i.score)
        return found[max(0, op.offset) : max(0, op.offset) + max(0, op.limit)]
    if isinstance(op, ListNamespacesOp):
        outside = (part.outer(ns) for part, names in got for ns in _listed(names))
        return listed_namespaces(op, outside)
    return None


def _listed(result: Result) -> list[Any]:
    """A search's or listing's answer as a list (none from a store that does not exist)."""
    return result if isinstance(result, list) else []


def _item_out(item: Any, outer: Callable[[tuple[str, ...]], tuple[str, ...]]) -> Any:
    namespace = outer(tuple(item.namespace))
    return item if namespace == tuple(item.namespace) else with_namespace(item, namespace)


def project_memory_dir(workspace: Path) -> Path:
    """Where a project's long-term memory is stored."""
    return workspace / ".jarvis" / "memory"


def global_memory_dir() -> Path:
    """Where the user's global long-term memory is stored."""
    return jarvis_home() / "memory" / GLOBAL


def _project_dir(workspace: str) -> Path:
    return project_memory_dir(Path(label_name(workspace)))


_default: MemoryStore | None = None
_default_lock = threading.Lock()


def memory_store() -> MemoryStore:
    """The process-wide memory store (what graphs compile with and ``langgraph.json`` names)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MemoryStore()
        return _default


def run_store() -> BaseStore:
    """The store of the graph run this call belongs to, else :func:`memory_store`."""
    # deferred: langgraph.config is only needed when a call asks for the run's store
    from langgraph.config import get_store

    try:
        store = get_store()
    except (RuntimeError, KeyError, AttributeError):  # not inside a graph run
        store = None
    return store if store is not None else memory_store()


def workspace_namespace(workspace: Path) -> tuple[str, str]:
    """``("project_long_term", <workspace label>)``: the project tier of ``workspace``."""
    return (PROJECT, namespace_label(str(workspace.resolve())))


def project_store(workspace: Path, store: BaseStore | None = None) -> BaseStore:
    """The whole project store of ``workspace`` as its own store, through ``store``.

    Namespaces are those inside the project's store file (``("episodic", ...)``,
    ``("force_save_memory",)``); ``store`` defaults to :func:`run_store`.
    """
    prefix = (PROJECT_STORE, namespace_label(str(workspace.resolve())))
    return PrefixedStore(store if store is not None else run_store(), prefix)


class PrefixedStore(BaseStore):
    """A view of ``store`` where every namespace is read below ``prefix``.

    Args:
        store: The store holding the items.
        prefix: Labels put in front of every namespace (and taken off the results).
    """

    def __init__(self, store: BaseStore, prefix: tuple[str, ...]) -> None:
        self.store = store
        self.prefix = prefix

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in ``store`` below the prefix."""
        ops = list(ops)
        results = self.store.batch([self._inner(op) for op in ops])
        return [self._outer(op, r) for op, r in zip(ops, results, strict=True)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` through the store's own ``abatch``."""
        ops = list(ops)
        results = await self.store.abatch([self._inner(op) for op in ops])
        return [self._outer(op, r) for op, r in zip(ops, results, strict=True)]

    def _inner(self, op: Op) -> Op:
        if isinstance(op, GetOp | PutOp):
            return op._replace(namespace=(*self.prefix, *op.namespace))
        if isinstance(op, SearchOp):
            return op._replace(namespace_prefix=(*self.prefix, *op.namespace_prefix))
        if isinstance(op, ListNamespacesOp):
            conditions = [
                c._replace(path=(*self.prefix, *c.path)) if c.match_type == "prefix" else c
                for c in op.match_conditions or ()
            ]
            conditions.append(MatchCondition("prefix", self.prefix))
            depth = None if op.max_depth is None else op.max_depth + len(self.prefix)
            return op._replace(match_conditions=tuple(conditions), max_depth=depth)
        msg = f"unknown store operation {type(op).__name__}"
        raise ValueError(msg)

    def _outer(self, op: Op, result: Result) -> Result:
        n = len(self.prefix)
        if isinstance(op, ListNamespacesOp):
            return [tuple(ns[n:]) for ns in _listed(result)]
        if isinstance(result, list):
            return [_item_out(i, lambda ns: ns[n:]) for i in result]
        if isinstance(result, Item):
            return _item_out(result, lambda ns: ns[n:])
        return result
