"""A scripted OpenAI-compatible chat-completions server on loopback, for tests.

Replies come from a queue of turns (text, tool calls, an HTTP error, optionally after a
delay); each ``POST /v1/chat/completions`` takes the next one. Like real providers, the
server first validates the request and rejects broken tool-call pairing with HTTP 400, so
a test passes only if the client sends a history a real provider would accept. A rejected
request does not consume a turn.

    with FakeOpenAI() as server:
        server.reply(tool_calls=[ToolCall("read_code", {"path": "a.py"})])
        server.reply(text="Done. !!!COMPLETE!!!")
        ...  # point a client at server.base_url
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EMBED_DIMS = 64
"""Length of the vectors ``/v1/embeddings`` answers."""
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake model makes; a ``str`` ``arguments`` is sent verbatim (malformed)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""

    def to_openai(self) -> dict[str, Any]:
        """The call as it appears in a chat-completions message."""
        args = self.arguments
        text = args if isinstance(args, str) else json.dumps(args)
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": text},
        }


@dataclass(frozen=True)
class Turn:
    """One scripted reply: an assistant message, or an HTTP error when ``status`` != 200."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    status: int = 200
    error: str = ""
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    chunk_delay: float = 0.0  # seconds between streamed pieces (a slow model)

    @property
    def finish_reason(self) -> str:
        """``tool_calls`` when the turn calls tools, else ``stop``."""
        return "tool_calls" if self.tool_calls else "stop"


class RejectedRequest(ValueError):
    """The request is one a real provider would refuse with HTTP 400."""


def check_pairing(messages: list[dict[str, Any]]) -> None:
    """Raise :class:`RejectedRequest` unless every tool call and tool message pair up.

    A ``tool`` message must answer a call of the assistant message it follows, and all
    calls of an assistant message must be answered before any other message.
    """
    open_ids: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                msg = (
                    f"Invalid parameter: messages[{index}] with role 'tool' (tool_call_id "
                    f"{call_id!r}) must be a response to a preceding message with 'tool_calls'."
                )
                raise RejectedRequest(msg)
            open_ids.remove(call_id)
            continue
        if open_ids:
            msg = (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_ids)} (before messages[{index}])"
            )
            raise RejectedRequest(msg)
        if role == "assistant":
            open_ids = [call["id"] for call in message.get("tool_calls") or []]
    if open_ids:
        msg = f"tool_call_ids without response messages at the end: {', '.join(open_ids)}"
        raise RejectedRequest(msg)


