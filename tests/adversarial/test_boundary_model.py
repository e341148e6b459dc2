"""The model boundary: a provider's reply, and the tool calls in it, are bounded and checked.

Guaranteed here, against real loopback HTTP servers speaking the OpenAI API:

- a reply cut short (a stream that ends without a finish reason, ``finish_reason:
  length`` or ``content_filter``) is no answer: the run ends ``truncated``, exit code 3,
  and says why;
- a reply that drips a byte at a time is cut off at the model's ``reply_timeout`` (the
  whole call, not each read) with a clear error, exit code 1;
- one reply runs at most ``max_tool_calls_per_reply`` tool calls; the others are answered
  "not run" and the model is told why;
- a call whose arguments exceed ``max_tool_argument_bytes`` is refused, and its arguments
  do not travel on with the history;
- a call with an argument its tool does not have is refused, naming the argument and the
  accepted ones;
- ``read_webpage`` against a server that trickles its headers ends within ``web.timeout``.

Side effects (files the calls would write) show what ran; the requests the server
received show what the model was told.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.config import WebSettings
from jarvis_graph.features.web import read_webpage_impl
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.tools.base import ToolEnv, ToolFailure
from tests.support.cli import run_process
from tests.support.fake_openai import (
    FAKE_KEY,
    FAKE_KEY_VAR,
    FakeOpenAI,
    ToolCall,
    openai_context,
    thread_config,
)

ANSWER = "The capital of France is Par"
DONE = "Understood. !!!COMPLETE!!!"


# -- a loopback provider whose replies end the way a test says -------------------------


class _Provider(ThreadingHTTPServer):
    daemon_threads = True
    finish: str | None = "stop"
    """The finish reason of every reply (``None``: the stream ends without one)."""
    drip: float = 0.0
    """Seconds between bytes of an endless reply (0: reply at once)."""
    dripped_for: float | None = None
    """Seconds the client kept reading the endless reply before it hung up."""
    stopping: threading.Event
    clients: list[int]
    """The client port of each request (one port: one connection, reused)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that hung up is what some tests expect."""


class _Handler(BaseHTTPRequestHandler):
    server: _Provider

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if not body.get("stream"):
            message = {"role": "assistant", "content": ANSWER}
            choice = {"index": 0, "message": message, "finish_reason": self.server.finish}
            data = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [choice],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
        if self.server.drip:
            self._drip()
            return
        for delta, finish in (
            ({"role": "assistant", "content": ""}, None),
            ({"content": ANSWER}, None),
            ({}, self.server.finish),
        ):
            if delta or finish:
                self._event(body, delta, finish)
        self.wfile.write(b"data: [DONE]\n\n")

    def _event(self, body: dict[str, Any], delta: dict[str, Any], finish: str | None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body["model"],
            "choices": [choice],
        }
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()

    def _drip(self) -> None:
        """One byte at a time, never a whole event: every read gets something."""
        started = time.monotonic()
        piece = b"data: {"
        try:
            while not self.server.stopping.wait(self.server.drip):
                self.wfile.write(piece)
                self.wfile.flush()
                piece = b"x"
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.server.dripped_for = time.monotonic() - started


@pytest.fixture
def provider() -> Iterator[_Provider]:
    httpd = _Provider(("127.0.0.1", 0), _Handler)
    httpd.stopping = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield httpd
    finally:
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _url(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def user_config(home: Path, base_url: str, **normal: Any) -> None:
    """The user's own config (a project file would wait for trust): this model, no asking."""
    spec = {
        "platform": "openai",
        "model": "fake-model",
        "base_url": base_url,
        "api_key_env": FAKE_KEY_VAR,
        **normal,
    }
    config = {"confirm": "never", "model_groups": {"default": {"normal": spec}}}
    (home / ".jarvis").mkdir(exist_ok=True)
    (home / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.fixture
def ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(FAKE_KEY_VAR, FAKE_KEY)
    return workspace


def flat(text: str) -> str:
    return " ".join(text.split())


# -- 8. a reply cut short is no answer ---------------------------------------------------

CUT = {
    "stream-without-finish-reason": (None, "before the provider said it was finished"),
    "length": ("length", "at the output-token limit"),
    "content-filter": ("content_filter", "by the provider's content filter"),
}


@pytest.mark.parametrize("case", sorted(CUT))
def test_a_streamed_reply_cut_short_does_not_end_completed(
    provider: _Provider, ws: Path, isolated_home: Path, case: str
) -> None:
    provider.finish, why = CUT[case]
    user_config(isolated_home, _url(provider))

    proc = run_process(["run", "-n", "What is the capital of France?"], cwd=ws)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 3, seen
    assert "completed" not in seen
    assert "■ truncated" in seen
    assert f"cut off {why}" in seen
    assert ANSWER in seen  # what did arrive is shown, as what it is
    assert "Traceback" not in seen


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Any]:
    with SqliteSaver.from_conn_string(str(tmp_path / "sessions.sqlite")) as saver:
        yield build_agent_graph().compile(checkpointer=saver)


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_a_whole_reply_cut_short_does_not_end_completed(
    agent: Any, provider: _Provider, ws: Path, isolated_home: Path, finish: str
) -> None:
    provider.finish = finish
    user_config(isolated_home, _url(provider), stream=False)
    context = {"workspace": str(ws), "non_interactive": True}

    out = agent.invoke({"task": "Capital of France?"}, thread_config("t"), context=context)

    assert out["status"] == "truncated"
    assert out["final_answer"].startswith("Stopped: the model's reply was cut off")


