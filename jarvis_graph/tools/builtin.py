"""Built-in tools: read_code, list_files, search_files, execute_script, ask_user.

Each tool is a plain function over a :class:`ToolEnv` (easy to test) wrapped by a thin
langchain tool that finds the environment of the current run.
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
import shutil
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from langchain_core.tools import BaseTool, tool

from jarvis_graph import sandbox, script_groups
from jarvis_graph.owned_paths import OwnedPathError, owned_dir
from jarvis_graph.sandbox import git_guard
from jarvis_graph.tools import artifacts, script_run
from jarvis_graph.tools.artifacts import ARTIFACT_KIND, Artifact, RunArtifact
from jarvis_graph.tools.base import ToolEnv, ToolInputError, current_env
from jarvis_graph.tools.script_output import OutputSink, StreamedOutput
from jarvis_graph.tools.script_run import ScriptProcess, ScriptResult, run_script
from jarvis_graph.tools.sub_runs import note_output_file
from jarvis_graph.untrusted import InputFileError, open_regular

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".jarvis"}
MAX_READ_LINES = 500
MAX_LIST_ENTRIES = 500
READ_SCAN_BYTES = 8_000_000
"""How much of a file read_code reads: a file of gigabytes is not read to show two lines."""
LIST_FILE_LINES = 100  # list_files on a file shows this many of its lines
MAX_SEARCH_RESULTS = 200

_running: set[ScriptProcess] = set()
_running_lock = threading.Lock()


def kill_running_scripts() -> int:
    """Stop every script ``execute_script`` is running (on Ctrl-C); returns how many.

    Each script's reaper ends it and everything it started; the call then raises
    :class:`ScriptInterrupted`.
    """
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        proc.stop("interrupt")
    return len(procs)


def read_code_impl(
    env: ToolEnv, path: str, start_line: int = 1, end_line: int | None = None
) -> str:
    """Numbered lines ``start_line..end_line`` of a text file (see :func:`read_code_result`)."""
    return read_code_result(env, path, start_line, end_line)[0]


def read_code_result(
    env: ToolEnv, path: str, start_line: int = 1, end_line: int | None = None
) -> tuple[str, Artifact]:
    """Numbered lines ``start_line..end_line`` of a text file, and the read's artifact.

    At most :data:`READ_SCAN_BYTES` of the file are read: a larger file shows its lines
    from that first part, without a line count (counting would read all of it).
    """
    full = env.resolve(path)
    if full.is_dir():  # models often pass a folder when they mean to look into it
        text, listing = list_files_result(env, path)
        return f"{path} is a folder, not a file.\n" + text, listing
    if not full.exists():
        msg = f"file {path!r} does not exist (looked at {full}); use list_files to find it"
        raise ToolInputError(msg)
    try:
        with open_regular(full) as handle:  # a FIFO or a device is refused unopened
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(READ_SCAN_BYTES + 1)
    except InputFileError as exc:
        msg = f"{exc}; read_code reads text files only"
        raise ToolInputError(msg) from None
    if b"\0" in data[:8192]:
        msg = f"file {path!r} looks binary ({size} bytes); read_code reads text files only"
        raise ToolInputError(msg)
    whole = len(data) <= READ_SCAN_BYTES
    if not whole:  # complete lines only (a file of one endless line keeps its start)
        data = data[: data.rfind(b"\n", 0, READ_SCAN_BYTES) + 1 or READ_SCAN_BYTES]
    decoded = data.decode("utf-8", errors="replace")
    lines = decoded.splitlines()
    total = len(lines)
    if start_line > total and not whole:
        msg = (
            f"line {start_line} is past the first {READ_SCAN_BYTES:,} bytes that read_code "
            f"reads of this {size:,}-byte file (lines 1-{total}); use search_code to find it"
        )
        raise ToolInputError(msg)
    if (
        start_line < 1
        or start_line > max(total, 1)
        or (end_line is not None and end_line < start_line)
    ):
        msg = f"bad range start_line={start_line}, end_line={end_line}; lines are 1..{total}"
        raise ToolInputError(msg)
    last = min(total, end_line or total, start_line + MAX_READ_LINES - 1)
    width = len(str(max(last, 1)))
    body = "\n".join(f"{n:>{width}} | {lines[n - 1]}" for n in range(start_line, last + 1))
    if whole:
        header = f"{path} (lines {start_line}-{last} of {total}{table_note(path, lines)})"
        left = f"{total - last} more lines" if last < total else ""
    else:
        header = f"{path} (lines {start_line}-{last}; {size:,} bytes, too large to count lines)"
        left = "more lines"
    more = f"\n[{left}; call read_code with start_line={last + 1}]" if left else ""
    artifact = artifacts.read(
        artifacts.relative(env.workspace, full),
        start_line,
        last,
        total if whole else None,
        table_rows(path, lines) if whole else None,
        decoded if whole else None,
    )
    return f"{header}\n{body}{more}", artifact


TABLE_SUFFIXES = (".csv", ".tsv")


def table_note(path: str, lines: list[str]) -> str:
    """``": a header line and 13 data rows"`` for a CSV/TSV file, else ``""``.

    Models (small ones most) count a table's lines, header included, when asked for rows.
    """
    rows = table_rows(path, lines)
    if rows is None:
        return ""
    return f": a header line and {rows} data row{'s' if rows != 1 else ''}"


def table_rows(path: str, lines: list[str]) -> int | None:
    """The non-empty lines after the header of a CSV/TSV file (``None`` for another file)."""
    if not path.lower().endswith(TABLE_SUFFIXES) or not lines:
        return None
    return sum(1 for line in lines[1:] if line.strip())


def walk_files(root: Path, hidden: bool = True, within: Path | None = None) -> Iterator[Path]:
    """Files under ``root``, sorted, without VCS, venv and cache folders.

    ``hidden=False`` also leaves out every name that starts with a dot. With ``within`` (a
    resolved folder), a symlink whose end is not inside it is left out; folders behind
    symlinks are never entered.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and (hidden or not d.startswith("."))
        )
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if (hidden or not name.startswith(".")) and _stays_within(path, within):
                yield path


