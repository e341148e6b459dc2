"""Rule ``c-weak-prng``: a ``rand()`` value used as a key, token, nonce, salt or seed.

``rand()``-family values are predictable. They are fine for a game or a loop and wrong where
a secret is made, so the rule fires only where such a value reaches a secret: directly or
through variables (the walk's "a random value" taint), into a variable or buffer named like
a secret (``session_key = r``, ``token[i] = rand() % 26``), or into the key, IV, salt or
seed argument of a cryptographic API (``AES_set_encrypt_key``, ``RAND_seed``, ``crypt``...).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import call_names, words
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Literal, Statement
    from jarvis_graph.security.c_walk import Walk

RANDOM_CALLS = frozenset({"rand", "random", "lrand48", "mrand48", "drand48", "erand48"})
# read lowercased: a case-insensitive alternation costs four times as much, on every assignment
_SECRET_LOWER = re.compile(
    r"key|token|nonce|salt|secret|passw|pwd|session|\biv\b|otp|challenge|cookie"
)


def secret_name(name: str) -> bool:
    """Whether ``name`` (or the text of an element or member) is named like a secret."""
    return _SECRET_LOWER.search(name.lower()) is not None


_STORE_BASE = re.compile(r"\s*\**\s*([A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*)\s*\[")
_MEMBER_STORE = re.compile(r"\s*[A-Za-z_]\w*(?:\s*(?:->|\.)\s*([A-Za-z_]\w*))+\s*$")
# argument positions (0-based) of cryptographic APIs that must be secret or unpredictable
SECRET_ARGS: dict[str, tuple[int, ...]] = {
    "RAND_seed": (0,),
    "RAND_add": (0,),
    "AES_set_encrypt_key": (0,),
    "AES_set_decrypt_key": (0,),
    "DES_set_key": (0,),
    "DES_set_key_checked": (0,),
    "BF_set_key": (2,),
    "RC4_set_key": (2,),
    "EVP_EncryptInit": (2, 3),
    "EVP_DecryptInit": (2, 3),
    "EVP_EncryptInit_ex": (3, 4),
    "EVP_DecryptInit_ex": (3, 4),
    "EVP_CipherInit_ex": (3, 4),
    "HMAC": (1,),
    "HMAC_Init_ex": (1,),
    "PKCS5_PBKDF2_HMAC": (2,),
    "crypt": (1,),
    "crypt_r": (1,),
    "mbedtls_aes_setkey_enc": (1,),
    "mbedtls_aes_setkey_dec": (1,),
    "CryptImportKey": (1,),
}

RULE = Rule(
    "c-weak-prng",
    "c",
    "weak_random",
    "CWE-338",
    "medium",
    "a predictable rand() value made into a secret",
    "use a CSPRNG (getrandom, arc4random_buf, RAND_bytes, BCryptGenRandom)",
    calls=frozenset(SECRET_ARGS),
)


def random_source(scan: Walk, text: str) -> str | None:
    """What makes ``text`` a rand() value: the call's name or the variable holding one."""
    called = call_names(text) & RANDOM_CALLS
    if called:
        return f"{min(called)}()"
    for word in words(text):
        var = scan.env.get(word)
        if var is not None and var.taint == "a random value":
            return f"'{word}' (a rand() value)"
    return None


def on_set(scan: Walk, name: str, rhs: str, literal: Literal | None, st: Statement) -> None:
    """A variable named like a secret gets a rand() value."""
    if literal is None and secret_name(name):
        source = random_source(scan, rhs)
        if source:
            scan.report(RULE.id, st.line, f"'{name}' is set from {source}", name)


def on_assign(scan: Walk, lhs: str, rhs: str, st: Statement) -> None:
    """An element or member named like a secret gets a rand() value."""
    if not secret_name(lhs):  # most assignments: one search, nothing more
        return
    m = _STORE_BASE.match(lhs) or _MEMBER_STORE.match(lhs)
    target = m.group(1) if m else None
    if target is None or not secret_name(target.split(".")[-1].split(">")[-1]):
        return
    source = random_source(scan, rhs)
    if source:
        shown = " ".join(target.split())
        scan.report(RULE.id, st.line, f"'{shown}' is filled from {source}", shown)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """A key, IV, salt or seed argument of a cryptographic API holds a rand() value."""
    for i in SECRET_ARGS.get(name, ()):
        if i >= len(args):
            continue
        source = random_source(scan, args[i])  # a variable in it (``&seed``) included
        if source:
            scan.report(RULE.id, st.line, f"{name} gets {source} as its key or seed", name)
