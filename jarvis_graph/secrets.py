"""What is a secret: environment variables, values and file names, for every guard.

One list serves every place that keeps secrets out of a tool's reach or out of storage:

- Processes a tool starts (``execute_script``, the ``compute`` tool's calculator) get the
  environment without secrets (:func:`tool_environment`, :func:`minimal_environment`):
  no key of any configured provider (each model group's ``api_key_env``), no variable an
  MCP server's ``env`` or ``headers`` refers to as ``${VAR}``, no variable whose name looks
  like a secret (:func:`is_secret_name`) and none whose value holds one by its shape
  (:func:`secret_parts`: URL userinfo, a JWT, a connection string's password, a ``Bearer``
  value, a URL with a token in its path), unless ``script_env_passthrough`` names it.
- Stored output (tool messages in checkpoints, files in ``.jarvis/tool_outputs/``, the
  episodic archive) has the value of every configured secret masked, however short
  (:func:`secret_values`, :func:`mask_values`), and, from :data:`MIN_ENCODED_CHARS`
  characters, its base64 and hex forms too (:func:`encoded_forms`), also where a line
  break splits one (:func:`secret_pattern`).
- Files that look like secrets are never attached to a task nor read by the calculator
  (:data:`SECRET_FILE_GLOBS`, :func:`is_secret_path`).
- URLs are stored without their ``user:password@`` part (:func:`strip_userinfo`) and
  shown (``config show``, ``models list``, error messages) without it and without the
  values of secret-named query parameters (:func:`redact_url`, :func:`redact_urls`).

Config layer: imports nothing of Jarvis but :mod:`jarvis_graph.config`.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import functools
import json
import math
import os
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from jarvis_graph.config import McpServerSpec, Settings

MASK = "***"
MIN_CONFIGURED_CHARS = 3
"""Configured secrets (provider keys, MCP ``${VAR}`` values) are masked from this length.