def _stays_within(path: Path, within: Path | None) -> bool:
    """Whether ``path``, a link followed to its end, is inside ``within`` (``None``: anywhere)."""
    if within is None or not path.is_symlink():
        return True
    try:
        return path.resolve(strict=True).is_relative_to(within)
    except (OSError, RuntimeError):  # a dangling link or a link loop
        return False


def _bounds(env: ToolEnv) -> Path | None:
    """Where links found by a walk may lead: the workspace, unless leaving it is allowed."""
    return None if env.settings.allow_outside_workspace else env.workspace.resolve()


def list_files_impl(env: ToolEnv, path: str = ".", pattern: str = "*") -> str:
    """Files under ``path`` whose name matches ``pattern`` (see :func:`list_files_result`)."""
    return list_files_result(env, path, pattern)[0]


def list_files_result(env: ToolEnv, path: str = ".", pattern: str = "*") -> tuple[str, Artifact]:
    """Files under ``path`` (recursive) whose name matches the glob ``pattern``, and counts."""
    root = env.resolve(path)
    if root.is_file():  # models often pass a file when they mean to look into it
        text, read = read_code_result(env, path, 1, LIST_FILE_LINES)
        return f"{path} is a file, not a folder. " + text, read
    if not root.is_dir():
        msg = f"{path!r} does not exist; give a directory relative to the workspace, e.g. '.'"
        raise ToolInputError(msg)
    files = [p for p in walk_files(root, within=_bounds(env)) if fnmatch.fnmatch(p.name, pattern)]
    rel = [str(p.relative_to(root)) for p in files]
    artifact = artifacts.listing(
        artifacts.relative(env.workspace, root),
        pattern,
        [p.relative_to(root).as_posix() for p in files],
        MAX_LIST_ENTRIES,
    )
    if not rel:
        return f"no files matching {pattern!r} under {path}", artifact
    shown = rel[:MAX_LIST_ENTRIES]
    extra = len(rel) - len(shown)
    tail = f"\n[{extra} more; narrow with path or pattern]" if extra else ""
    return f"{_count_line(rel, path)}:\n" + "\n".join(shown) + tail, artifact