def test_a_reply_cut_short_in_an_interactive_run_is_said_not_asked_about(
    agent: Any, provider: _Provider, ws: Path, isolated_home: Path
) -> None:
    """Without ``-n`` a reply is followed by the user's next instruction: not a cut one."""
    provider.finish = "length"
    user_config(isolated_home, _url(provider))
    context = {"workspace": str(ws), "non_interactive": False}

    out = agent.invoke({"task": "Capital of France?"}, thread_config("t"), context=context)

    assert out["status"] == "truncated"
    assert "at the output-token limit" in out["final_answer"]


def test_a_whole_reply_without_a_finish_reason_is_still_an_answer(
    agent: Any, provider: _Provider, ws: Path, isolated_home: Path
) -> None:
    """Unstreamed, the reply arrived whole: a server that names no reason is not cut."""
    provider.finish = None
    user_config(isolated_home, _url(provider), stream=False)
    context = {"workspace": str(ws), "non_interactive": True}

    out = agent.invoke({"task": "Capital of France?"}, thread_config("t"), context=context)

    assert out["status"] == "completed"


# -- 7. a reply that drips forever is cut off at reply_timeout ---------------------------


def test_a_reply_dripping_forever_is_cut_off_at_the_reply_timeout(
    provider: _Provider, ws: Path, isolated_home: Path
) -> None:
    provider.drip = 0.25  # far inside the per-read timeout: no read ever times out
    user_config(isolated_home, _url(provider), reply_timeout=3, timeout=30)

    proc = run_process(["run", "-n", "Say hi"], cwd=ws, timeout=60)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1, seen
    assert "did not finish within 3 s" in seen and "reply_timeout" in seen
    assert "Traceback" not in seen
    assert provider.dripped_for is not None, "the client never hung up"
    assert provider.dripped_for < 3 + 2, provider.dripped_for


# -- 7. the tool calls of one reply: how many, how large, which arguments --------------


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=FAKE_KEY) as fake:
        yield fake


def run(agent: Any, ws: Path, server: FakeOpenAI, task: str) -> dict[str, Any]:
    return agent.invoke({"task": task}, thread_config("t"), context=openai_context(ws, server))


