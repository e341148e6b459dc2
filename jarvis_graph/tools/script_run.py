"""One ``execute_script`` process, from start to the last process it left behind.

The script runs under :mod:`jarvis_graph.tools.script_reaper`, a small program that
makes itself the parent of every orphan the script leaves (Linux child subreaper), and
ends them all when bash exits or when it is told to stop (SIGTERM). This module starts
it, streams the output into an :class:`~jarvis_graph.tools.script_output.OutputSink`
with a deadline and a byte cap, and reads the reaper's report: the script's exit status
and the processes that were ended.

The call returns as soon as the reaper has exited: nothing the script started is left
to hold the output pipe open (output still arriving from a process outside the reaper's
reach is read for :data:`DRAIN_SECONDS` more, then the pipe is closed on it).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from jarvis_graph.sandbox import Prepared
from jarvis_graph.tools.script_output import OutputSink, StreamedOutput

OUTPUT_CAP_BYTES = 100_000_000
"""Bytes of output a script may print; past them it is stopped (the file keeps these)."""
STOP_GRACE_SECONDS = 2.0
"""How long the reaper gets to end everything after SIGTERM before it is killed."""
DRAIN_SECONDS = 0.5
"""How long output is still read after the reaper exited."""
START_SECONDS = 30.0
"""How long the reaper may take to start the script (Python starts in milliseconds)."""
READ_BYTES = 1 << 16
REAPER = Path(__file__).with_name("script_reaper.py")
PYTHON_ADDS = ("LC_CTYPE",)
"""Variables Python may set at its start (locale coercion) that the script must not get."""

StopReason = Literal["", "timeout", "cap", "interrupt"]


@dataclass(frozen=True)
class ScriptResult:
    """How a script ended and what it printed."""

    returncode: int | None
    """bash's exit code (negative: the signal that ended it); ``None`` when it was stopped."""
    stopped: StopReason
    output: StreamedOutput
    ended: list[tuple[int, str]] = field(default_factory=list)
    """Processes the reaper ended besides the script's main process: ``(pid, name)``."""
    more_ended: int = 0
    """Ended processes beyond those named in ``ended``."""
    ended_counts: dict[str, int] = field(default_factory=dict)
    """How many processes of each name were ended (the most common names)."""


