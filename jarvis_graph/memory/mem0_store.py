"""Long-term memory on a Mem0 / OpenMemory server, through its REST API.

With ``JARVIS_STORE_URL=mem0+http://host:8888`` (or ``mem0+https://``) the project and
global tiers live on a self-hosted Mem0 server instead of the local FAISS stores, the same
way ``postgresql://`` puts them in PostgreSQL: the router sees a LangGraph store (search,
put, get, delete by namespace) and the memory tools work unchanged. A project's other
records (the episodic archive's snippets, ratings) stay local: Mem0 holds memories only.
``JARVIS_STORE_KEY`` holds the server's API key (sent as a bearer token and as
``X-API-Key``); it is a secret like every variable named ``*_KEY``. ``JARVIS_STORE_TIMEOUT``
bounds each request (15 s).

Endpoints used (the Mem0 OSS server's): ``POST /memories`` with ``infer: false`` (the text
is stored as written, not rewritten by the server's model), ``GET /memories?user_id=``,
``POST /search``, ``DELETE /memories/{id}``. A Jarvis item is one Mem0 memory: its text is
the item's ``content``, and ``metadata`` holds its namespace, key and whole value. Each
project (and the global tier) is one Mem0 ``user_id``; ``agent_id`` is ``jarvis``.

A put first deletes every memory with the item's namespace and key, so a put that failed
half way and was tried again leaves one memory, never two. A server that is down, refuses
the key or is slow raises :class:`MemoryStoreError` with the reason: a memory tool reports
it as its error (one warning line for the user) and the run goes on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from collections.abc import Iterable
from typing import Any

import httpx
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from jarvis_graph.memory.filters import listed_namespaces, matches_filter
from jarvis_graph.memory.records import MemoryStoreError
from jarvis_graph.secrets import redact_url, redact_urls

SCHEME = "mem0+"
KEY_VAR = "JARVIS_STORE_KEY"
TIMEOUT = 15.0
TIMEOUT_VAR = "JARVIS_STORE_TIMEOUT"
"""Seconds one request may take (default :data:`TIMEOUT`)."""
AGENT = "jarvis"


def is_mem0_url(url: str) -> bool:
    """Whether a store URL names a Mem0 server (``mem0+http(s)://``)."""
    return url.startswith(SCHEME)


class Mem0Store(BaseStore):
    """A LangGraph store over a Mem0 server's REST API (see the module docstring)."""

    def __init__(self, url: str, key: str | None = None, timeout: float = TIMEOUT) -> None:
        self.base_url = url.removeprefix(SCHEME).rstrip("/")
        key = os.environ.get(KEY_VAR) if key is None else key
        if timeout == TIMEOUT and os.environ.get(TIMEOUT_VAR):
            timeout = float(os.environ[TIMEOUT_VAR])
        headers = {"Accept": "application/json"}
        if key:
            headers |= {"Authorization": f"Bearer {key}", "X-API-Key": key}
        self.timeout = timeout
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation against the server, in order."""
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = self._matching(tuple(op.namespace), op.key)
            return _item(found[0]) if found else None
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            user = _user_of_conditions(op)
            names = [_namespace(m) for m in self._all(user)] if user else []
            return listed_namespaces(op, [n for n in names if n is not None])
        msg = f"unknown store operation {type(op).__name__}"
        raise ValueError(msg)

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        for memory in self._matching(namespace, op.key):
            self._request("DELETE", f"/memories/{memory['id']}")
        if op.value is None:
            return
        value = dict(op.value)
        text = value.get("content")
        body = {
            "messages": [{"role": "user", "content": str(text or json.dumps(value))}],
            "user_id": _user(namespace),
            "agent_id": AGENT,
            "infer": False,
            "metadata": {
                "jarvis_namespace": json.dumps(list(namespace)),
                "jarvis_key": op.key,
                "jarvis_value": json.dumps(value, default=str),
            },
        }
        self._request("POST", "/memories", json=body)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        user = _user(prefix) if len(prefix) >= 2 else None
        if user is None:
            return []
        if op.query:
            body = {"query": op.query, "user_id": user, "agent_id": AGENT}
            found = _results(self._request("POST", "/search", json=body))
        else:
            found = self._all(user)
        hits = []
        for memory in found:
            namespace = _namespace(memory)
            if namespace is None or namespace[: len(prefix)] != prefix:
                continue
            item = _item(memory)
            if item is None or not matches_filter(item.value, op.filter):
                continue
            score = memory.get("score") if op.query else None
            hits.append(
                SearchItem(
                    item.namespace, item.key, item.value, item.created_at, item.updated_at,
                    float(score) if isinstance(score, int | float) else None,
                )
            )  # fmt: skip
        return hits[op.offset : op.offset + op.limit]

    def _matching(self, namespace: tuple[str, ...], key: str) -> list[dict[str, Any]]:
        return [
            m
            for m in self._all(_user(namespace))
            if _namespace(m) == namespace and (m.get("metadata") or {}).get("jarvis_key") == key
        ]

    def _all(self, user: str) -> list[dict[str, Any]]:
        params = {"user_id": user, "agent_id": AGENT}
        return _results(self._request("GET", "/memories", params=params))

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        where = f"the memory server at {redact_url(self.base_url)}"
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            msg = f"{where} did not answer within {self.timeout:g} s"
            raise MemoryStoreError(msg) from None
        except httpx.HTTPError as exc:
            reason = redact_urls(str(exc)) or type(exc).__name__
            msg = f"{where} cannot be reached ({reason}); memory is unavailable"
            raise MemoryStoreError(msg) from None
        if response.status_code in (401, 403):
            msg = (
                f"{where} refused the request (HTTP {response.status_code}): check the key in "
                f"${KEY_VAR}"
            )
            raise MemoryStoreError(msg)
        if response.status_code == 404 and method == "DELETE":
            return None  # already gone
        if response.status_code >= 400:
            detail = redact_urls(response.text.strip()[:200])
            msg = f"{where} answered HTTP {response.status_code} to {method} {path}: {detail}"
            raise MemoryStoreError(msg)
        try:
            return response.json() if response.content else None
        except ValueError:
            msg = f"{where} did not answer JSON to {method} {path} (is it a Mem0 server?)"
            raise MemoryStoreError(msg) from None


def _user(namespace: tuple[str, ...]) -> str:
    """The Mem0 ``user_id`` of a namespace: its project, or the global tier."""
    depth = 3 if namespace[:2] == ("jarvis", "project") else 2
    return "/".join(namespace[:depth])


def _user_of_conditions(op: ListNamespacesOp) -> str | None:
    for condition in op.match_conditions or ():
        path = tuple(condition.path)
        if condition.match_type == "prefix" and len(path) >= 2 and "*" not in path[:3]:
            return _user(path)
    return None


def _results(answer: Any) -> list[dict[str, Any]]:
    """The memories of an answer (``{"results": [...]}`` or a bare list)."""
    rows = answer.get("results") if isinstance(answer, dict) else answer
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _namespace(memory: dict[str, Any]) -> tuple[str, ...] | None:
    raw = (memory.get("metadata") or {}).get("jarvis_namespace")
    try:
        names = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return tuple(str(n) for n in names) if isinstance(names, list) else None


def _item(memory: dict[str, Any]) -> Item | None:
    meta = memory.get("metadata") or {}
    namespace = _namespace(memory)
    try:
        value = json.loads(meta.get("jarvis_value", ""))
    except ValueError:
        return None
    if namespace is None or not isinstance(value, dict):
        return None
    created = _time(memory.get("created_at"))
    return Item(
        value=value,
        key=str(meta.get("jarvis_key", "")),
        namespace=namespace,
        created_at=created,
        updated_at=_time(memory.get("updated_at")) if memory.get("updated_at") else created,
    )


def _time(raw: Any) -> dt.datetime:
    try:
        stamp = dt.datetime.fromisoformat(str(raw))
    except ValueError:
        return dt.datetime.now(dt.UTC)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)
