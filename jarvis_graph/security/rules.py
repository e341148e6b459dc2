"""The rule catalogue: id -> category, CWE, severity, title and fix advice."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_graph.security.model import Issue


@dataclass(frozen=True)
class Rule:
    """Metadata of one rule (what SARIF lists under ``tool.driver.rules``)."""

    id: str
    language: str
    category: str
    cwe: str
    severity: str
    title: str
    suggestion: str


_C = [
    ("c-copy-overflow", "buffer_overflow", "CWE-787", "high",
     "copy or write larger than the destination buffer",
     "bound the copy by the destination's size (sizeof dest, or the allocation size)"),
    ("c-read-overflow", "buffer_overread", "CWE-126", "high",
     "read past the end of the source buffer",
     "bound the read by the source's size, not the destination's"),
    ("c-index-unchecked", "buffer_overflow", "CWE-129", "high",
     "array index from outside data without an upper-bound check",
     "check 0 <= index < number of elements before indexing"),
    ("c-index-out-of-range", "buffer_overflow", "CWE-787", "high",
     "constant array index outside the buffer",
     "use an index below the number of elements"),
    ("c-format-nonliteral", "format_string", "CWE-134", "high",
     "format string comes from outside data",
     'pass the data as an argument: printf("%s", data)'),
    ("c-format-param", "format_string", "CWE-134", "low",
     "non-literal format string of unknown origin",
     'use a literal format string and pass the text as an argument'),
    ("c-command-injection", "command_injection", "CWE-78", "high",
     "shell command built from outside data",
     "avoid the shell: exec a fixed program with an argument vector; validate the input"),
    ("c-command-nonliteral", "command_injection", "CWE-78", "low",
     "shell command that is not a literal",
     "avoid the shell or build the command from validated parts"),
    ("c-int-overflow", "integer_overflow", "CWE-190", "medium",
     "integer arithmetic that can overflow its type",
     "check the operand against the type's limit before the operation"),
    ("c-unchecked-return", "unchecked_result", "CWE-252", "medium",
     "result of an I/O call is ignored",
     "check the return value and handle the failure"),
    ("c-unchecked-alloc", "unchecked_result", "CWE-690", "medium",
     "allocation result used without a NULL check",
     "check the pointer against NULL before using it"),
    ("c-leak", "memory_leak", "CWE-401", "medium",
     "allocated memory is neither freed, returned nor stored",
     "free the memory on every path out of the function"),
    ("c-realloc-leak", "memory_leak", "CWE-401", "medium",
     "realloc's result replaces the pointer it resizes: the old block leaks if it fails",
     "assign realloc's result to a temporary, check it, then replace the pointer"),
    ("c-double-free", "double_free", "CWE-415", "high",
     "memory freed twice", "free once and set the pointer to NULL after freeing"),
    ("c-use-after-free", "use_after_free", "CWE-416", "high",
     "pointer used after its memory was freed",
     "do not use the pointer after free; set it to NULL when freeing"),
    ("c-mismatched-free", "allocation_mismatch", "CWE-762", "high",
     "memory released with a routine that does not match its allocation",
     "malloc pairs with free, new with delete, new[] with delete[]"),
    ("c-free-nonheap", "free_nonheap", "CWE-590", "high",
     "free/delete of memory that is not on the heap",
     "only free memory obtained from malloc/new"),
    ("c-null-deref", "null_dereference", "CWE-476", "high",
     "pointer set to NULL is dereferenced", "check the pointer before dereferencing it"),
    ("c-deref-before-check", "null_dereference", "CWE-476", "medium",
     "pointer dereferenced before it is checked against NULL",
     "move the NULL check before the first dereference"),
    ("c-bitwise-null-check", "null_dereference", "CWE-476", "high",
     "NULL check combined with '&' (no short circuit) before a dereference",
     "use '&&' so the dereference only runs when the pointer is not NULL"),
    ("c-uninitialized", "uninitialized", "CWE-457", "high",
     "variable or array element read before it is initialized",
     "initialize the variable (all elements) before reading it"),
    ("c-gets", "unsafe_api", "CWE-242", "high",
     "gets() cannot bound its input", "use fgets(buf, sizeof buf, stdin)"),
    ("c-scanf-width", "buffer_overflow", "CWE-120", "high",
     "scanf %s/%[ without a field width", "give a width: %99s for a 100-byte buffer"),
    ("c-weak-prng", "weak_random", "CWE-338", "medium",
     "rand()/random() used for a secret value", "use a CSPRNG (getrandom, arc4random)"),
    ("c-hardcoded-credential", "hardcoded_secret", "CWE-798", "high",
     "credential or key written in the source",
     "read it from a protected configuration or secret store"),
    ("c-unsafe-string-api", "unsafe_api", "CWE-120", "low",
     "unbounded string copy whose sizes the function does not show",
     "use a bounded copy (snprintf, strlcpy) with the destination size"),
]  # fmt: skip
_RUST = [
    ("rust-unsafe-block", "unsafe_code", "CWE-242", "low",
     "unsafe block without a SAFETY comment",
     "keep unsafe minimal and document the invariant in a // SAFETY: comment"),
    ("rust-raw-deref", "raw_pointer", "CWE-822", "high",
     "raw pointer dereferenced without a null check",
     "check the pointer (is_null / NonNull) or use a reference"),
    ("rust-transmute", "unsafe_cast", "CWE-843", "high",
     "mem::transmute reinterprets memory", "use from_ne_bytes, as casts or TryFrom"),
    ("rust-from-raw-parts", "raw_pointer", "CWE-119", "high",
     "slice built from a raw pointer and length",
     "check the pointer is non-null, aligned and the length in bounds"),
    ("rust-ffi-unwrap", "unchecked_result", "CWE-252", "medium",
     "unwrap/expect on a value from FFI", "handle the error instead of panicking across FFI"),
    ("rust-mem-forget", "memory_leak", "CWE-401", "medium",
     "mem::forget leaks the value", "use ManuallyDrop or into_raw with a matching from_raw"),
    ("rust-static-mut", "data_race", "CWE-362", "medium",
     "static mut is shared mutable state", "use an atomic, Mutex or OnceLock"),
    ("rust-unchecked-extern", "unchecked_result", "CWE-252", "medium",
     "result of an extern function is ignored", "check the returned status code"),
]  # fmt: skip

RULES: dict[str, Rule] = {
    r[0]: Rule(r[0], "rust" if r[0].startswith("rust") else "c", *r[1:]) for r in (*_C, *_RUST)
}

CONFIDENCE = {"high": 0.8, "medium": 0.6, "low": 0.3}


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