class ScriptProcess:
    """A script running under its reaper; :meth:`stop` may be called from any thread."""

    def __init__(
        self, script: str, cwd: Path, variables: Mapping[str, str], sandbox: Prepared | None = None
    ) -> None:
        """Start ``bash -c script`` in ``cwd`` with exactly ``variables`` as environment.

        With ``sandbox``, the reaper starts in it and confines itself before the script
        starts (the sandbox's environment replaces ``variables``).
        """
        self.sandbox = sandbox
        report_read, report_write = os.pipe()
        env = dict(sandbox.env if sandbox is not None else variables)
        unset = ",".join(name for name in PYTHON_ADDS if name not in env)
        argv = [sys.executable, "-I", "-S", str(REAPER), str(report_write), script, unset]
        fds: tuple[int, ...] = (report_write,)
        if sandbox is not None and sandbox.level != "off":
            # SIGTERM when the agent dies: the reaper's signal to end all the script started
            policy = sandbox.policy_json(parent_death_signal=int(signal.SIGTERM))
            argv = [*sandbox.prefix, *argv, policy]
            fds += sandbox.pass_fds
        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=fds,
                start_new_session=True,  # Ctrl-C at the terminal reaches the agent only
                env=env,
            )
        except BaseException:
            os.close(report_read)
            if sandbox is not None:
                sandbox.close()
            raise
        finally:
            os.close(report_write)
            if sandbox is not None:
                sandbox.started()
        self._report = report_read
        self._report_text = b""
        self._lock = threading.Lock()
        self.reason: StopReason = ""
        self._stop_at: float | None = None
        self.main: int | None = None

    def stop(self, reason: StopReason) -> None:
        """Ask the reaper to end the script and everything it started (first reason wins)."""
        with self._lock:
            if self.reason:
                return
            self.reason, self._stop_at = reason, time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)

    def wait_started(self) -> int | None:
        """The script's pid (it leads its process group), once the reaper has started it."""
        deadline = time.monotonic() + START_SECONDS
        while b"\n" not in self._report_text and time.monotonic() < deadline:
            chunk = self._read_report(0.05)
            if chunk is None:
                break
        first = self._report_text.split(b"\n", 1)[0]
        with contextlib.suppress(ValueError, TypeError, KeyError):
            self.main = int(json.loads(first)["main"])
        if self.main is not None and self.sandbox is not None and self.sandbox.own_pids:
            # The reported pid is the sandbox's own; from outside, the sandbox is bwrap,
            # which leads its group: ending that group ends everything inside.
            self.main = self.proc.pid
        return self.main

    def collect(self, sink: OutputSink, seconds: float, cap: int) -> ScriptResult:
        """Stream the output into ``sink`` until the script and all it started have ended.

        The script is stopped after ``seconds`` or once its output passes ``cap`` bytes.
        """
        out = self.proc.stdout
        assert out is not None  # started with stdout=PIPE
        deadline = time.monotonic() + seconds
        taken = 0
        exited_at: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(out.fileno(), selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if exited_at is None and self.proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                    break  # a process beyond the reaper holds the pipe: stop reading it
                if exited_at is None and now >= deadline:
                    self.stop("timeout")
                if self.reason and exited_at is None:
                    # Reading on would let the script go on: its writes wait on the full
                    # pipe until the reaper has ended it; what is left is read after.
                    self._await_reaper()
                    continue
                wait = 0.05 if exited_at is not None else max(0.0, min(0.2, deadline - now))
                if not selector.select(wait):
                    continue
                data = os.read(out.fileno(), READ_BYTES)
                if not data:
                    break  # every writer has closed it: the reaper and all it started are gone
                if taken < cap:
                    sink.feed(data[: cap - taken])
                taken += len(data)
                if taken > cap:
                    self.stop("cap")
        out.close()
        self.proc.wait()
        return self._result(sink.finish())

    def end(self) -> None:
        """Make sure the script and the reaper are gone (after an error or Ctrl-C here)."""
        self.stop("interrupt")
        try:
            self.proc.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self._force()
            self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.close()

    def close(self) -> None:
        """Release the report pipe and what the sandbox made for the script."""
        with contextlib.suppress(OSError):
            os.close(self._report)
        if self.sandbox is not None:
            self.sandbox.close()

    def _await_reaper(self) -> None:
        """Wait for the reaper after a stop; kill it if it takes longer than the grace."""
        stop_at = self._stop_at if self._stop_at is not None else time.monotonic()
        try:
            self.proc.wait(max(0.0, stop_at + STOP_GRACE_SECONDS - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._force()
            self.proc.wait()

    def _force(self) -> None:
        """The reaper did not end in time: kill it and the script's group, as before."""
        for group in (self.proc.pid, self.main):
            if group is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)

    def _read_report(self, wait: float) -> bytes | None:
        """One read of the report pipe (``b""`` if nothing came in ``wait``; ``None`` at EOF)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._report, selectors.EVENT_READ)
            if not selector.select(wait):
                return b""
        chunk = os.read(self._report, READ_BYTES)
        self._report_text += chunk
        return chunk or None

    def _result(self, output: StreamedOutput) -> ScriptResult:
        while self._read_report(0.0):  # the reaper has exited: the rest is there, then EOF
            pass
        self.close()
        lines = self._report_text.splitlines()
        summary: dict[str, object] = {}
        with contextlib.suppress(ValueError, IndexError):
            summary = json.loads(lines[-1]) if len(lines) > 1 else {}
        status = summary.get("status")
        ended = summary.get("ended")
        named = [(int(p), str(n)) for p, n in ended] if isinstance(ended, list) else []
        if isinstance(status, int):
            code: int | None = os.waitstatus_to_exitcode(status)
        else:  # the reaper was killed (by the script?): end the script's group at least
            self._force()
            code = self.proc.returncode if not self.reason else None
        more = summary.get("more")
        counts = summary.get("counts")
        return ScriptResult(
            returncode=None if self.reason else code,
            stopped=self.reason,
            output=output,
            ended=named,
            more_ended=more if isinstance(more, int) else 0,
            ended_counts=(
                {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}
            ),
        )


def run_script(
    script: str,
    cwd: Path,
    variables: Mapping[str, str],
    sink: OutputSink,
    seconds: float,
    on_start: Callable[[ScriptProcess], None],
    on_end: Callable[[ScriptProcess], None],
    sandbox: Prepared | None = None,
) -> ScriptResult:
    """Run ``script`` and end everything it started; ``on_start``/``on_end`` bracket the run.

    ``on_start`` gets the process as soon as it exists, to make it stoppable (and to wait
    for the script's pid with :meth:`ScriptProcess.wait_started`); ``on_end`` is always
    called.

    Raises:
        BaseException: Whatever interrupted the wait (Ctrl-C in this thread); the script
            and all it started are ended first.
    """
    process = ScriptProcess(script, cwd, variables, sandbox)
    try:
        on_start(process)
        return process.collect(sink, seconds, OUTPUT_CAP_BYTES)
    except BaseException:
        process.end()
        sink.discard()
        raise
    finally:
        on_end(process)
