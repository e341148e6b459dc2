"""Whether a model's reply is whole: its finish reason, read one way for every platform.

A reply that stopped at the output-token limit (``length``), was stopped by the
provider's content filter (``content_filter``), or whose stream ended before the provider
said it was finished is not the reply the model meant to give. Its tool calls are not run
and its text is not taken as a final answer.
"""

from __future__ import annotations

from typing import Any

STREAM_CUT = "jarvis_stream_cut"
"""``response_metadata`` key a platform sets when a streamed reply ended without a finish
reason (the connection closed, or the stream ended early)."""

_LIMIT = "at the output-token limit (the model's max_tokens)"
_REASONS = {
    "length": _LIMIT,
    "max_tokens": _LIMIT,
    "content_filter": "by the provider's content filter",
}


def cut_off(message: Any) -> str | None:
    """How ``message`` (an AI message) was cut off, or ``None`` when it is whole.

    The text completes "the reply was cut off ...". Replies without a finish reason count
    as whole unless the platform marked them :data:`STREAM_CUT`: unstreamed replies and
    scripted models often name none.
    """
    meta = getattr(message, "response_metadata", None) or {}
    reason = _REASONS.get(str(meta.get("finish_reason") or "").lower())
    if reason is None and meta.get(STREAM_CUT):
        reason = "before the provider said it was finished (the stream ended early)"
    return reason
