"""A deadline for a whole HTTP exchange, not for each read.

httpx's timeouts bound each network operation. A server that sends one byte a second, in
its headers or in its body, never trips a read timeout, so the exchange can last as long
as the server likes. A :class:`Deadline` learns the sockets an exchange uses (httpcore's
``trace`` extension names the socket of every new connection; a response names its own
in ``network_stream``) and, when the time is up, shuts them down: the read that is
waiting returns at once and fails, and the caller reports that the deadline passed.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

_NEW_CONNECTION = ("connection.connect_tcp.complete", "connection.start_tls.complete")
"""httpcore trace events whose ``return_value`` is the stream of a new connection (TLS
wraps the plain socket in a new one, so both are watched)."""


class Deadline:
    """Seconds an exchange may take in all; used as a context manager around it.

    Example::

        with Deadline(20) as deadline:
            client.send(request)  # with extensions={"trace": deadline.trace}
    """

    def __init__(self, seconds: float) -> None:
        """Start counting now; the watch starts when the block is entered."""
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._expired = False
        self._closed = False
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        with self._lock:  # a timer firing now must not shut a socket now back in a pool
            self._closed = True
            self._sockets.clear()

    @property
    def expired(self) -> bool:
        """Whether the time is up (the watched sockets have been shut down)."""
        with self._lock:
            return self._expired or time.monotonic() >= self.ends

    def left(self) -> float:
        """Seconds left (0 once the time is up)."""
        return max(self.ends - time.monotonic(), 0.0)

    def watch(self, sock: Any) -> None:
        """Shut ``sock`` down when the time is up (at once if it already is)."""
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            if self._closed:
                return
            if not self._expired:
                self._sockets.append(sock)
                return
        _shut(sock)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """Watch the socket of each new connection (httpcore's ``trace`` extension)."""
        if event in _NEW_CONNECTION:
            stream = info.get("return_value")
            if stream is not None:
                self.watch(stream.get_extra_info("socket"))

    def watch_response(self, response: httpx.Response) -> None:
        """Watch the socket ``response`` is read from (a connection reused from a pool)."""
        stream = response.extensions.get("network_stream")
        if stream is not None:
            self.watch(stream.get_extra_info("socket"))

    def _expire(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    """End both directions of ``sock``: a read blocked on it in another thread returns.

    ``close`` would not wake that read; ``shutdown`` does. The plain socket's method is
    called even for a TLS socket, whose own ``shutdown`` would first drop its TLS state
    under the feet of the reading thread.
    """
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: nothing is waiting on it
