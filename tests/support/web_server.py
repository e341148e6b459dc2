"""A real HTTP server on loopback that serves the routes a test gives it.

Each route is a path (``/page``; the query string is kept in ``requests``) mapped to a
:class:`Reply`. It serves SearxNG-, Tavily- and Brave-shaped JSON, HTML pages, redirects,
slow and oversized answers for the web tools' tests.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    """What a route answers."""

    body: bytes | str = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering."""
    chunked: bool = False
    """Send the body in pieces with no Content-Length."""

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Reply:
        return cls(json.dumps(data), status, "application/json")

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Reply:
        return cls(b"", status, None, {"Location": location})


@dataclass
class Seen:
    """A request the server received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


class WebServer:
    """``with WebServer({"/": Reply("<html>..")}) as web: web.url("/")``."""

    def __init__(
        self, routes: dict[str, Reply] | None = None, tls: ssl.SSLContext | None = None
    ) -> None:
        self.routes: dict[str, Reply] = dict(routes or {})
        self.requests: list[Seen] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        if tls is not None:  # HTTPS: the context holds the server's certificate
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: WebServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early (a refused oversized page) is not an error here."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _answer(self) -> None:
        owner = self.server.owner
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        owner.requests.append(
            Seen(self.command, parts.path, parts.query, dict(self.headers.items()), body)
        )
        reply = owner.routes.get(parts.path) or Reply("not found", 404, "text/plain")
        if reply.delay:
            time.sleep(reply.delay)
        data = reply.body.encode() if isinstance(reply.body, str) else reply.body
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(data), 4096):
                piece = data[start : start + 4096]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _answer
    do_POST = _answer
