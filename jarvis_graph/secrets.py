"""What is a secret: environment variables, values and file names, for every guard.

One list serves every place that keeps secrets out of a tool's reach or out of storage:

- Processes a tool starts (``execute_script``, the ``compute`` tool's calculator) get the
  environment without secrets (:func:`tool_environment`, :func:`minimal_environment`):
  no key of any configured provider (each model group's ``api_key_env``), no variable an
  MCP server's ``env`` or ``headers`` refers to as ``${VAR}``, no variable whose name looks
  like a secret (:func:`is_secret_name`) and none whose value is a URL with a password,
  unless ``script_env_passthrough`` names it.
- Stored output (tool messages in checkpoints, files in ``.jarvis/tool_outputs/``, the
  episodic archive) has the value of every configured secret masked, however short
  (:func:`secret_values`, :func:`mask_values`).
- Files that look like secrets are never attached to a task nor read by the calculator
  (:data:`SECRET_FILE_GLOBS`, :func:`is_secret_path`).
- URLs are stored without their ``user:password@`` part (:func:`strip_userinfo`).

Config layer: imports nothing of Jarvis but :mod:`jarvis_graph.config`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from jarvis_graph.config import McpServerSpec, Settings

MASK = "***"
MIN_CONFIGURED_CHARS = 3
"""Configured secrets (provider keys, MCP ``${VAR}`` values) are masked from this length.

