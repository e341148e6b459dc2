"""``reply_timeout``: one model call, retries included, bounded as a whole.

The OpenAI client's ``timeout`` bounds each wait for the next bytes, so a reply that keeps
dripping a byte at a time would never end. :func:`reply_deadline` opens a
:class:`~jarvis_graph.http_deadline.Deadline` for the call; the HTTP client's hooks
(:func:`arm_request`, :func:`watch_response`) hand it the sockets the call's requests use,
and it shuts them down when the time is up.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from jarvis_graph.http_deadline import Deadline

if TYPE_CHECKING:
    import httpx

# The deadline of the model call in progress in this context (thread).
_DEADLINE: ContextVar[Deadline | None] = ContextVar("jarvis_reply_deadline", default=None)


class ReplyTimeout(TimeoutError):
    """A model call took longer than its ``reply_timeout``; what had arrived is dropped."""


@contextmanager
def reply_deadline(seconds: float | None) -> Iterator[Deadline | None]:
    """Bound the model call inside the block to ``seconds`` in all, retries included.

    A call already inside a deadline (a streamed reply read by ``_generate``) keeps that
    one; ``None`` seconds: no bound. An error the block raises because the time ran out
    comes out as a :class:`ReplyTimeout` (see :func:`late`).
    """
    current = _DEADLINE.get()
    if seconds is None or current is not None:
        with _as_reply_timeout(current):
            yield current
        return
    with Deadline(seconds) as deadline, _as_reply_timeout(deadline):
        token = _DEADLINE.set(deadline)
        try:
            yield deadline
        finally:
            try:
                _DEADLINE.reset(token)
            except ValueError:  # a stream closed from another context: nothing to restore
                pass


@contextmanager
def _as_reply_timeout(deadline: Deadline | None) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        error = late(exc, deadline)
        if error is exc:
            raise
        raise error from exc


def late(exc: Exception, deadline: Deadline | None) -> Exception:
    """``exc``, or a :class:`ReplyTimeout` when it came from ``deadline`` running out."""
    if isinstance(exc, ReplyTimeout) or deadline is None or not deadline.expired:
        return exc
    msg = (
        f"the reply did not finish within {deadline.seconds:g} s (the model's "
        "reply_timeout setting), so it was cut off; raise reply_timeout for a slow model"
    )
    return ReplyTimeout(msg)


def arm_request(request: httpx.Request) -> None:
    """Request hook: the request's new connection, if it opens one, is watched.

    Raises:
        httpx.ConnectTimeout: The time is already up (a retry is not sent).
    """
    deadline = _DEADLINE.get()
    if deadline is None:
        return
    if deadline.expired:
        import httpx

        raise httpx.ConnectTimeout("the reply_timeout has passed", request=request)
    previous = request.extensions.get("trace")
    request.extensions["trace"] = (
        deadline.trace if previous is None else _both(previous, deadline.trace)
    )


def _both(first: Any, second: Any) -> Any:
    def trace(event: str, info: dict[str, Any]) -> None:
        first(event, info)
        second(event, info)

    return trace


def watch_response(response: httpx.Response) -> None:
    """Response hook: a reused connection opened no trace, so its socket is watched here."""
    deadline = _DEADLINE.get()
    if deadline is not None:
        deadline.watch_response(response)
