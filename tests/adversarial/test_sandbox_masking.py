"""A configured secret stays out of storage in its encoded forms too.

Boundary: what a script prints and Jarvis keeps (the tool message in the session store,
the whole output under ``.jarvis/tool_outputs/``, the CLI's own output). Jarvis masks the
value of every configured secret there, and also its base64 forms (standard and URL-safe
alphabets, padded or not, at any of the three byte alignments inside a longer stream,
wrapped at any column) and its hex forms (lower and upper case, bytes run together as
``xxd -p`` prints them or apart as ``od -An -tx1`` does, wrapped). A script that reads the
key from a file it may read (the sandbox keeps it out of the script's environment) and
prints it through ``base64``, ``basenc``, ``xxd`` or ``od`` leaves none of those forms to
be read back.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

import pytest

from tests.support.cli import run_process, write_script
from tests.support.store import stored_text
from tests.support.trust import trust

KEY = "sk-enc-0123456789abcdefghijXYZ+/~?>"
"""The configured provider key; ``~?>`` puts ``+`` and ``/`` into its base64 forms."""
MARKER = "!!!COMPLETE!!!"
PRINTS = {
    "base64": "base64 key.txt",
    "base64 -w0": "base64 -w0 key.txt",
    "one byte before": "{ printf x; cat key.txt; printf y; } | base64 -w0",
    "two bytes before": "{ printf xy; cat key.txt; } | base64 -w0",
    "url-safe, no padding": "basenc --base64url -w0 key.txt | tr -d =",
    "wrapped at column 76": "{ head -c 40 /dev/zero; cat key.txt key.txt; } | base64",
    "wrapped at column 20": "{ printf abcd; cat key.txt; } | base64 -w20",
    "xxd -p": "xxd -p key.txt",
    "xxd -p -u": "xxd -p -u key.txt",
    "od -An -tx1": "od -An -tx1 key.txt",
}
"""Each way a script can print the key's file encoded, by what it shows."""


def decodings(text: bytes) -> bytes:
    """Every byte string that base64 or hex runs of ``text`` decode to, at every alignment.

    Line breaks (raw, or escaped in the store's JSON) and the spaces between hex bytes are
    removed first, so wrapped output is read whole, as a person reading it would.
    """
    flat = re.sub(rb"\\[rn]|[\r\n]", b"", text)
    found = [flat]
    for run in re.findall(rb"[A-Za-z0-9+/_-]{8,}={0,2}", flat):
        run = run.replace(b"-", b"+").replace(b"_", b"/").rstrip(b"=")
        for shift in range(4):  # a secret starts at any of the four characters of a group
            part = run[shift:]
            part = part[: len(part) // 4 * 4]
            found.append(base64.b64decode(part))
    for run in re.findall(rb"(?:[0-9A-Fa-f]{2} ?){4,}", flat):
        digits = run.replace(b" ", b"")
        found += [binascii.unhexlify(digits), binascii.unhexlify(digits[1:][: len(digits) - 2])]
    return b"\n".join(found)


def leaks(text: bytes) -> bool:
    """Whether any twelve bytes of the key can be read from ``text``, plain or decoded."""
    plain = decodings(text)
    key = KEY.encode()
    return any(key[start : start + 12] in plain for start in range(len(key) - 11))


def test_the_leak_check_reads_every_form() -> None:
    """The check itself: each encoding the scripts use is read back to the key."""
    key = KEY.encode()
    forms = [
        base64.b64encode(key),
        base64.b64encode(b"x" + key + b"y"),
        base64.urlsafe_b64encode(b"xy" + key).rstrip(b"="),
        base64.encodebytes(bytes(40) + key + key),  # wrapped at 76
        key.hex().encode(),
        key.hex().upper().encode(),
        b" ".join(key.hex()[i : i + 2].encode() for i in range(0, 2 * len(key), 2)),
    ]
    for form in forms:
        assert leaks(b"before " + form + b" after"), form
    assert not leaks(b"before *** after")


@pytest.fixture
def encoded_run(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A real ``jarvis run`` whose script prints the key's file in every encoded form."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the configured provider key
    (workspace / "key.txt").write_text(KEY)  # where a script may read it
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("tool_output_limit: 300\n")
    trust(workspace)  # the user's own settings
    prints = [f"echo '[{name}]'; {command}" for name, command in PRINTS.items()]
    script = "; ".join([*prints, "seq 100"])  # past the inline limit: saved to a file
    call = {"name": "execute_script", "args": {"script": script}}
    turns = [{"tool_calls": [call]}, {"text": f"Printed. {MARKER}"}]
    path = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(workspace), "--platform", "scripted"]
    done = run_process([*args, "--script", str(path), "print the key encoded"], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_encoded_key_is_not_in_the_session_store(encoded_run: str, workspace: Path) -> None:
    stored = stored_text(workspace)
    assert b"[od -An -tx1]" in stored  # the script's output is there ...
    assert not leaks(stored)  # ... the key in none of its forms


def test_encoded_key_is_not_in_the_saved_tool_output(encoded_run: str, workspace: Path) -> None:
    (saved,) = (workspace / ".jarvis" / "tool_outputs").iterdir()
    text = saved.read_bytes()
    assert all(f"[{name}]".encode() in text for name in PRINTS)
    assert not leaks(text)


def test_encoded_key_is_not_in_the_cli_output(encoded_run: str) -> None:
    assert "Printed." in encoded_run and "[base64]" in encoded_run
    assert not leaks(encoded_run.encode())
