"""A script's output as it streams: secrets masked, head and tail kept, the rest on disk.

A script can print without end (``yes``); holding its output whole would let it fill the
agent's memory. :class:`OutputSink` keeps only what the tool result shows (the first and
the last characters) and writes the whole output to a file under
``.jarvis/tool_outputs/`` while the script runs, the way :func:`tools.base.limit_output`
saves a large finished output. The file is created only once the output is longer than
the tool result may be, so short outputs leave no file.

Configured secrets are masked before anything is kept or written, plain and in their
base64 and hex forms (:func:`jarvis_graph.secrets.secret_pattern`). The stream arrives in
reads of any size, so a secret can be split between two reads: :class:`StreamMasker`
holds back the last characters of each read that could begin a secret until the next
read (or the end) shows whether they do.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from jarvis_graph.owned_paths import OwnedPathError, open_owned, split_owned
from jarvis_graph.secrets import MASK, secret_pattern
from jarvis_graph.tools.base import output_file_name


class StreamMasker:
    """Masks secrets in text that arrives in pieces; each piece is masked as part of the whole."""

    def __init__(self, secrets: Sequence[str]) -> None:
        """Mask ``secrets`` and their encoded forms (the longest wins where two start together)."""
        pattern = secret_pattern(secrets)
        self._pattern = pattern.regex if pattern else None
        # A secret that starts in the text kept back can end in the next piece; one that
        # starts earlier is whole in the text seen so far.
        self._hold = pattern.span - 1 if pattern else 0
        self._pending = ""

    def feed(self, text: str) -> str:
        """The masked text that is now certain; the rest waits for the next piece."""
        if self._pattern is None:
            return text
        self._pending += text
        cut = len(self._pending) - self._hold
        if cut <= 0:
            return ""
        parts: list[str] = []
        done = 0
        for match in self._pattern.finditer(self._pending):
            if match.start() >= cut:
                break
            parts += [self._pending[done : match.start()], MASK]
            done = match.end()  # a match that crosses the cut is taken whole
        cut = max(cut, done)
        parts.append(self._pending[done:cut])
        self._pending = self._pending[cut:]
        return "".join(parts)

    def flush(self) -> str:
        """The masked rest, at the end of the stream."""
        if self._pattern is None:
            return ""
        rest, self._pending = self._pending, ""
        return self._pattern.sub(MASK, rest)


@dataclass(frozen=True)
class StreamedOutput:
    """What an :class:`OutputSink` kept of a stream."""

    head: str
    """The first characters (all of the output when ``path`` is ``None``)."""
    tail: str
    """The last characters (``""`` when ``path`` is ``None``)."""
    chars: int
    """Characters of the whole (masked) output."""
    path: Path | None
    """The file that holds the whole output, when it was longer than the inline limit."""
    unsaved: str = ""
    """Why a longer output has no file (its folder is a link Jarvis does not write through)."""


class OutputSink:
    """Takes a process's raw output in reads; keeps head and tail, spills the whole to a file."""

    def __init__(
        self, secrets: Sequence[str], inline_limit: int, out_dir: Path, tool_name: str
    ) -> None:
        """Keep up to ``inline_limit`` characters inline; spill longer output to ``out_dir``."""
        self._masker = StreamMasker(secrets)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._limit = inline_limit
        self._head_size = inline_limit * 2 // 3
        self._tail_size = max(1, inline_limit - self._head_size)
        self._out_dir, self._tool_name = out_dir, tool_name
        self._head = ""
        self._tail = ""
        self._chars = 0
        self._file: TextIO | None = None
        self._partial: Path | None = None
        self._spilled = False  # past the inline limit: head and tail only from now on
        self._unsaved = ""
        self._digest = hashlib.sha256()

    def feed(self, data: bytes) -> None:
        """Add one read of raw output."""
        self._take(self._masker.feed(self._decoder.decode(data)))

    def finish(self) -> StreamedOutput:
        """End the stream: close the file, named as :func:`tools.base.save_output` names one."""
        self._take(self._masker.feed(self._decoder.decode(b"", final=True)))
        self._take(self._masker.flush())
        if not self._spilled:
            return StreamedOutput(self._head, "", self._chars, None)
        if self._file is None or self._partial is None:
            return StreamedOutput(self._head, self._tail, self._chars, None, self._unsaved)
        self._file.close()
        final = self._partial.with_name(output_file_name(self._tool_name, self._digest.hexdigest()))
        self._partial.replace(final)
        return StreamedOutput(self._head, self._tail, self._chars, final)

    def discard(self) -> None:
        """Drop the file of an output that will not be used (the run was interrupted)."""
        if self._file is not None and self._partial is not None:
            self._file.close()
            self._partial.unlink(missing_ok=True)
            self._file = None

    def _take(self, text: str) -> None:
        if not text:
            return
        self._chars += len(text)
        self._digest.update(text.encode("utf-8", "replace"))
        if not self._spilled and self._chars > self._limit:
            self._spill()  # the head holds everything so far: it goes first
        if self._spilled:
            if self._file is not None:
                self._file.write(text)
            self._tail = (self._tail + text)[-self._tail_size :]
        else:
            self._head += text  # at most the inline limit: it fits as it is
            return
        if len(self._head) < self._head_size:
            self._head += text[: self._head_size - len(self._head)]

    def _spill(self) -> None:
        """Open the file and write what was held so far; from now on head and tail only."""
        self._spilled = True
        partial = self._out_dir / f".{self._tool_name}-{id(self):x}-{time.time_ns()}.partial"
        try:  # Jarvis' own folder: private, and never through a link a repository shipped
            fd = open_owned(*split_owned(partial), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        except OwnedPathError as exc:  # head and tail are still kept, and why there is no file
            self._unsaved = str(exc)
        else:
            self._partial, self._file = partial, os.fdopen(fd, "w", encoding="utf-8")
        held, self._head = self._head, ""
        if self._file is not None:
            self._file.write(held)
        self._head = held[: self._head_size]
        self._tail = held[-self._tail_size :] if self._tail_size else ""
