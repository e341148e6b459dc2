"""Fetching a page a model named: http(s) only, public addresses only, bounded in time and size.

A URL written by a model is untrusted. Before each request (the first and every redirect)
the host is resolved and every address it resolves to must be public (not loopback,
private, link-local, multicast or reserved) unless the config allows private ones; the
request then goes to the address that was checked (the host name is kept for ``Host`` and
TLS), so a name that resolves differently a moment later cannot reach an inner address.
Proxies from the environment are not used for the same reason.

``web.timeout`` bounds the whole fetch, not each read: a server that trickles its headers
or its body a byte at a time is cut off when the time is up (see
:mod:`jarvis_graph.http_deadline`).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from jarvis_graph.http_deadline import Deadline

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/yaml")
"""Beside ``text/*``: types returned as they are."""


class WebError(Exception):
    """A page or a search could not be had; the text says why, for the model and the user."""


@dataclass(frozen=True)
class FetchPolicy:
    """The limits of one fetch."""

    allow_private: bool = False
    allowed_hosts: frozenset[str] = frozenset()
    """Host names (lower case) allowed on private addresses."""
    timeout: float = 20.0
    """Seconds for the whole fetch: every redirect and the body."""
    max_bytes: int = 3_000_000
    max_redirects: int = 5
    ca_file: str | None = None
    """PEM bundle of the CAs HTTPS pages are verified with (``None``: certifi's)."""


@dataclass(frozen=True)
class Page:
    """A fetched page: the URL it was finally read from, its type and its body."""

    url: str
    content_type: str
    charset: str | None
    body: bytes

    @property
    def is_html(self) -> bool:
        """Whether the body is HTML (by its type, or by its first byte when untyped)."""
        if self.content_type:
            return self.content_type in HTML_TYPES
        return self.body.lstrip()[:1] == b"<"

    def text(self) -> str:
        """The body decoded (the declared charset, else UTF-8; bad bytes replaced)."""
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # an unknown charset name
            return self.body.decode("utf-8", errors="replace")


def user_agent() -> str:
    """The User-Agent sent with every request."""
    try:
        own = version("jarvis-graph")
    except PackageNotFoundError:
        own = "dev"
    return f"jarvis-graph/{own} (read_webpage)"


def check_url(url: str) -> tuple[str, str, int]:
    """The scheme, host and port of ``url``, if it is one a model may ask for.

    Raises:
        WebError: Not http or https, no host, or a ``user:password@`` part.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        msg = f"{url!r} is not a valid URL ({exc})"
        raise WebError(msg) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"a {scheme}: URL" if scheme else "not an absolute URL"
        msg = f"{url!r} is {shown}; read_webpage reads http:// and https:// pages only"
        raise WebError(msg)
    if not parts.hostname:
        msg = f"{url!r} has no host name"
        raise WebError(msg)
    if parts.username is not None or parts.password is not None:
        msg = f"{url!r} carries a user name or password; read_webpage sends no credentials"
        raise WebError(msg)
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_EMBEDDING_V4 = (
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated): ::127.0.0.1
    ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT): ::ffff:0:127.0.0.1
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix
)
"""IPv6 forms whose last 32 bits are an IPv4 address the packets end up at (besides
6to4 ``2002::/16`` and Teredo, which :mod:`ipaddress` decodes, and IPv4-mapped
``::ffff:0:0/96``, which is the IPv4 address itself)."""
_NEVER_PUBLIC = (
    ipaddress.ip_network("64:ff9b:1::/48"),  # NAT64 local use (RFC 8215): any IPv4 inside
    ipaddress.ip_network("fec0::/10"),  # site-local (deprecated, still routed as private)
)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address that is not IPv4-mapped carries and reaches."""
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # the relay server and the client
    if any(address in net for net in _EMBEDDING_V4):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public_address(address: IPAddress) -> bool:
    """Whether ``address`` and every IPv4 address it embeds are public unicast addresses.

    An IPv6 form that embeds an IPv4 address (mapped, compatible, translated, NAT64, 6to4,
    Teredo) is judged by that IPv4 address as well, since a router delivers it there;
    deprecated site-local ``fec0::/10`` and NAT64's local-use prefix are never public.
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # the IPv4 address itself, whatever ::ffff: says
            return is_public_address(address.ipv4_mapped)
        if any(address in net for net in _NEVER_PUBLIC):
            return False
        if not all(is_public_address(v4) for v4 in embedded_ipv4(address)):
            return False
    return address.is_global and not address.is_multicast


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to for ``host``, after checking every address it has.

    Raises:
        WebError: The name does not resolve, or one of its addresses is not public and
            private addresses are not allowed.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        msg = f"the host {host!r} could not be resolved ({exc})"
        raise WebError(msg) from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not allow_private:
        for address in addresses:
            if not is_public_address(address):
                msg = (
                    f"{host} resolves to {address}, a loopback, private or reserved address; "
                    "read_webpage reaches public addresses only (the config's `web.allow_hosts` "
                    "or `web.allow_private` allow others)"
                )
                raise WebError(msg)
    if not addresses:
        msg = f"the host {host!r} has no address"
        raise WebError(msg)
    return str(addresses[0])


def _pinned(url: str, address: str, port: int) -> str:
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    return urlunsplit(parts._replace(netloc=f"{host}:{port}"))


def _media_type(response: httpx.Response) -> tuple[str, str | None]:
    raw = response.headers.get("content-type", "")
    media, _, params = raw.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip("\"'")
    return media.strip().lower(), charset


def _readable(media: str) -> bool:
    return not media or media in HTML_TYPES or media.startswith("text/") or media in TEXT_TYPES


def fetch(url: str, policy: FetchPolicy) -> Page:
    """GET ``url`` under ``policy``: redirects followed and checked one by one.

    Raises:
        WebError: Refused (scheme, address, type, size), failed (connection, HTTP error
            status) or too slow; the message says which.
    """
    current = url
    verify: ssl.SSLContext | bool = True
    if policy.ca_file:
        try:
            verify = ssl.create_default_context(cafile=policy.ca_file)
        except (OSError, ssl.SSLError) as exc:
            msg = f"web.ca_file {policy.ca_file!r} cannot be used: {exc}"
            raise WebError(msg) from None
    with (
        Deadline(policy.timeout) as deadline,
        httpx.Client(trust_env=False, follow_redirects=False, verify=verify) as client,
    ):
        for _ in range(policy.max_redirects + 1):
            scheme, host, port = check_url(current)
            private_ok = policy.allow_private or host.lower() in policy.allowed_hosts
            address = resolve(host, port, private_ok)
            default_port = port == (443 if scheme == "https" else 80)
            headers = {
                "Host": host if default_port else f"{host}:{port}",
                "User-Agent": user_agent(),
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            }
            left = deadline.left()
            if left <= 0:
                break
            extensions: dict[str, Any] = {"trace": deadline.trace}
            if scheme == "https":
                extensions["sni_hostname"] = host
            request = client.build_request(
                "GET",
                _pinned(current, address, port),
                headers=headers,
                timeout=httpx.Timeout(left),
                extensions=extensions,
            )
            try:
                response = client.send(request, stream=True)
            except httpx.TimeoutException:
                break
            except httpx.HTTPError as exc:
                if deadline.expired:  # the deadline shut the socket: a timeout, said so
                    break
                msg = f"{current} could not be fetched: {exc or type(exc).__name__}"
                raise WebError(msg) from None
            try:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                return _read(current, response, policy, deadline)
            finally:
                response.close()
        else:
            msg = f"{url} redirected more than {policy.max_redirects} times"
            raise WebError(msg)
    msg = f"{url} did not answer within {policy.timeout:g} s (web.timeout)"
    raise WebError(msg)


def _read(url: str, response: httpx.Response, policy: FetchPolicy, deadline: Deadline) -> Page:
    if response.status_code >= 400:
        msg = f"{url} answered HTTP {response.status_code} {response.reason_phrase}".rstrip()
        raise WebError(msg)
    media, charset = _media_type(response)
    if not _readable(media):
        msg = f"{url} is {media}, not a web page; read_webpage reads HTML and text"
        raise WebError(msg)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > policy.max_bytes:
        msg = (
            f"{url} is {int(declared):,} bytes, larger than the {policy.max_bytes:,} bytes "
            "read (web.max_page_bytes)"
        )
        raise WebError(msg)
    body = bytearray()
    try:
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > policy.max_bytes:
                msg = (
                    f"{url} is larger than the {policy.max_bytes:,} bytes read (web.max_page_bytes)"
                )
                raise WebError(msg)
            if deadline.expired:
                raise httpx.ReadTimeout("deadline")
    except httpx.HTTPError as exc:
        if isinstance(exc, httpx.TimeoutException) or deadline.expired:
            msg = f"{url} did not send its page within {policy.timeout:g} s (web.timeout)"
            raise WebError(msg) from None
        msg = f"{url} broke off while sending its page: {exc or type(exc).__name__}"
        raise WebError(msg) from None
    return Page(url, media, charset, bytes(body))
