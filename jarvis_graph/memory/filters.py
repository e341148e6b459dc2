"""Filter and namespace matching with the semantics of LangGraph's ``InMemoryStore``.

``InMemoryStore`` is the reference: a filter value that is a mapping with ``$``-keys is a
set of operators (``$eq $ne $gt $gte $lt $lte``), any other mapping matches nested keys,
a list matches element by element, and anything else must be equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.store.base import Item, ListNamespacesOp, MatchCondition, SearchItem

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def matches_filter(value: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    """Whether a stored value satisfies every condition of ``flt``."""
    if not flt:
        return True
    return all(_compare(value.get(key), want) for key, want in flt.items())


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_apply(have, op, arg) for op, arg in want.items())
        if not isinstance(have, dict):
            return False
        return all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(want)
            and all(_compare(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _apply(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    if op == "$gt":
        return float(have) > float(arg)
    if op == "$gte":
        return float(have) >= float(arg)
    if op == "$lt":
        return float(have) < float(arg)
    if op == "$lte":
        return float(have) <= float(arg)
    msg = f"unsupported filter operator {op!r}; use one of {', '.join(OPERATORS)}"
    raise ValueError(msg)


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` matches a prefix or suffix condition (``*`` matches any label)."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        msg = f"unsupported namespace match type {condition.match_type!r}; use prefix or suffix"
        raise ValueError(msg)
    return all(want == "*" or have == want for have, want in pairs)


def listed_namespaces(
    op: ListNamespacesOp, namespaces: Iterable[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    """The answer to ``op`` over ``namespaces``: matched, cut to ``max_depth``, sorted, paged."""
    conditions = op.match_conditions or ()
    kept = {ns for ns in namespaces if all(namespace_matches(c, ns) for c in conditions)}
    if op.max_depth is not None:
        kept = {ns[: op.max_depth] for ns in kept}
    return sorted(kept)[op.offset : op.offset + op.limit]


def with_namespace(item: Item, namespace: tuple[str, ...]) -> Item:
    """``item`` (a ``SearchItem`` stays one, with its score) under another namespace."""
    if isinstance(item, SearchItem):
        return SearchItem(
            namespace, item.key, item.value, item.created_at, item.updated_at, item.score
        )
    return Item(
        value=item.value,
        key=item.key,
        namespace=namespace,
        created_at=item.created_at,
        updated_at=item.updated_at,
    )
