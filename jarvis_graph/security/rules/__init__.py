"""The rule catalogue: one module per rule in this package, found by its file name.

A rule module ``c_gets.py`` (the rule id with ``_`` for ``-``) holds ``RULE`` (its metadata
and the calls it watches) and either its own check, a function named for the engine hook
that calls it, or ``EMITTED_BY``, the shared pass of the walk that reports it:

- ``on_call(scan, name, args, st)``: each call of a function the rule watches;
- ``on_dropped_result(scan, name, args, st)``: such a call made as a whole statement;
- ``on_assign(scan, lhs, rhs, st)``: each plain assignment ``lhs = rhs``;
- ``on_set(scan, name, rhs, literal, st)``: a local variable set to ``rhs``;
- ``on_condition(scan, cond, st)``: the condition of an ``if``/``while``/``for``;
- ``on_null_check(scan, name, var, st)``: a condition that checks ``name`` against NULL;
- ``on_use(scan, name, var, text, st, deref, callee, condition)``: a use of a variable
  whose facts a use can contradict (``deref``: it is dereferenced; ``callee``: it is passed
  to a function of the same file, judged there; ``condition``: the use is in a condition);
- ``on_arith(scan, text, st)``: a statement or initializer that may hold arithmetic;
- ``on_release(scan, name, var, kind, st)``: ``free``/``delete``/``delete[]`` of a variable;
- ``on_return(scan, returned, st, null_here)`` and ``on_function_end(scan)``: a ``return``
  and the end of the walk of a function;
- ``on_rust_file(rust)`` and ``on_rust_fn(rust, fn)``: a Rust file, each Rust function.

``scan`` is the function's walk (:class:`~jarvis_graph.security.c_walk.Walk`), ``rust`` the
file (:class:`~jarvis_graph.security.rust_text.RustSource`), ``st`` the statement (its
``line``). The text hooks run only when the text holds one of ``RULE.hints``. Beside each module, a
file of the same name (``c_gets.c``, ``.cpp`` or ``.rs``) holds the rule's cases: lines
marked ``// fire`` must be found by it, lines marked ``// no-fire`` must not.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

from jarvis_graph.security.model import Issue, Rule

HOOK_NAMES = (
    "on_call", "on_dropped_result", "on_assign", "on_set", "on_condition", "on_null_check",
    "on_use", "on_arith", "on_release", "on_return", "on_function_end", "on_rust_file",
    "on_rust_fn",
)  # fmt: skip
CONFIDENCE = {"high": 0.8, "medium": 0.6, "low": 0.3}
Hook = Callable[..., None]


def _load() -> dict[str, ModuleType]:
    """Rule id -> its module, for every module of this package."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule) or rule.id.replace("-", "_") != info.name:
            msg = f"rule module {info.name}: RULE must be a Rule whose id is {info.name!r} with '-'"
            raise ImportError(msg)
        found[rule.id] = module
    return found


MODULES = _load()
RULES: dict[str, Rule] = {rid: module.RULE for rid, module in MODULES.items()}
HOOKS: dict[str, tuple[tuple[Rule, Hook], ...]] = {
    hook: tuple((m.RULE, getattr(m, hook)) for m in MODULES.values() if hasattr(m, hook))
    for hook in HOOK_NAMES
}
# every C function some rule looks at (the walk skips calls of any other function)
WATCHED_CALLS = frozenset(name for rule in RULES.values() for name in rule.calls)
_PATTERNS = tuple(r.call_pattern for r in RULES.values() if r.call_pattern is not None)


@lru_cache(maxsize=8192)
def watched_by_pattern(name: str) -> bool:
    """Whether a rule watches ``name`` through its ``call_pattern`` (``execvp``...)."""
    return any(p.fullmatch(name) is not None for p in _PATTERNS)


@lru_cache(maxsize=8192)
def call_hooks(hook: str, name: str) -> tuple[Hook, ...]:
    """The ``on_call``/``on_dropped_result`` checks of the rules that watch ``name``."""
    return tuple(
        check
        for rule, check in HOOKS[hook]
        if name in rule.calls or (rule.call_pattern and rule.call_pattern.fullmatch(name))
    )


# hook -> (hints, check) of each rule with that hook (read on every statement: kept flat)
_GATED = {hook: tuple((r.hints, check) for r, check in found) for hook, found in HOOKS.items()}


def run_text_hooks(hook: str, text: str, *args: Any) -> None:
    """Run the ``hook`` checks whose rule has no hints or one of them in ``text``."""
    for hints, check in _GATED[hook]:
        if not hints:
            check(*args)
            continue
        for hint in hints:  # a loop, not any(): this runs for most statements
            if hint in text:
                check(*args)
                break


def make_issue(
    rule_id: str,
    *,
    language: str,
    file: str,
    line: int,
    evidence: str,
    detail: str,
    function: str = "",
    confidence: float | None = None,
    cwe: str | None = None,
) -> Issue:
    """An :class:`Issue` of a catalogue rule with the facts that made it fire."""
    rule = RULES[rule_id]
    return Issue(
        language=language,
        category=rule.category,
        pattern=rule.id,
        file=file,
        line=line,
        evidence=evidence.strip()[:200],
        description=f"{rule.title}: {detail}" if detail else rule.title,
        suggestion=rule.suggestion,
        confidence=CONFIDENCE[rule.severity] if confidence is None else confidence,
        severity=rule.severity,
        cwe=cwe or rule.cwe,
        function=function,
    )


__all__ = ["CONFIDENCE", "RULES", "Rule", "make_issue"]