class FakeOpenAI:
    """The server; use it as a context manager (it starts on enter, stops on exit)."""

    def __init__(self, models: tuple[str, ...] = ("fake-model",), api_key: str | None = None):
        self.models = models
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.embedded: list[dict[str, Any]] = []
        """Bodies of ``/v1/embeddings`` requests."""
        self.rejected: list[tuple[dict[str, Any], str]] = []
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API root to give a client, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes handlers that are still delaying
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def reply(
        self,
        text: str = "",
        tool_calls: list[ToolCall] | tuple[ToolCall, ...] = (),
        delay: float = 0,
        chunk_delay: float = 0,
    ) -> None:
        """Queue an assistant turn, sent after ``delay`` seconds; calls without id get one.

        A streamed turn waits ``chunk_delay`` seconds before each piece.
        """
        calls = tuple(replace(c, id=c.id or f"call_{next(self._ids)}") for c in tool_calls)
        turn = Turn(text=text, tool_calls=calls, delay=delay, chunk_delay=chunk_delay)
        with self._lock:
            self._turns.append(turn)

    def fail(
        self, status: int, message: str = "", times: int = 1, retry_after_ms: int | None = None
    ) -> None:
        """Queue ``times`` error replies with an OpenAI-style body (one per request)."""
        headers = (("retry-after-ms", str(retry_after_ms)),) if retry_after_ms is not None else ()
        text = message or f"fake provider error {status}"
        with self._lock:
            self._turns.extend(
                Turn(status=status, error=text, headers=headers) for _ in range(times)
            )

    @property
    def pending(self) -> int:
        """Queued turns not served yet."""
        return len(self._turns)

    def _next_turn(self, body: dict[str, Any]) -> Turn:
        with self._lock:
            self.requests.append(body)
            try:
                check_pairing(body.get("messages") or [])
            except RejectedRequest as exc:
                self.rejected.append((body, str(exc)))
                return Turn(status=400, error=str(exc))
            if not self._turns:  # a test bug: say so at once instead of being retried
                never = (("x-should-retry", "false"),)
                return Turn(
                    status=500, error="fake server: no scripted reply queued", headers=never
                )
            return self._turns.popleft()


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: errors here are clients that went away (timeouts)."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    server_version = "FakeOpenAI/1.0"

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet; tests read ``FakeOpenAI.requests`` instead."""

    def _send_json(self, status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()):
        kind = ERROR_TYPES.get(status, "server_error")
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        self._send_json(status, body, headers)

    def _authorized(self) -> bool:
        expected = self.fake.api_key
        if expected and self.headers.get("Authorization") != f"Bearer {expected}":
            self._send_error(401, "Incorrect API key provided.")
            return False
        return True

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") != "/v1/models":
            self._send_error(404, f"unknown path {self.path}")
        elif self._authorized():
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                for m in self.fake.models
            ]
            self._send_json(200, {"object": "list", "data": data})

    def _embeddings(self) -> None:
        """``/v1/embeddings``: each word hashed into one of ``EMBED_DIMS`` axes, normalised."""
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.fake.embedded.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for index, text in enumerate(texts):
            vector = [0.0] * EMBED_DIMS
            for word in re.findall(r"[a-z0-9]+", str(text).lower()):
                vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % EMBED_DIMS] += 1.0
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            vector = [v / norm for v in vector]
            if body.get("encoding_format") == "base64":
                raw: Any = base64.b64encode(struct.pack(f"<{EMBED_DIMS}f", *vector)).decode()
            else:
                raw = vector
            data.append({"object": "embedding", "index": index, "embedding": raw})
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        self._send_json(
            200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") == "/v1/embeddings" and self._authorized():
            self._embeddings()
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_error(404, f"unknown path {self.path}")
            return
        if not self._authorized():
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        except json.JSONDecodeError as exc:
            self._send_error(400, f"request body is not JSON: {exc}")
            return
        turn = self.fake._next_turn(body)
        if turn.delay and self.fake._stopping.wait(turn.delay):
            return  # the server is shutting down
        try:
            if turn.status != 200:
                self._send_error(turn.status, turn.error, turn.headers)
            elif body.get("stream"):
                self._stream(body, turn)
            else:
                self._complete(body, turn)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout)

    def _envelope(self, body: dict[str, Any], kind: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": kind,
            "created": int(time.time()),
            "model": body.get("model"),
        }

    def _complete(self, body: dict[str, Any], turn: Turn) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool_calls:
            message["tool_calls"] = [call.to_openai() for call in turn.tool_calls]
        choice = {"index": 0, "message": message, "finish_reason": turn.finish_reason}
        reply = {**self._envelope(body, "chat.completion"), "choices": [choice], "usage": USAGE}
        self._send_json(200, reply)

    def _stream(self, body: dict[str, Any], turn: Turn) -> None:
        """Send the turn as SSE chunks: role, content pieces, tool-call pieces, finish."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = self._envelope(body, "chat.completion.chunk")

        def send(delta: dict[str, Any], finish: str | None = None) -> None:
            if turn.chunk_delay and delta and self.fake._stopping.wait(turn.chunk_delay):
                return  # the server is shutting down
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self._event({**chunk, "usage": None} if with_usage else chunk)

        send({"role": "assistant", "content": ""})
        for piece in _pieces(turn.text):
            send({"content": piece})
        for index, call in enumerate(c.to_openai() for c in turn.tool_calls):
            function = {"name": call["function"]["name"], "arguments": ""}
            head = {"index": index, "id": call["id"], "type": "function", "function": function}
            send({"tool_calls": [head]})
            for piece in _pieces(call["function"]["arguments"]):
                send({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        send({}, turn.finish_reason)
        if with_usage:
            self._event({**base, "choices": [], "usage": USAGE})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())


FAKE_KEY_VAR = "FAKE_KEY"
FAKE_KEY = "sk-test"


def openai_context(ws: Path, server: FakeOpenAI) -> dict[str, Any]:
    """Run context for a non-interactive run of the ``openai`` platform on ``server``."""
    return {
        "workspace": str(ws),
        "non_interactive": True,
        "platform": "openai",
        "base_url": server.base_url,
        "model": "fake-model",
        "api_key_env": FAKE_KEY_VAR,
    }


def thread_config(thread: str) -> dict[str, Any]:
    """Run config for ``thread`` with an explicit recursion limit."""
    return {"configurable": {"thread_id": thread}, "recursion_limit": 200}


def roles(body: dict[str, Any]) -> list[str]:
    """The roles of the messages in a request body."""
    return [m["role"] for m in body["messages"]]