Shorter values cannot be real secrets but can be placeholders (``OPENAI_API_KEY=x`` for a
local server); masking every ``x`` would make all output unreadable."""
MIN_GUESSED_CHARS = 8
"""Values of variables that only *look* secret by name are masked from this length (their
short values are flags such as ``1`` or ``true``)."""

SECRET_NAME_ENDINGS = (
    "KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS",
    "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "AUTHORIZATION", "COOKIE", "COOKIES",
)  # fmt: skip
"""A word of a variable name (split at ``_``, ``-``, ``.``) that ends so marks a secret:
``OPENAI_API_KEY``, ``GH_TOKEN``, ``PGPASSWORD``, ``X-Api-Key``. Words that only *start*
so are not secrets: ``KEYBOARD``, ``TOKENIZERS_PARALLELISM``."""
SECRET_NAME_WORDS = frozenset({"PASS", "PWD", "PAT", "AUTH", "DSN"})
"""Whole words that mark a secret: ``DB_PASS``, ``GH_PAT``, ``SENTRY_DSN``, ``SSH_AUTH_SOCK``
(the agent socket signs with the user's SSH keys)."""
NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})
"""The shell's working directories, not passwords."""
SAFE_PROCESS_NAMES = ("PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "TEMP", "TMP")
"""All a helper process that needs nothing from the user's environment gets."""

SECRET_FILE_GLOBS = (
    # environment and credential files
    ".env", ".env.*", "*.env", ".envrc", "credentials*", "*credential*", "*password*",
    "*passwd*", "*secret*", "*token*", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
    ".git-credentials", ".htpasswd", ".dockercfg", "*.tfstate", "*.tfstate.*",
    # keys, certificates and key stores
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx", "*.kdb",
    "*.gpg", "*.age", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "ssh_host_*_key*",
    # folders of the same
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
)  # fmt: skip
"""Lower-case globs of file and folder names that hold secrets; a path is secret when any of
its parts matches (``secrets/db.txt``, ``SECRETS/DB.TXT``, ``Prod.ENV``)."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^@\s/]+)@")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable (or header) name looks like it holds a secret."""
    upper = name.upper()
    if upper in NOT_SECRET_NAMES:
        return False
    words = [w for w in re.split(r"[^A-Z0-9]+", upper) if w]
    return any(w in SECRET_NAME_WORDS or w.endswith(SECRET_NAME_ENDINGS) for w in words)


def url_password(value: str) -> str | None:
    """The password of the first ``scheme://user:password@`` URL in ``value``, if any."""
    match = _URL_PASSWORD.search(value)
    return match.group(1) if match else None


def strip_userinfo(value: str) -> str:
    """``value`` without the ``user:password@`` part, if it is a URL that has one."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if not parts.scheme or "@" not in parts.netloc:
        return value
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host))


def configured_secret_names(settings: Settings, mcp: Iterable[McpServerSpec] = ()) -> set[str]:
    """Variables that hold configured secrets: every ``api_key_env``, every MCP ``${VAR}``.

    ``api_key_env`` of every model and of the web search backend. The names an MCP
    server's ``env`` sets are included too: the same name in our
    environment is most likely the same secret.
    """
    names = {
        spec.api_key_env for group in settings.model_groups.values() for spec in group.values()
    }
    names.add(settings.web.key_env() or "")
    for server in [*settings.mcp, *mcp]:
        names.update(server.env)
        for value in [*server.env.values(), *server.headers.values()]:
            names.update(_VAR.findall(value.get_secret_value()))
    return {n for n in names if n}


def _passes(name: str, passthrough: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in passthrough)


def tool_environment(
    settings: Settings,
    mcp: Iterable[McpServerSpec] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a process a tool starts: ``environ`` without its secrets.

    ``settings.script_env_passthrough`` (names or globs) keeps variables on purpose.
    """
    source = os.environ if environ is None else environ
    configured = configured_secret_names(settings, mcp)
    keep = settings.script_env_passthrough
    return {
        name: value
        for name, value in source.items()
        if _passes(name, keep)
        or not (name in configured or is_secret_name(name) or url_password(value))
    }


def unnamed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` without the variables that look secret by name or hold a URL password.

    For processes started where the run's settings are not at hand (git in the code
    agent: hooks in a repository the model can write to run with git's environment).
    """
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if not (is_secret_name(name) or url_password(value))
    }


def minimal_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a helper process that needs nothing of the user's (the calculator)."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if _passes(k, SAFE_PROCESS_NAMES)}


def secret_values(
    settings: Settings,
    mcp: Iterable[McpServerSpec] = (),
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Values to mask in stored output, longest first.

    Configured secrets (see :func:`configured_secret_names`) count from
    :data:`MIN_CONFIGURED_CHARS` characters; literal MCP ``env``/``headers`` values under a
    secret-looking name, URL passwords and values of secret-looking variables from
    :data:`MIN_GUESSED_CHARS`.
    """
    source = os.environ if environ is None else environ
    configured = configured_secret_names(settings, mcp)
    found = {source.get(name, "") for name in configured}
    found = {v for v in found if len(v) >= MIN_CONFIGURED_CHARS}
    guessed: set[str] = set()
    for server in [*settings.mcp, *mcp]:
        for name, secret in [*server.env.items(), *server.headers.items()]:
            raw = secret.get_secret_value()
            if is_secret_name(name) and not _VAR.search(raw):
                guessed.update({raw, raw.split()[-1] if raw.split() else raw})
    for name, value in source.items():
        password = url_password(value)
        if password and len(password) >= MIN_CONFIGURED_CHARS:
            found.add(password)
        if is_secret_name(name):
            guessed.add(value)
    found.update(v for v in guessed if len(v) >= MIN_GUESSED_CHARS)
    return sorted(found, key=len, reverse=True)


def mask_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every occurrence of each value replaced by :data:`MASK`.

    ``values`` should be longest first (as :func:`secret_values` gives them), so a secret
    that contains another is masked whole.
    """
    for value in values:
        if value and value in text:
            text = text.replace(value, MASK)
    return text


def is_secret_path(rel: str) -> bool:
    """Whether a relative path names a secret-looking file or lies in such a folder.

    Every part is compared, in lower case, with :data:`SECRET_FILE_GLOBS`.
    """
    parts = [p.lower() for p in re.split(r"[\\/]", rel) if p and p != "."]
    return any(fnmatch.fnmatchcase(p, g) for p in parts for g in SECRET_FILE_GLOBS)
