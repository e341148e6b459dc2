"""The small program between the agent and a script: it ends everything the script started.

Run as ``python -I -S script_reaper.py REPORT_FD SCRIPT [UNSET]`` (standard library only, so it
starts in milliseconds and sees nothing of the agent). It runs ``bash -c SCRIPT`` as its
child and, when bash has exited or the program is asked to stop (SIGTERM), ends every
process the script left behind, then writes a JSON report to ``REPORT_FD``: bash's wait
status and the processes it ended.

Why a process of its own: a process group is not enough, since ``setsid`` or ``nohup
... &`` (plus ``setsid``) leave it, and once their parent has exited they belong to init,
where nothing can tell them from the rest of the machine. On Linux this program makes
itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): every orphan among its
descendants is re-parented to it instead of init, so "my descendants" is exactly "what
the script started", found by following parent links in ``/proc``, whatever session or
group each is in. They are killed round by round (a process may fork between a scan and
its kill: the next round finds the child) until the program has no child left. Where
there is no ``/proc`` or ``prctl``, the script's process group is killed, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections import Counter

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
MAX_REPORTED = 20
"""Processes named in the report; the rest are counted."""
CONFINE_FAILED = 125
"""Exit code when the sandbox could not be applied (the script did not run)."""
MAX_ROUNDS = 200
"""Kill rounds before giving up on a process that keeps forking (a fork bomb)."""


class Stop(Exception):
    """The agent asked the script to stop (timeout, output cap, Ctrl-C)."""


def _stop(signum: int, frame: object) -> None:
    raise Stop


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children; whether that worked (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, tuple[int, str]]:
    """Every live process's parent and name, from /proc (``{}`` without /proc)."""
    found: dict[int, tuple[int, str]] = {}
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return found
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                raw = stat.read().decode("utf-8", "replace")
        except OSError:  # ended meanwhile
            continue
        comm = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        if fields and fields[0] not in ("Z", "X"):
            found[int(name)] = (int(fields[1]), comm)
    return found


def descendants(root: int) -> dict[int, str]:
    """Live descendants of ``root`` (pid to name), by parent links in /proc."""
    table = _parents()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found[pid] = table[pid][1]
            todo += children.get(pid, [])
    return found


def _reap() -> bool:
    """Collect ended children; whether any child (running or not) remains."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def end_all(main: int | None, subreaper: bool) -> dict[int, str]:
    """Kill every descendant until none is left; the ones ended (``main`` aside).

    A subreaper without a child has no descendant either (every orphan among them would
    be its child): then /proc, whose scan grows with the machine's processes, is not read.
    """
    ended: dict[int, str] = {}
    me = os.getpid()
    for _ in range(MAX_ROUNDS):
        if subreaper and not _reap():
            break
        found = descendants(me)  # named before they are killed: the report names them
        for pid, name in found.items():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            if pid != main:
                ended.setdefault(pid, name)
        if main is not None:  # without /proc, the script's group is all there is to find
            with contextlib.suppress(OSError):
                os.killpg(main, signal.SIGKILL)
        if not _reap():
            break
        time.sleep(0.005)  # killed processes need a moment before they can be reaped
    return ended


def run(script: str, report: int) -> tuple[int | None, dict[int, str], bool]:
    """Run the script; ``(wait status or None, processes ended, whether stopped)``.

    The script's pid goes to ``report`` at once, as a first line: the agent records the
    script's process group (its pid) where a later run can end it.
    """
    subreaper = become_subreaper()  # where it cannot, the script's group is ended as before
    stopped = False
    status: int | None = None
    # The script gets default signal handling (Python ignores SIGPIPE; ``yes | head``
    # relies on it) and a process group of its own, led by bash, as scripts always had.
    defaults = [signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
    main: int | None = None
    try:
        main = os.posix_spawnp(
            "bash", ["bash", "-c", script], os.environ, setpgroup=0, setsigdef=defaults
        )
        os.write(report, json.dumps({"main": main}).encode() + b"\n")
        while status is None:
            pid, wait_status = os.waitpid(-1, 0)  # adopted orphans are reaped on the way
            if pid == main:
                status = wait_status
    except Stop:  # also during the start: bash, if it started, is found as a child
        stopped = True
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)  # a second stop must not interrupt the cleanup
    return status, end_all(main, subreaper), stopped


def confine(policy: str) -> str:
    """Apply a sandbox policy to this process (see ``sandbox/confine.py``); ``""`` or why not.

    The confining module is loaded by its path: the reaper runs isolated (``-I``), with
    no package on its path, so that it starts fast and sees nothing of the agent.
    """
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "sandbox", "confine.py")
    spec = importlib.util.spec_from_file_location("jarvis_sandbox_confine", path)
    if spec is None or spec.loader is None:
        return f"sandbox: {path} cannot be loaded"
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        module.apply(json.loads(policy))
    except (OSError, ValueError, module.ConfineError) as exc:
        return f"sandbox: {exc}; the script was not run"
    return ""


def main(argv: list[str]) -> int:
    """Entry point: ``script_reaper.py REPORT_FD SCRIPT [UNSET [POLICY]]``.

    ``UNSET`` names (comma-separated) variables Python set at its start that the script
    was not given: in the C locale Python adds ``LC_CTYPE`` (PEP 538). ``POLICY`` is a
    sandbox policy (JSON) applied before the script starts.
    """
    report, script = int(argv[1]), argv[2]
    for name in filter(None, (argv[3] if len(argv) > 3 else "").split(",")):
        os.environ.pop(name, None)
    os.set_inheritable(report, False)  # the script must not hold the report open
    if len(argv) > 4 and argv[4]:
        refused = confine(argv[4])
        if refused:
            print(refused, flush=True)
            with contextlib.suppress(OSError):
                os.write(report, json.dumps({"refused": refused}).encode() + b"\n")
            return CONFINE_FAILED
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    status, ended, stopped = run(script, report)
    names = sorted(ended.items())
    summary = {
        "status": status,
        "stopped": stopped,
        "ended": [[pid, name] for pid, name in names[:MAX_REPORTED]],
        "more": max(0, len(names) - MAX_REPORTED),
        "counts": dict(Counter(name for _, name in names).most_common(MAX_REPORTED)),
    }
    # The agent may be gone (kill -9): the cleanup above is what mattered.
    with contextlib.suppress(OSError):
        os.write(report, json.dumps(summary).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
