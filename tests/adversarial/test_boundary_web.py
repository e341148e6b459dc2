"""A URL a model names reaches public addresses only; a binary body is not given as text.

Boundary: ``read_webpage`` between the model and the network. Guaranteed: every IPv6 form
that embeds an IPv4 address (compatible ``::a.b.c.d``, translated ``::ffff:0:a.b.c.d``,
NAT64 ``64:ff9b::/96`` and local-use ``64:ff9b:1::/48``, 6to4 ``2002::/16``) is judged by
that IPv4 address, and deprecated site-local ``fec0::/10`` is private, so none reaches a
loopback or private host; a body that is binary (NUL bytes, control bytes, not UTF-8) is
reported as "binary content, N bytes, not shown" instead of decoded noise.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from jarvis_graph.config import Settings, WebSettings
from jarvis_graph.features.web import read_webpage_impl
from jarvis_graph.tools.base import ToolEnv, ToolFailure
from jarvis_graph.web.fetch import WebError, is_public_address, resolve
from tests.support.web_server import Reply, WebServer

INNER_IPV6 = [
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:0:127.0.0.1",  # IPv4-translated
    "::ffff:0:10.1.2.3",
    "64:ff9b::127.0.0.1",  # NAT64 well-known prefix
    "64:ff9b::192.168.1.1",
    "64:ff9b:1::a00:1",  # NAT64 local-use /48
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "fec0::1",  # site-local
    "::ffff:127.0.0.1",  # IPv4-mapped, as before
]
PUBLIC = ["8.8.8.8", "2606:4700::1111", "64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:1.1.1.1"]


@pytest.mark.parametrize("address", INNER_IPV6)
def test_ipv6_forms_of_inner_addresses_are_refused(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))
    with pytest.raises(WebError, match="loopback, private or reserved"):
        resolve(address, 80, allow_private=False)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_and_their_ipv6_forms_pass(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


def _env(workspace: Path) -> ToolEnv:
    web = WebSettings(read_pages=True, allow_hosts=["127.0.0.1"], timeout=5)
    return ToolEnv(workspace, Settings(web=web))


def test_read_webpage_refuses_loopback_written_as_ipv4_compatible_ipv6(workspace: Path) -> None:
    with WebServer({"/": Reply("<html><body><p>inner secret page</p></body></html>")}) as web:
        port = web.url("/").rsplit(":", 1)[1].split("/")[0]
        with pytest.raises(ToolFailure, match="loopback, private or reserved") as failed:
            read_webpage_impl(_env(workspace), f"http://[::127.0.0.1]:{port}/")
        assert web.requests == []
    assert "inner secret page" not in str(failed.value)


def test_an_untyped_binary_body_is_not_given_as_text(workspace: Path) -> None:
    body = os.urandom(3000) + b"\x00" + b"\x1b]52;c;aGk=\x07" * 10
    with WebServer({"/blob": Reply(body, content_type=None)}) as web:
        text = read_webpage_impl(_env(workspace), web.url("/blob"))
    assert f"binary content, {len(body):,} bytes, not shown" in text
    assert "\ufffd" not in text and "\x1b" not in text


def test_an_untyped_text_body_is_still_given(workspace: Path) -> None:
    with WebServer({"/notes": Reply("plain notes, grüße\n", content_type=None)}) as web:
        text = read_webpage_impl(_env(workspace), web.url("/notes"))
    assert "plain notes, grüße" in text