def _count_line(rel: list[str], path: str) -> str:
    """``7 files under docs (5 .md, 2 .txt)``: counts per extension, as models count badly."""
    head = f"{len(rel)} file{'s' if len(rel) != 1 else ''} under {path}"
    kinds = Counter(PurePosixPath(r).suffix or "no extension" for r in rel)
    if len(kinds) < 2:
        return head
    return head + " (" + ", ".join(f"{n} {kind}" for kind, n in kinds.most_common()) + ")"


def search_files_impl(env: ToolEnv, pattern: str, path: str = ".", glob: str = "*") -> str:
    """Lines matching the regular expression ``pattern`` (see :func:`search_files_result`)."""
    return search_files_result(env, pattern, path, glob)[0]


def search_files_result(
    env: ToolEnv, pattern: str, path: str = ".", glob: str = "*"
) -> tuple[str, Artifact]:
    """Lines matching the regular expression ``pattern`` in files under ``path``, and hits.

    A pattern that is a file-name glob answers with the files it names: a listing.
    """
    root = env.resolve(path)
    if not root.exists():
        msg = f"{path!r} does not exist; give a directory or file relative to the workspace"
        raise ToolInputError(msg)
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        if _NAME_GLOB.match(pattern) and root.is_dir():  # '*.md': the files it names
            text, listing = list_files_result(env, path, pattern)
            return (
                f"{pattern!r} is a file name pattern, not text to find inside files "
                "(search_files searches contents); the files it names, as list_files "
                f"gives them:\n{text}"
            ), listing
        msg = f"invalid regular expression {pattern!r}: {exc}; escape special characters"
        raise ToolInputError(msg) from exc

    def found(hits: list[str], searched: str) -> Artifact:
        def where(label: str) -> str:
            return artifacts.relative(env.workspace, root if root.is_file() else root / label)

        place = artifacts.relative(env.workspace, root)
        return artifacts.search(searched, place, glob, hits, where)

    hits = _search(env, regex, root, path, glob)  # one file: its matching lines
    if (
        not hits
        and root.is_dir()
        and glob not in ("", "*")
        and not _any_named(root, glob, _bounds(env))
    ):
        return (
            f"no file under {path} has a name matching the glob {glob!r}, so nothing was "
            f"searched: glob filters file names (as in '*.log'), pattern is the text to find "
            "inside the files"
        ), found([], pattern)
    if not hits and "\\\\" in pattern:  # TODO\\(: backslashes doubled, as in JSON text
        single = pattern.replace("\\\\", "\\")
        doubled = _search(env, _compiled(single), root, path, glob)
        if doubled:
            return f"(read as {single!r}: the pattern's backslashes were doubled)\n" + (
                _format_hits(doubled, single, path)
            ), found(doubled, single)
    if (
        not hits
        and _NAME_GLOB.match(pattern)
        and root.is_dir()
        and _any_named(root, pattern, _bounds(env))
    ):
        text, listing = list_files_result(env, path, pattern)
        return (
            f"no lines match {pattern!r} under {path}; as a file name pattern it names "
            f"these files, as list_files gives them:\n{text}"
        ), listing
    return _format_hits(hits, pattern, path), found(hits, pattern)


def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _search(
    env: ToolEnv, regex: re.Pattern[str] | None, root: Path, path: str, glob: str
) -> list[str]:
    """Lines matching ``regex`` in ``root``, a file or a folder (``[]`` for no regex)."""
    if regex is None:
        return []
    if root.is_file():
        return _search_file(regex, root, path)
    rg = shutil.which("rg")
    hits = _search_rg(rg, regex.pattern, root, glob) if rg else None
    if hits is None:  # no rg, or rg rejected a pattern Python accepts (look-around, ...)
        hits = _search_py(regex, root, glob, _bounds(env))
    return hits