Shorter values cannot be real secrets but can be placeholders (``OPENAI_API_KEY=x`` for a
local server); masking every ``x`` would make all output unreadable."""
MIN_GUESSED_CHARS = 8
"""Values of variables that only *look* secret by name are masked from this length (their
short values are flags such as ``1`` or ``true``)."""
MIN_ENCODED_CHARS = 8
"""Secrets from this length are also masked in their base64 and hex forms (see
:func:`encoded_forms`). The forms of a shorter value are short enough to turn up by chance
in other encoded output, which masking them would garble."""

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

SECRET_QUERY_WORDS = frozenset({"SIG", "SIGNATURE", "CODE", "SESSION", "SID"})
"""Query parameter words that carry a secret beside those :func:`is_secret_name` knows:
signed URLs (``sig=``, ``X-Amz-Signature=``), OAuth ``code=``, ``session=``."""
MIN_PATH_TOKEN_CHARS = 20
"""A URL path segment this long that looks random is a secret (webhook URLs:
``hooks.slack.com/services/T../B../<token>``, ``discord.com/api/webhooks/<id>/<token>``)."""
MIN_TOKEN_ENTROPY = 3.5
"""Bits per character from which a path segment counts as random (English words and
slugs stay below, base64 and hex tokens of 20+ characters above)."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^@\s/]+)@")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*[^\s'\"<>`.,;:)\]]")
_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s@?#]+)@")
_JWT = re.compile(r"[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_CONN_PASSWORD = re.compile(r"(?i)(?:^|[;\s,&?])(?:password|pwd)\s*=\s*([^;\s,&]+)")
_BEARER = re.compile(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-+=.~%]+")


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


def secret_parts(value: str) -> list[str]:
    """The parts of ``value`` that are secrets by their shape, whatever the variable's name.

    A value holds a secret when it contains URL userinfo (``https://TOKEN@host``,
    ``postgres://u:pw@db``), a JWT (three base64url segments, the first a JSON header with
    ``alg``), a connection string's ``Password=``/``Pwd=``, a ``Bearer``/``Basic``
    credential, or a URL whose path has a long random-looking segment (a webhook token).
    """
    parts = [m.group(1) for m in _USERINFO.finditer(value)]
    parts += [m.group(0) for m in _JWT.finditer(value) if _is_jwt(m.group(0))]
    parts += [m.group(1) for m in _CONN_PASSWORD.finditer(value)]
    parts += [m.group(1) for m in _BEARER.finditer(value)]
    for url in _URL.findall(value):
        try:
            path = urlsplit(url).path
        except ValueError:
            continue
        parts += [seg for seg in path.split("/") if _looks_random(seg)]
    return parts


def is_secret_value(value: str) -> bool:
    """Whether ``value`` holds a secret by its shape (see :func:`secret_parts`)."""
    return bool(secret_parts(value))


def _is_jwt(candidate: str) -> bool:
    head = candidate.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        header = json.loads(decoded)
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError included
        return False
    return isinstance(header, dict) and "alg" in header


def _looks_random(segment: str) -> bool:
    """A path segment that is a token: long, letters and digits mixed, high entropy."""
    if len(segment) < MIN_PATH_TOKEN_CHARS or not _TOKEN_CHARS.fullmatch(segment):
        return False
    if not (any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)):
        return False
    counts = [segment.count(c) for c in set(segment)]
    entropy = -sum(n / len(segment) * math.log2(n / len(segment)) for n in counts)
    return entropy >= MIN_TOKEN_ENTROPY


def _is_secret_param(name: str) -> bool:
    words = {w for w in re.split(r"[^A-Z0-9]+", unquote(name).upper()) if w}
    return is_secret_name(name) or bool(words & SECRET_QUERY_WORDS)


def split_url(url: str) -> SplitResult:
    """``url`` split as :func:`urllib.parse.urlsplit` does, also when that refuses its host.

    ``urlsplit`` raises ``ValueError`` for a host such as ``[::1`` or ``[bad``; such a URL is
    split by hand at ``://``, ``#``, ``?`` and the first ``/``, so its userinfo and query are
    still found (and hidden) by the helpers here.
    """
    try:
        return urlsplit(url)
    except ValueError:
        scheme, sep, rest = url.partition("://")
        if not sep:  # "//[bad": no scheme, so not a URL the helpers here touch
            return SplitResult("", "", url, "", "")
        rest, _, fragment = rest.partition("#")
        rest, _, query = rest.partition("?")
        netloc, slash, path = rest.partition("/")
        return SplitResult(scheme, netloc, slash + path, query, fragment)


def redact_url(url: str, *, keep_query: Collection[str] | None = None) -> str:
    """``url`` fit to show: userinfo as ``***@``, values of secret-named parameters ``***``.

    ``https://u:pw@host/v1?api_key=k&x=1`` is shown as ``https://***@host/v1?api_key=***&x=1``.
    Text that is not a URL is returned as it is.

    Args:
        url: The URL.
        keep_query: For a connection URL, whose parameters can carry a password under names
            no list foresees (libpq's ``options`` or ``sslpassword``): only the parameters
            named here are shown, the userinfo and the fragment not at all
            (``postgresql://h:5432/db?host=/tmp``).
    """
    parts = split_url(url)
    if not parts.scheme:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        host = netloc.rsplit("@", 1)[1]
        netloc = host if keep_query is not None else f"{MASK}@{host}"
    pairs = parts.query.split("&") if parts.query else []
    if keep_query is not None:
        kept = [pair for pair in pairs if unquote(pair.partition("=")[0]) in keep_query]
        return urlunsplit(parts._replace(netloc=netloc, query="&".join(kept), fragment=""))
    shown = []
    for pair in pairs:
        name, eq, _ = pair.partition("=")
        shown.append(f"{name}={MASK}" if eq and _is_secret_param(name) else pair)
    return urlunsplit(parts._replace(netloc=netloc, query="&".join(shown)))


def redact_urls(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url` (for messages)."""
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def strip_userinfo(value: str) -> str:
    """``value`` without the ``user:password@`` part, if it is a URL that has one."""
    parts = split_url(value)
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
        or not (name in configured or is_secret_name(name) or is_secret_value(value))
    }


def unnamed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` without the variables that look secret by name or by value.

    For processes started where the run's settings are not at hand (git in the code
    agent: hooks in a repository the model can write to run with git's environment).
    """
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if not (is_secret_name(name) or is_secret_value(value))
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
        guessed.update(secret_parts(value))
    found.update(v for v in guessed if len(v) >= MIN_GUESSED_CHARS)
    return sorted(found, key=len, reverse=True)


def mask_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every occurrence of each value, plain or encoded, replaced by :data:`MASK`.

    See :func:`secret_pattern` for the forms found; where two start at the same place the
    longer is masked, so a secret that contains another is masked whole.
    """
    pattern = secret_pattern(values)
    return pattern.regex.sub(MASK, text) if pattern else text


def encoded_forms(value: str) -> set[str]:
    """The base64 and hex texts that show ``value`` (UTF-8) inside a script's output.

    Nothing for a value shorter than :data:`MIN_ENCODED_CHARS`. Otherwise:

    - base64, standard and URL-safe alphabets: the value encoded alone, padded and not;
      and, for each of the three byte alignments at which it can start inside a longer
      encoded stream (``printf 'x%sy' "$KEY" | base64``), the characters that only its
      own bits decide (at most one character at each end, less than a byte of it, stays);
    - hex, lower and upper case, bytes together (``xxd -p``) and apart (``od -An -tx1``).
    """
    if len(value) < MIN_ENCODED_CHARS:
        return set()
    data = value.encode("utf-8", "surrogateescape")
    digits = data.hex()
    spaced = " ".join(digits[i : i + 2] for i in range(0, len(digits), 2))
    forms = {digits, digits.upper(), spaced, spaced.upper()}
    alone = base64.b64encode(data).decode()
    standard = {alone, alone.rstrip("=")}
    for offset in range(3):
        bits_start, bits_end = 8 * offset, 8 * (offset + len(data))
        padded = bytes(offset) + data + bytes(-(offset + len(data)) % 3)
        stream = base64.b64encode(padded).decode()
        # character i holds bits 6i..6i+6: keep the ones wholly inside the value's bits
        standard.add(stream[-(-bits_start // 6) : bits_end // 6])
    forms |= standard | {form.translate(_URLSAFE) for form in standard}
    return forms


_URLSAFE = str.maketrans("+/", "-_")
_LINE_BREAK = r"(?:\r?\n)?"
"""Between any two characters of a form: tools wrap encoded output (``base64`` at 76
columns, ``xxd -p`` at 60, ``od`` every 16 bytes) and terminals or ``fold`` wrap any."""


@dataclass(frozen=True)
class SecretPattern:
    """One compiled search for every form of a set of secrets."""

    regex: re.Pattern[str]
    """Matches a form (plain or encoded), a line break allowed between its characters."""
    span: int
    """The most characters one match can take (a streaming masker holds back fewer)."""


def secret_pattern(values: Iterable[str]) -> SecretPattern | None:
    r"""The search that finds ``values`` in text: each plain and in :func:`encoded_forms`.

    A line break (``\n`` or ``\r\n``) may stand between any two characters of a form.
    Where several forms start at the same place the longest matches. ``None`` when there
    is nothing to find.
    """
    return _compiled_pattern(tuple(values))


@functools.lru_cache(maxsize=16)
def _compiled_pattern(values: tuple[str, ...]) -> SecretPattern | None:
    # Cached: every tool result is masked with the same values, and the search for a few
    # secrets in all their forms takes a while to build.
    forms = {form for value in values if value for form in {value, *encoded_forms(value)}}
    if not forms:
        return None
    trie: dict[str, Any] = {}
    for form in forms:
        node = trie
        for char in form:
            node = node.setdefault(char, {})
        node[""] = {}  # a form ends here
    span = max(3 * len(form) - 2 for form in forms)  # "\r\n" between every two characters
    return SecretPattern(re.compile(_branches(trie, first=True)), span)


def _branches(node: dict[str, Any], first: bool = False) -> str:
    """The regex for what can follow ``node`` of the trie of forms.

    A trie rather than one alternative per form: each position of the text is then tried
    against one character per branch, not against every form (many secrets in all their
    forms make hundreds), which keeps masking a large output fast.
    """
    alternatives = []
    for char, child in sorted(node.items()):
        if not char:
            continue
        chars = [char]
        while len(child) == 1 and "" not in child:  # a run without a fork: one literal
            ((following, child),) = child.items()
            chars.append(following)
        lead = "" if first else _LINE_BREAK
        alternatives.append(lead + _LINE_BREAK.join(map(re.escape, chars)) + _branches(child))
    if not alternatives:
        return ""
    group = f"(?:{'|'.join(alternatives)})"
    # a form may end here: the longer ones are tried first (greedy), this end last
    return f"{group}?" if "" in node and not first else group


def is_secret_path(rel: str) -> bool:
    """Whether a relative path names a secret-looking file or lies in such a folder.

    Every part is compared, in lower case, with :data:`SECRET_FILE_GLOBS`.
    """
    parts = [p.lower() for p in re.split(r"[\\/]", rel) if p and p != "."]
    return any(fnmatch.fnmatchcase(p, g) for p in parts for g in SECRET_FILE_GLOBS)
