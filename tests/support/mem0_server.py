"""A loopback HTTP server with the Mem0 OSS REST endpoints the memory adapter uses.

Memories are kept in a dict; ``/search`` scores by shared words (no model). ``key``
requires ``Authorization: Bearer <key>``; ``fail_next_post`` stores the next memory and
then answers 500 (a write whose answer was lost); ``delay`` slows every answer;
``stop_after_write`` stores the next memory, stops listening and then answers (a server
that goes down mid-run: every later request is refused).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class Mem0Server:
    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.memories: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.fail_next_post = False
        self.stop_after_write = False
        self.delay = 0.0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Mem0Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def stop(self) -> None:
        """Stop serving and close the listening socket: new connections are refused.

        A request's handler may call it (the server's own threads are joined on exit).
        """
        self._server.shutdown()
        self._server.socket.close()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        owner: Mem0Server = self.server.owner  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        owner.requests.append((self.command, parts.path, body))
        if owner.delay:
            time.sleep(owner.delay)
        if owner.key and self.headers.get("Authorization") != f"Bearer {owner.key}":
            self._send(401, {"detail": "Invalid API key"})
            return
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if self.command == "POST" and parts.path == "/memories":
            if body.get("infer", True) is not False:
                self._send(400, {"detail": "this test server only stores verbatim (infer: false)"})
                return
            memory_id = str(uuid.uuid4())
            now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
            owner.memories[memory_id] = {
                "id": memory_id,
                "memory": body["messages"][0]["content"],
                "user_id": body.get("user_id"),
                "agent_id": body.get("agent_id"),
                "metadata": body.get("metadata") or {},
                "created_at": now,
                "updated_at": None,
            }
            if owner.fail_next_post:
                owner.fail_next_post = False
                self._send(500, {"detail": "lost answer"})
                return
            if owner.stop_after_write:  # down before the client reads this answer
                owner.stop_after_write = False
                owner.stop()
                self.close_connection = True  # no kept-alive connection outlives the server
            self._send(200, {"results": [{"id": memory_id, "event": "ADD"}]})
        elif self.command == "GET" and parts.path == "/memories":
            rows = [
                m for m in owner.memories.values()
                if m["user_id"] == query.get("user_id") and m["agent_id"] == query.get("agent_id")
            ]  # fmt: skip
            self._send(200, {"results": rows})
        elif self.command == "POST" and parts.path == "/search":
            want = _words(body["query"])
            rows = []
            for m in owner.memories.values():
                if m["user_id"] == body.get("user_id") and m["agent_id"] == body.get("agent_id"):
                    score = len(want & _words(m["memory"])) / max(1, len(want))
                    if score:
                        rows.append({**m, "score": score})
            rows.sort(key=lambda m: -m["score"])
            self._send(200, {"results": rows})
        elif self.command == "DELETE" and parts.path.startswith("/memories/"):
            gone = owner.memories.pop(parts.path.rsplit("/", 1)[1], None)
            self._send(200 if gone else 404, {"message": "Memory deleted successfully"})
        else:
            self._send(404, {"detail": "Not Found"})

    do_GET = _handle
    do_POST = _handle
    do_DELETE = _handle