_NAME_GLOB = re.compile(r"^[\w.\-\[\]]*[*?][\w.*?\-\[\]]*$")
"""A file-name glob (``*.md``, ``test_*.py``) given where a regular expression belongs: as
a regular expression it is invalid (nothing to repeat), as a glob it is clear."""


def _any_named(root: Path, glob: str, within: Path | None) -> bool:
    """Whether a file under ``root`` has a name (or relative path) matching ``glob``."""
    return any(_named(file, root, glob) for file in walk_files(root, within=within))


def _named(file: Path, root: Path, glob: str) -> bool:
    """Whether ``file``'s name, or its path relative to ``root``, matches ``glob`` (as rg)."""
    return fnmatch.fnmatch(file.name, glob) or fnmatch.fnmatch(
        file.relative_to(root).as_posix(), glob
    )


def _format_hits(hits: list[str], pattern: str, path: str) -> str:
    """Matches with a count first (models count badly); a hint when nothing matched."""
    if not hits:
        hint = ""
        if "*" in pattern and "." in pattern:  # looks like a file-name glob
            hint = "; search_files searches file contents: find files by name with list_files"
        return f"no matches for {pattern!r} under {path}{hint}"
    files = len({hit.split(":", 1)[0] for hit in hits})
    shown = hits[:MAX_SEARCH_RESULTS]
    more = len(hits) - len(shown)
    extra = f"\n[{more} more matches; narrow the search]" if more else ""
    lines = "line" if len(hits) == 1 else "lines"
    head = f"{len(hits)} matching {lines} in {files} file{'s' if files > 1 else ''}:\n"
    return head + "\n".join(shown) + extra


def _search_rg(rg: str, pattern: str, root: Path, glob: str) -> list[str] | None:
    # Without --follow, ripgrep skips symlinks in the tree (they may lead out of the
    # workspace); --no-config keeps a user's ripgreprc from adding --follow.
    cmd = [rg, "--no-config", "--line-number", "--no-heading", "--color=never", "--glob", glob]
    cmd += [f"--glob=!{d}" for d in sorted(SKIP_DIRS)]
    proc = subprocess.run(
        [*cmd, "--", pattern, "."], cwd=root, capture_output=True, text=True, timeout=60
    )
    if proc.returncode > 1:  # 1 means "no match"; 2 is an error
        return None
    return [line.removeprefix("./") for line in proc.stdout.splitlines()]


