"""Rule ``c-hardcoded-key``: a string literal of the source used as a cryptographic key.

The literal reaches the key (or IV) parameter of a cipher, MAC or database-encryption API
(``AES_set_encrypt_key``, ``EVP_EncryptInit_ex``, ``HMAC``, ``CryptHashData`` of a key
derivation, ``sqlite3_key``...) in place, through an object-like macro or through a
variable or buffer that holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import literal_argument
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

# API -> 0-based positions of its key arguments
KEY_ARGS: dict[str, tuple[int, ...]] = {
    "AES_set_encrypt_key": (0,),
    "AES_set_decrypt_key": (0,),
    "DES_set_key": (0,),
    "DES_set_key_checked": (0,),
    "DES_string_to_key": (0,),
    "BF_set_key": (2,),
    "RC4_set_key": (2,),
    "EVP_EncryptInit": (2,),
    "EVP_DecryptInit": (2,),
    "EVP_EncryptInit_ex": (3,),
    "EVP_DecryptInit_ex": (3,),
    "EVP_CipherInit_ex": (3,),
    "HMAC": (1,),
    "HMAC_Init_ex": (1,),
    "mbedtls_aes_setkey_enc": (1,),
    "mbedtls_aes_setkey_dec": (1,),
    "mbedtls_md_hmac_starts": (1,),
    "wc_AesSetKey": (1,),
    "sqlite3_key": (1,),
    "sqlite3_rekey": (1,),
    "CryptHashData": (1,),
}

RULE = Rule(
    "c-hardcoded-key",
    "c",
    "hardcoded_secret",
    "CWE-321",
    "high",
    "a cryptographic key written in the source",
    "load the key from a protected key store, or derive it from a secret given at run time",
    calls=frozenset(KEY_ARGS),
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """A key argument that is a non-empty literal of the source."""
    if literal_argument(scan.src, scan.env, args, KEY_ARGS[name]):
        scan.report(RULE.id, st.line, f"{name} is given a key written in the source", name)
