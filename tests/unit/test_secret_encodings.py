"""Secrets are masked in their base64 and hex forms too, wrapped or not, streamed or whole."""

from __future__ import annotations

import base64
import math

import pytest

from jarvis_graph.secrets import (
    MASK,
    MIN_ENCODED_CHARS,
    encoded_forms,
    mask_values,
    secret_pattern,
)
from jarvis_graph.tools.script_output import StreamMasker

KEY = "sk-live-4c9f0e1b7a2d>?~"
"""A key whose base64 holds ``+`` and ``/`` (from ``>?~``), so the two alphabets differ."""


def b64(data: bytes, urlsafe: bool, padded: bool) -> str:
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
    return text if padded else text.rstrip("=")


@pytest.mark.parametrize("urlsafe", [False, True])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("before", [b"", b"x", b"xy", b"xyz", b"wxyz"])
@pytest.mark.parametrize("after", [b"", b"!", b"!?"])
def test_base64_of_the_key_at_any_alignment_is_masked(
    urlsafe: bool, padded: bool, before: bytes, after: bytes
) -> None:
    encoded = b64(before + KEY.encode() + after, urlsafe, padded)
    masked = mask_values(f"out: {encoded} end", [KEY])
    assert masked.startswith("out: ") and masked.endswith(" end") and MASK in masked
    # Left: what the bytes around the key decide, padding, and at most one character at
    # each end of the key's part that also holds bits of its neighbours.
    left = len(masked) - len("out:  end") - len(MASK)
    assert left <= math.ceil(4 * (len(before) + len(after)) / 3) + 2 + 2


def test_both_alphabets_are_caught() -> None:
    standard, urlsafe = b64(KEY.encode(), False, True), b64(KEY.encode(), True, True)
    assert standard != urlsafe  # the key's encoding holds + or /
    assert mask_values(f"{standard} {urlsafe}", [KEY]) == f"{MASK} {MASK}"


def test_the_padded_form_is_masked_whole() -> None:
    """The longest form wins where several start at the same place: no ``=`` is left."""
    encoded = b64(KEY.encode(), False, True)
    assert encoded.endswith("=")
    assert mask_values(encoded, [KEY]) == MASK


@pytest.mark.parametrize(
    "form",
    [
        KEY.encode().hex(),
        KEY.encode().hex().upper(),
        " ".join(f"{b:02x}" for b in KEY.encode()),  # od -An -tx1
        " ".join(f"{b:02X}" for b in KEY.encode()),
    ],
)
def test_hex_of_the_key_is_masked(form: str) -> None:
    assert mask_values(f"[{form}]", [KEY]) == f"[{MASK}]"


def test_wrapped_forms_are_masked() -> None:
    """``base64`` wraps at 76 columns, ``xxd -p`` at 60, ``od`` every 16 bytes."""
    data = b"\0" * 50 + KEY.encode() * 2
    wrapped = base64.encodebytes(data).decode()  # 76 columns, as base64(1) prints
    assert "\n" in wrapped.strip()
    masked = mask_values(wrapped, [KEY])
    assert masked.count(MASK) == 2
    left = len(masked.replace("\n", "")) - 2 * len(MASK)
    assert left <= math.ceil(4 * 50 / 3) + 2 + 2  # the zeros, and at most a character a key
    hexed = KEY.encode().hex()
    xxd = "\n".join(hexed[i : i + 10] for i in range(0, len(hexed), 10))
    assert mask_values(xxd + "\n", [KEY]) == MASK + "\n"
    crlf = KEY[:10] + "\r\n" + KEY[10:]  # a plain key wrapped too
    assert mask_values(f"a {crlf} b", [KEY]) == f"a {MASK} b"


def test_short_values_are_masked_plain_only() -> None:
    short = "Zq9-abc"
    assert len(short) < MIN_ENCODED_CHARS and encoded_forms(short) == set()
    encoded = b64(short.encode(), False, True)
    assert mask_values(f"{short} {encoded}", [short]) == f"{MASK} {encoded}"


def test_text_without_the_key_is_unchanged() -> None:
    text = base64.b64encode(b"an ordinary line of output\n" * 20).decode() + "\ncafe 00 ff\n"
    assert mask_values(text, [KEY, "another-secret-value"]) == text


def test_a_secret_containing_another_is_masked_whole() -> None:
    outer, inner = f"prefix-{KEY}-suffix", KEY
    for form in (outer, b64(outer.encode(), False, True), outer.encode().hex()):
        assert mask_values(f"<{form}>", [inner, outer]) == f"<{MASK}>"


def test_the_streaming_masker_catches_an_encoded_key_split_anywhere() -> None:
    encoded = base64.encodebytes(b"xy" + KEY.encode()).decode()
    text = f"a {encoded} b {KEY.encode().hex()} c"
    whole = mask_values(text, [KEY])
    assert KEY.encode().hex() not in whole
    for cut in range(1, len(text)):
        masker = StreamMasker([KEY])
        masked = masker.feed(text[:cut]) + masker.feed(text[cut:]) + masker.flush()
        assert masked == whole, cut


def test_the_pattern_is_built_once_for_the_same_values() -> None:
    assert secret_pattern([KEY, "other-value-123"]) is secret_pattern([KEY, "other-value-123"])
    assert secret_pattern([]) is None and secret_pattern([""]) is None
