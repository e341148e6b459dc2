"""Fetching a model's URL: against a real HTTP server on loopback, and the refusal paths."""

from __future__ import annotations

import ssl
import time
from pathlib import Path

import pytest
import trustme

from jarvis_graph.web.fetch import FetchPolicy, WebError, check_url, fetch, resolve
from tests.support.web_server import Reply, WebServer

OPEN = FetchPolicy(allow_private=True, timeout=5)
"""The loopback server is a private address: tests that read it allow private ones."""

PAGE = "<html><head><title>T</title></head><body><article><p>Hello page</p></article></body></html>"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///etc/passwd", "is a file: URL; read_webpage reads http:// and https://"),
        ("ftp://example.org/x", "is a ftp: URL"),
        ("example.org/page", "is not an absolute URL"),
        ("http:///path", "has no host name"),
        ("http://user:pw@example.org/", "carries a user name or password"),
        ("http://example.org:99999/", "is not a valid URL"),
    ],
)
def test_urls_a_model_may_not_ask_for_are_refused(url: str, says: str) -> None:
    with pytest.raises(WebError, match=None) as caught:
        check_url(url)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "10.1.2.3", "192.168.0.10", "169.254.169.254", "::1",
     "::ffff:127.0.0.1", "0.0.0.0", "100.64.0.1", "fc00::1", "224.0.0.1"],
)  # fmt: skip
def test_private_loopback_and_reserved_addresses_are_refused(host: str) -> None:
    with pytest.raises(WebError) as caught:
        resolve(host, 80, allow_private=False)
    assert "a loopback, private or reserved address" in str(caught.value)
    assert "web.allow_private" in str(caught.value)
    assert resolve(host, 80, allow_private=True)  # the setting lets it through


def test_a_public_address_passes_the_check() -> None:
    assert resolve("8.8.8.8", 443, allow_private=False) == "8.8.8.8"


def test_a_page_is_read_with_its_type_and_charset() -> None:
    with WebServer({"/p": Reply(PAGE, content_type="text/html; charset=ISO-8859-1")}) as web:
        page = fetch(web.url("/p"), OPEN)
    assert page.is_html and page.charset == "ISO-8859-1" and "Hello page" in page.text()
    assert page.url == web.url("/p")
    assert web.requests[0].headers["Host"] == f"127.0.0.1:{web.port}"
    assert web.requests[0].headers["User-Agent"].startswith("jarvis-graph/")


def test_the_loopback_server_is_refused_without_the_setting() -> None:
    with WebServer({"/p": Reply(PAGE)}) as web:
        with pytest.raises(WebError, match="127.0.0.1 resolves to 127.0.0.1, a loopback"):
            fetch(web.url("/p"), FetchPolicy())
        assert web.requests == []  # refused before any request


def test_redirects_are_followed_and_each_target_checked_again() -> None:
    with WebServer(
        {"/a": Reply.redirect("/b"), "/b": Reply.redirect("/c"), "/c": Reply(PAGE)}
    ) as web:
        assert fetch(web.url("/a"), OPEN).url == web.url("/c")
        # 127.0.0.1 is allowed by name; the redirect to localhost (same server) is not
        web.routes["/a"] = Reply.redirect(web.url("/c", host="localhost"))
        allowed = FetchPolicy(allowed_hosts=frozenset({"127.0.0.1"}), timeout=5)
        assert fetch(web.url("/c"), allowed).url == web.url("/c")
        with pytest.raises(WebError, match="localhost resolves to .*a loopback"):
            fetch(web.url("/a"), allowed)
        assert [r.path for r in web.requests][-1] == "/a"  # /c was never asked for again


def test_too_many_redirects_are_refused() -> None:
    with WebServer({"/loop": Reply.redirect("/loop")}) as web:
        with pytest.raises(WebError, match="redirected more than 2 times"):
            fetch(web.url("/loop"), FetchPolicy(allow_private=True, max_redirects=2))
        assert len(web.requests) == 3


def test_a_redirect_to_another_scheme_is_refused() -> None:
    with WebServer({"/r": Reply.redirect("file:///etc/passwd")}) as web:
        with pytest.raises(WebError, match="is a file: URL"):
            fetch(web.url("/r"), OPEN)


@pytest.mark.parametrize("chunked", [False, True], ids=["with-length", "chunked"])
def test_an_oversized_page_is_refused(chunked: bool) -> None:
    big = "<html><body>" + "x" * 50_000 + "</body></html>"
    with WebServer({"/big": Reply(big, chunked=chunked)}) as web:
        with pytest.raises(WebError, match="than the 10,000 bytes read"):
            fetch(web.url("/big"), FetchPolicy(allow_private=True, max_bytes=10_000))


@pytest.mark.parametrize("media", ["image/png", "application/pdf", "application/octet-stream"])
def test_a_page_that_is_not_html_or_text_is_refused(media: str) -> None:
    with WebServer({"/f": Reply(b"\x89PNG\r\n", content_type=media)}) as web:
        with pytest.raises(WebError, match=f"is {media}, not a web page"):
            fetch(web.url("/f"), OPEN)


def test_text_and_json_are_read_as_they_are() -> None:
    routes = {"/t": Reply("plain", content_type="text/plain"), "/j": Reply.json({"a": 1})}
    with WebServer(routes) as web:
        assert fetch(web.url("/t"), OPEN).text() == "plain"
        assert fetch(web.url("/j"), OPEN).text() == '{"a": 1}'


def test_a_slow_server_times_out_within_the_limit() -> None:
    with WebServer({"/slow": Reply(PAGE, delay=3)}) as web:
        started = time.monotonic()
        with pytest.raises(WebError, match="did not answer within 0.5 s"):
            fetch(web.url("/slow"), FetchPolicy(allow_private=True, timeout=0.5))
        assert time.monotonic() - started < 2.5


def test_an_error_status_and_a_dead_server_are_clear() -> None:
    with WebServer({}) as web:
        with pytest.raises(WebError, match="answered HTTP 404 Not Found"):
            fetch(web.url("/missing"), OPEN)
        url = web.url("/gone")
    with pytest.raises(WebError, match="could not be fetched"):
        fetch(url, OPEN)  # the server is stopped


def test_https_goes_to_the_checked_address_with_the_host_name_for_tls(tmp_path: Path) -> None:
    # the request is sent to 127.0.0.1 (the address checked), the certificate is verified
    # for the name in the URL (SNI and hostname check), and Host carries the name
    ca = trustme.CA()
    cert = ca.issue_cert("localhost")
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    with WebServer({"/s": Reply(PAGE)}, tls=context) as web:
        url = f"https://localhost:{web.port}/s"
        policy = FetchPolicy(allowed_hosts=frozenset({"localhost"}), ca_file=str(ca_file))
        page = fetch(url, policy)
        assert "Hello page" in page.text() and page.url == url
        assert web.requests[0].headers["Host"] == f"localhost:{web.port}"
        with pytest.raises(WebError, match="could not be fetched: .*CERTIFICATE_VERIFY_FAILED"):
            fetch(url, FetchPolicy(allowed_hosts=frozenset({"localhost"})))  # certifi's CAs
        wrong = FetchPolicy(allowed_hosts=frozenset({"127.0.0.1"}), ca_file=str(ca_file))
        with pytest.raises(WebError, match="could not be fetched: .*(mismatch|match)"):
            fetch(f"https://127.0.0.1:{web.port}/s", wrong)  # the cert names localhost only
