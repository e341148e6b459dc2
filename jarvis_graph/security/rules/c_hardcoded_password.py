"""Rule ``c-hardcoded-password``: a string literal of the source given as a password.

The literal reaches the password parameter of a logon or connect API (``LogonUserA``,
``mysql_real_connect``, ``PQsetdbLogin``...) written in place, through an object-like
macro (``#define PASSWORD "..."``) or through a variable or buffer that holds it
(``strcpy(password, PASSWORD)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import literal_argument
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

# API -> 0-based positions of its password arguments
PASSWORD_ARGS: dict[str, tuple[int, ...]] = {
    "LogonUserA": (2,),
    "LogonUserW": (2,),
    "LogonUser": (2,),
    "LogonUserExA": (2,),
    "LogonUserExW": (2,),
    "CreateProcessWithLogonW": (2,),
    "WNetAddConnection2A": (1,),
    "WNetAddConnection2W": (1,),
    "WNetAddConnectionA": (1,),
    "NetUserChangePassword": (2, 3),
    "mysql_real_connect": (3,),
    "mysql_change_user": (2,),
    "PQsetdbLogin": (6,),
    "SQLConnect": (5,),
    "SQLConnectA": (5,),
    "SQLConnectW": (5,),
    "ldap_simple_bind_s": (2,),
    "ldap_simple_bind": (2,),
    "ssh_userauth_password": (2,),
    "libssh2_userauth_password": (2,),
    "PKCS5_PBKDF2_HMAC": (0,),
    "PKCS5_PBKDF2_HMAC_SHA1": (0,),
    "crypt": (0,),
    "crypt_r": (0,),
}

RULE = Rule(
    "c-hardcoded-password",
    "c",
    "hardcoded_secret",
    "CWE-259",
    "high",
    "a password written in the source",
    "read the password from the user or a protected secret store at run time",
    calls=frozenset(PASSWORD_ARGS),
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """A password argument that is a non-empty literal of the source."""
    if literal_argument(scan.src, scan.env, args, PASSWORD_ARGS[name]):
        scan.report(RULE.id, st.line, f"{name} is given a password written in the source", name)