def _search_file(regex: re.Pattern[str], file: Path, label: str) -> list[str]:
    """Matching lines of one text file as ``label:line:text`` (binary files: none)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    if "\0" in text[:8192]:  # binary, as ripgrep and read_code see it
        return []
    lines = text.splitlines()
    return [f"{label}:{n}:{line}" for n, line in enumerate(lines, 1) if regex.search(line)]


def _search_py(regex: re.Pattern[str], root: Path, glob: str, within: Path | None) -> list[str]:
    hits: list[str] = []
    for file in walk_files(root, within=within):
        if _named(file, root, glob):
            hits.extend(_search_file(regex, file, str(file.relative_to(root))))
            if len(hits) > MAX_SEARCH_RESULTS * 5:
                break
    return hits


class ScriptInterrupted(KeyboardInterrupt):
    """The script was killed because the user interrupted the run (not a tool error)."""


def execute_script_impl(
    env: ToolEnv,
    script: str,
    timeout: float | None = None,
    cwd: str = ".",
    network: bool = False,
) -> str:
    """Run ``script`` with bash in the workspace (see :func:`execute_script_result`)."""
    return execute_script_result(env, script, timeout, cwd, network)[0]


def execute_script_result(
    env: ToolEnv,
    script: str,
    timeout: float | None = None,
    cwd: str = ".",
    network: bool = False,
) -> tuple[str, RunArtifact]:
    """Run ``script`` with bash in the workspace; report exit code and combined output.

    The script runs in the OS sandbox (:mod:`jarvis_graph.sandbox`; ``network`` asks for
    the machine's network, which a confirmation grants). Everything the script starts is
    ended when the call returns (see :mod:`jarvis_graph.tools.script_reaper`); the output
    streams to a file under ``.jarvis/tool_outputs/`` once it is longer than the tool
    result may be.
    """
    if not script.strip():
        msg = "script is empty; pass the shell commands to run"
        raise ToolInputError(msg)
    limit, limit_note = time_limit(timeout, env.settings.execute_timeout)
    workdir = env.resolve(cwd)
    settings = env.settings
    if network and settings.sandbox_network != "allow":
        settings = settings.model_copy(update={"sandbox_network": "allow"})
    # Recorded in the session store: a run killed with kill -9 leaves an unsandboxed
    # script's group running (a sandboxed one ends with it), and the resumed run ends it
    # before starting the call again.
    call = script_groups.current_call(env.workspace, env.settings.checkpoint_url)
    note = script_groups.before_run(call) if call else ""
    head = "".join(f"{line}\n" for line in (note, limit_note) if line)
    variables = env.script_environment()  # no provider keys or other secrets
    if call:  # marks the script and its children as the thread's, even before it is recorded
        variables |= script_groups.script_env(call)
    try:
        owned_dir(env.workspace, ".jarvis/reports")  # exist before the sandbox hides .jarvis
        confined = sandbox.prepare_for(settings, env.workspace, workdir, variables)
    except (sandbox.SandboxUnavailable, OwnedPathError) as exc:
        raise ToolInputError(str(exc)) from None
    sink = OutputSink(
        env.secret_values, env.settings.tool_output_limit, env.outputs_dir(), "execute_script"
    )
    shell: list[int] = []  # the script's pid, once the reaper has started it

    def on_start(process: ScriptProcess) -> None:
        with _running_lock:  # stoppable by Ctrl-C from now on
            _running.add(process)
        main = process.wait_started()
        shell.extend([main] if main is not None else [])
        if call and main is not None:
            script_groups.started(call, main)

    def on_end(process: ScriptProcess) -> None:
        if call and process.main is not None:
            script_groups.finished(call, process.main)
        with _running_lock:
            _running.discard(process)

    git_before = git_guard.redirects(env.workspace) if confined.level != "off" else set()
    try:
        result = run_script(script, workdir, variables, sink, limit, on_start, on_end, confined)
    finally:
        undone = [] if confined.level == "off" else _undo_redirects(env, git_before)
    if result.stopped == "interrupt":  # no result is recorded: a resumed run runs it again
        if result.output.path is not None:
            result.output.path.unlink(missing_ok=True)
        msg = "the script was killed because the run was interrupted"
        raise ScriptInterrupted(msg)
    if result.output.path is not None:
        note_output_file(result.output.path)
    tail = "".join(f"\nnote: {line}" for line in undone)
    text, shown = _script_report(env, result, head, limit, script, workdir)
    saved = artifacts.relative(env.workspace, result.output.path) if result.output.path else None
    artifact = artifacts.run(
        script,
        result.returncode,
        shown,
        output_file=saved,
        timed_out=result.stopped == "timeout",
        shell_started=bool(shell),
    )
    return text + tail, artifact


def _undo_redirects(env: ToolEnv, before: set[Path]) -> list[str]:
    """Undo a git redirect the script planted (see :mod:`jarvis_graph.sandbox.git_guard`)."""
    try:
        return git_guard.undo_new_redirects(env.workspace, before)
    except OSError as exc:  # the note still reaches the model and the user
        return [f"a git redirect file the script made could not be moved away: {exc}"]


def time_limit(asked: float | None, ceiling: float) -> tuple[float, str]:
    """The seconds a script may run: the model may ask for less than the user's setting.

    Returns:
        The limit and a note for the model when its value was lowered (``""`` if not).

    Raises:
        ToolInputError: ``asked`` is not a number of seconds above 0.
    """
    if asked is None:
        return ceiling, ""
    if math.isnan(asked) or asked <= 0:
        msg = (
            f"timeout must be a number of seconds above 0 and at most {ceiling:g} "
            f"(execute_timeout), got {asked!r}; leave it out to use {ceiling:g} s"
        )
        raise ToolInputError(msg)
    if asked > ceiling:
        return ceiling, (
            f"note: the timeout you asked for, {asked:g} s, is more than the configured limit "
            f"of {ceiling:g} s (execute_timeout); the script ran with {ceiling:g} s."
        )
    return asked, ""


EXIT_LINE = "exit code: {}\n"
"""The line of a script's result that says how it ended (before its output)."""


def _script_report(
    env: ToolEnv, result: ScriptResult, head: str, limit: float, script: str, workdir: Path
) -> tuple[str, str]:
    """The tool result: how the script ended, its output (cut to fit) and what was ended.

    Returns:
        The whole text, and the output as it shows it.
    """
    if result.stopped == "timeout":
        first = f"{head}timed out after {limit:g} s (process killed)\noutput so far:\n"
    elif result.stopped == "cap":
        cap = script_run.OUTPUT_CAP_BYTES
        first = (
            f"{head}stopped: its output passed the cap of {cap} bytes (process killed); "
            f"the first {cap} bytes are kept\noutput so far:\n"
        )
    else:
        first = f"{head}{EXIT_LINE.format(result.returncode)}"
    hint = _run_file_hint(script, workdir) if result.returncode == 127 else ""
    ended = _ended_note(result)
    body = _fitted_output(env, result.output, len(first) + len(hint) + len(ended))
    if ended and body and not body.endswith("\n"):
        ended = "\n" + ended
    return f"{first}{body}{hint}{ended}", body


def _ended_note(result: ScriptResult) -> str:
    """``[ended 2 background processes the script left running: sleep (pid 41), ...]``."""
    count = len(result.ended) + result.more_ended
    if not count:
        return ""
    names = ", ".join(f"{name} (pid {pid})" for pid, name in result.ended)
    if result.more_ended:  # too many to name: how many of each
        names = ", ".join(
            f"{name} ({n} process{'es' if n > 1 else ''})"
            for name, n in result.ended_counts.items()
        )
        shown = sum(result.ended_counts.values())
        names += f" and {count - shown} more" if count > shown else ""
    noun = "process" if count == 1 else "processes"
    if result.stopped:
        return f"[also ended {count} {noun} the script had started: {names}]\n"
    return f"[ended {count} background {noun} the script left running: {names}]\n"


def _fitted_output(env: ToolEnv, output: StreamedOutput, fixed: int) -> str:
    """The output whole, or its head and tail around a note naming the saved file.

    Head and tail are cut so the whole result stays within ``tool_output_limit``, so the
    output is not saved a second time when the result is limited after the call.
    """
    if output.path is None and not output.unsaved:
        return output.head
    try:
        where = str(output.path.relative_to(env.workspace)) if output.path else ""
    except ValueError:
        where = str(output.path)

    def note(omitted: int, hint: bool) -> str:
        whole = f"the whole output ({output.chars} characters)"
        if not where:
            return (
                f"\n[... {omitted} characters omitted; {whole} was not saved: {output.unsaved}]\n"
            )
        how = ": read it with read_code or search_files" if hint else ""
        return f"\n[... {omitted} characters omitted; {whole} is saved in {where}{how}]\n"

    limit = env.settings.tool_output_limit
    # The hint is left out when it would take much of a small limit's room for output.
    hint = limit - fixed - len(note(output.chars, True)) >= limit // 2
    room = max(0, limit - fixed - len(note(output.chars, hint)))
    keep_head = min(len(output.head), room * 2 // 3)
    keep_tail = min(len(output.tail), room - keep_head)
    tail = output.tail[len(output.tail) - keep_tail :]
    return output.head[:keep_head] + note(output.chars - keep_head - keep_tail, hint) + tail


INTERPRETERS = {".py": "python3", ".sh": "bash", ".js": "node", ".rb": "ruby", ".pl": "perl"}
"""The interpreter that runs a script file, by its suffix."""


def _run_file_hint(script: str, workdir: Path) -> str:
    """How to run a file that was given as a command (``compute.py`` alone: "not found")."""
    words = script.split()
    name = words[0] if words else ""
    interpreter = INTERPRETERS.get(PurePosixPath(name).suffix.lower())
    target = (workdir / name).resolve()
    if interpreter is None or not target.is_relative_to(workdir.resolve()) or not target.is_file():
        return ""
    command = " ".join([interpreter, *words])
    return f"\n[{name} is a file, not a command: run it with `{command}`]"


@tool(parse_docstring=True, response_format="content_and_artifact")
def read_code(path: str, start_line: int = 1, end_line: int | None = None) -> tuple[str, Artifact]:
    """Read a text file with line numbers.

    Args:
        path: File path, relative to the workspace root.
        start_line: First line to show (1-based).
        end_line: Last line to show; omit for the end of the file (at most 500 lines a call).
    """
    return read_code_result(current_env(), path, start_line, end_line)


@tool(parse_docstring=True, response_format="content_and_artifact")
def list_files(path: str = ".", pattern: str = "*") -> tuple[str, Artifact]:
    """List files recursively under a directory, skipping .git, .venv and similar.

    Args:
        path: Directory relative to the workspace root.
        pattern: Glob on file names, e.g. "*.py".
    """
    return list_files_result(current_env(), path, pattern)


@tool(parse_docstring=True, response_format="content_and_artifact")
def search_files(pattern: str, path: str = ".", glob: str = "*") -> tuple[str, Artifact]:
    """Search file contents with a regular expression; returns file:line:text.

    Args:
        pattern: Regular expression to look for.
        path: Directory relative to the workspace root.
        glob: Only search files whose name matches this glob, e.g. "*.c".
    """
    return search_files_result(current_env(), pattern, path, glob)


@tool(parse_docstring=True, response_format="content_and_artifact")
def execute_script(
    script: str, timeout: float | None = None, network: bool = False
) -> tuple[str, RunArtifact]:
    """Run a bash script in the workspace and return its exit code and output.

    It normally runs in a sandbox: it may change workspace files only, with no network.

    Args:
        script: The bash command line to run, e.g. `python3 main.py` or `ls -l`.
        timeout: Seconds before the script is killed; omit it for the configured limit
            (a longer one is not granted).
        network: True only if the script needs the internet (e.g. `pip install`); the
            user is asked to allow it.
    """
    return execute_script_result(current_env(), script, timeout, network=network)


@tool(parse_docstring=True)
def ask_user(question: str) -> str:
    """Ask the user a question and wait for the answer.

    Args:
        question: What you need to know from the user.
    """
    # Interactive runs answer this call in the confirm_tools node, before any tool runs;
    # it only executes here when nobody can answer.
    return (
        "No user is available to answer (non-interactive run). Decide yourself using the "
        "information you have, and say in your answer what you assumed."
    )


execute_script.metadata = {
    "risky": True,
    "runs_code": True,
    "sandboxed": True,
    ARTIFACT_KIND: "run",
}
read_code.metadata = {ARTIFACT_KIND: "read"}
list_files.metadata = {ARTIFACT_KIND: "listing"}
search_files.metadata = {ARTIFACT_KIND: "search"}
ask_user.metadata = {"asks_user": True}

BUILTIN_TOOLS: list[BaseTool] = [read_code, list_files, search_files, execute_script, ask_user]