def tool_answers(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_one_reply_runs_at_most_the_cap_of_tool_calls(
    agent: Any, server: FakeOpenAI, ws: Path, isolated_home: Path
) -> None:
    user_config(isolated_home, server.base_url)
    config = yaml.safe_load((isolated_home / ".jarvis" / "config.yaml").read_text())
    config["max_tool_calls_per_reply"] = 5
    (isolated_home / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    calls = [ToolCall("write_file", {"path": f"f{i:03}.txt", "content": "x"}) for i in range(200)]
    server.reply(tool_calls=calls)
    server.reply(text=DONE)

    run(agent, ws, server, "Write the files")

    assert sorted(p.name for p in ws.glob("f*.txt")) == [f"f{i:03}.txt" for i in range(5)]
    answers = tool_answers(server.requests[1])
    assert len(answers) == 200  # every call is answered, so the history pairs
    refused = [a for a in answers if "only the first 5 run" in a]
    assert len(refused) == 195, answers[5]
    assert "200 tool calls" in refused[0] and "max_tool_calls_per_reply" in refused[0]
    assert not server.rejected


def test_the_default_cap_is_modest(ws: Path) -> None:
    from jarvis_graph.config import Settings

    assert 1 <= Settings().max_tool_calls_per_reply <= 64


def test_a_call_with_megabytes_of_arguments_is_refused(
    agent: Any, server: FakeOpenAI, ws: Path, isolated_home: Path
) -> None:
    # the default limit: 1,000,000 bytes; a whole reply (streamed, the fake server would
    # send the 2 MB in 300,000 pieces)
    user_config(isolated_home, server.base_url, stream=False)
    args = {"path": "big.txt", "content": "A" * 2_000_000}
    server.reply(tool_calls=[ToolCall("write_file", args)])
    server.reply(text=DONE)

    run(agent, ws, server, "Write the big file")

    assert not (ws / "big.txt").exists()
    [answer] = tool_answers(server.requests[1])
    assert "could not be run" in answer, answer[:400]
    assert f"{len(json.dumps(args)):,} bytes" in answer, answer[:400]
    assert "max_tool_argument_bytes" in answer
    assert len(json.dumps(server.requests[1])) < 50_000  # the 2 MB did not travel on


def test_a_call_with_an_argument_the_tool_lacks_is_refused_naming_it(
    agent: Any, server: FakeOpenAI, ws: Path, isolated_home: Path
) -> None:
    user_config(isolated_home, server.base_url)
    args = {"path": "notes.txt", "content": "hi", "mode": "append"}
    server.reply(tool_calls=[ToolCall("write_file", args)])
    server.reply(text=DONE)

    run(agent, ws, server, "Append to the notes")

    assert not (ws / "notes.txt").exists()
    [answer] = tool_answers(server.requests[1])
    assert "no parameter 'mode'" in answer, answer
    assert "path, content" in answer


# -- 7. read_webpage: web.timeout bounds the whole fetch --------------------------------


@pytest.fixture
def trickler() -> Iterator[tuple[str, list[float]]]:
    """A server that sends its response headers one byte every 0.2 s, without end."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()
    hung_up: list[float] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            started = time.monotonic()
            head = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 100_000
            try:
                for byte in head:
                    if stop.wait(0.2):
                        break
                    conn.sendall(bytes([byte]))
            except OSError:
                hung_up.append(time.monotonic() - started)
            finally:
                conn.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/page", hung_up
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_read_webpage_ends_within_web_timeout_when_headers_trickle(
    workspace: Path, trickler: tuple[str, list[float]]
) -> None:
    from jarvis_graph.config import Settings

    url, _hung_up = trickler
    web = WebSettings(read_pages=True, allow_hosts=["127.0.0.1"], timeout=2)
    env = ToolEnv(workspace, Settings(web=web))
    started = time.monotonic()

    with pytest.raises(ToolFailure) as caught:
        read_webpage_impl(env, url)

    assert time.monotonic() - started < 2 + 1.5
    assert "did not answer within 2 s" in str(caught.value)


def test_a_schema_given_as_json_refuses_unknown_arguments_unless_it_takes_more() -> None:
    """MCP and user tools bring JSON schemas, which LangChain passes on unchecked."""
    from langchain_core.tools import StructuredTool

    from jarvis_graph.tools.invoke import invoke_tool

    seen: list[dict[str, Any]] = []

    def tool(extra: bool) -> StructuredTool:
        schema: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}}
        if extra:
            schema["additionalProperties"] = True
        return StructuredTool(
            name="weather", description="d", args_schema=schema, func=lambda **a: seen.append(a)
        )

    text, status, _ = invoke_tool(tool(False), {"city": "Oslo", "units": "C"}, {})
    assert status == "error" and "no parameter 'units'" in text and "city" in text
    assert seen == []
    _, status, _ = invoke_tool(tool(True), {"city": "Oslo", "units": "C"}, {})
    assert status == "success" and seen == [{"city": "Oslo", "units": "C"}]


class _KeepAliveHandler(BaseHTTPRequestHandler):
    """HTTP/1.1: the first reply (a tool call) keeps the connection; the next one drips."""

    protocol_version = "HTTP/1.1"
    server: _Provider

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.server.clients.append(self.client_address[1])
        if len(self.server.clients) > 1:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")  # the body ends when the connection does
            self.end_headers()
            _Handler._drip(self)  # type: ignore[arg-type]
            return
        call = {"id": "call_1", "type": "function"}
        call["function"] = {"name": "list_files", "arguments": "{}"}  # type: ignore[assignment]
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        reply = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"]}
        data = json.dumps({**reply, "choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_reply_dripping_on_a_reused_connection_is_cut_off_too(
    agent: Any, ws: Path, isolated_home: Path
) -> None:
    """The second call reuses the first one's connection: no new socket to trace."""
    from jarvis_graph.platforms import ProviderError

    httpd = _Provider(("127.0.0.1", 0), _KeepAliveHandler)
    httpd.stopping, httpd.clients, httpd.drip = threading.Event(), [], 0.25
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        user_config(isolated_home, _url(httpd), stream=False, reply_timeout=3, timeout=30)
        context = {"workspace": str(ws), "non_interactive": True}
        with pytest.raises(ProviderError) as caught:
            agent.invoke({"task": "List the files"}, thread_config("t"), context=context)
        for _ in range(30):  # the server notices the hang-up at its next byte or two
            if httpd.dripped_for is not None:
                break
            time.sleep(0.1)
    finally:
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)

    assert "did not finish within 3 s" in str(caught.value)
    assert len(httpd.clients) == 2 and httpd.clients[0] == httpd.clients[1]  # one connection
    assert httpd.dripped_for is not None and httpd.dripped_for < 3 + 2, httpd.dripped_for
