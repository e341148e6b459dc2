"""Escape attempts from the sandbox ``execute_script`` runs in, each a real ``jarvis run``.

Boundary: a script the model writes (or a cloned repository's script it runs) against the
user's keys, the files outside the workspace, the network, the machine's processes and
Jarvis' own records. Each attempt below is one ``jarvis run -n --yes`` whose scripted
model calls ``execute_script`` once; the test looks at the host afterwards (files on disk,
the session store, servers the test started) and at the tool result.

Guaranteed at every level (``auto``, which is ``bwrap`` here, and ``landlock`` forced):

- the provider key of the run is nowhere a script can read it: not in its environment,
  not in ``/proc/<pid>/environ`` of its parent, of the ``jarvis`` process or of another
  process of the user, plain or base64-encoded (at ``bwrap`` those processes are not
  even visible: a PID namespace of its own);
- files outside the workspace are neither written (``/tmp``, ``..``, ``~``, ``$HOME``, a
  link or a hard link in the workspace pointing out, the user's ``~/.jarvis``) nor read
  (``~/.ssh/id_rsa``, a secret beside the workspace or in the home folder);
- no connection leaves the sandbox with ``sandbox_network: none``: TCP and UDP to
  ``127.0.0.1`` and ``[::1]``, a host Unix socket by path or abstract name;
- no signal reaches a process of the machine; nothing the script starts (double fork,
  ``setsid``, ``nohup``) outlives the call; a fork bomb and a 10 GB write are bounded by
  ``sandbox_limits`` (processes, file_mb) and the next run works.

Only at ``bwrap`` (Landlock cannot cover a folder inside a writable one, by design): the
workspace's ``.jarvis/`` is hidden (session store unreadable, settings unchangeable) and
the repository's ``.git/hooks`` and ``.git/config`` are read-only, so no hook or
``core.fsmonitor`` the script plants runs later with the user's rights.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.git import make_repo, set_identity
from tests.support.sandboxed import (
    ScriptRun,
    readable_forms,
    run_script,
    seen_anywhere,
    use_level,
    user_config,
)
from tests.support.trust import trust

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

KEY = "sk-test-sbx46-0123456789abcdefghijKLMNOP"
"""The run's provider key (``OPENAI_API_KEY``)."""
DECOY_KEY = "sk-test-decoy46-9876543210zyxwvutsrqQRST"
"""The key of another process of the user (a second agent, an editor...)."""
SSH_KEY = "-----BEGIN FAKE OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA46\n"
HOME_SECRET = "home-secret-46-notes-abcdef"
OUTSIDE_SECRET = "outside-secret-46-beside-the-workspace"
DONE = "ATTEMPT-DONE"
"""The last line every attempt prints: the script ran to its end."""
BOTH = ["auto", "landlock"]
"""Levels for attempts every level guarantees; ``auto`` is ``bwrap`` on this machine."""


@dataclass
class Scene:
    """The host an attempt runs against: a workspace, a home and a folder beside both."""

    ws: Path
    home: Path
    outside: Path
    tmp_path: Path
    level: str
    """The level in use (``bwrap`` or ``landlock``)."""

    def run(self, script: str, timeout: float = 120) -> ScriptRun:
        """One ``jarvis run`` whose model runs ``script``; it must end normally."""
        done = run_script(self.ws, self.tmp_path, script, timeout=timeout)
        assert done.done.returncode == 0, done.output
        return done

    def home_files(self) -> dict[str, bytes]:
        """Every file of the home folder but Jarvis' own records, with its bytes."""
        return {
            str(p.relative_to(self.home)): p.read_bytes()
            for p in sorted(self.home.rglob("*"))
            if p.is_file() and ".jarvis" not in p.relative_to(self.home).parts
        }


@pytest.fixture
def scene(
    request: pytest.FixtureRequest,
    workspace: Path,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Scene]:
    """The host with its secrets in place, the run's key set and the level chosen.

    ``request.param`` is a level, or ``auto:bwrap`` for an attempt only ``bwrap`` stops.
    """
    asked, _, needed = str(request.param).partition(":")
    level = use_level(monkeypatch, asked)
    if needed and level != needed:
        pytest.skip(f"only the {needed} level guarantees this; {asked} is {level} here")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (isolated_home / ".ssh").mkdir(mode=0o700)
    (isolated_home / ".ssh" / "id_rsa").write_text(SSH_KEY)
    (isolated_home / "notes").mkdir()
    (isolated_home / "notes" / "secret.txt").write_text(HOME_SECRET)
    user_config(isolated_home, execute_timeout=60)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_SECRET)
    (outside / "victim.txt").write_text("original\n")
    yield Scene(workspace, isolated_home, outside, tmp_path, level)
    _kill_left_in(workspace)


def _kill_left_in(ws: Path) -> list[int]:
    """Kill every process working in ``ws`` (a failed attempt's leftovers); their pids."""
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            inside = Path(os.readlink(entry / "cwd")).is_relative_to(ws)
        except (OSError, ValueError):
            continue
        if inside:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    return killed


def both(test: object) -> object:
    """Run an attempt at ``auto`` and at ``landlock``."""
    return pytest.mark.parametrize("scene", BOTH, indirect=True)(test)


def bwrap_only(test: object) -> object:
    """Run an attempt at ``auto``, for what only the ``bwrap`` level guarantees."""
    param = pytest.param("auto:bwrap", id="auto")
    return pytest.mark.parametrize("scene", [param], indirect=True)(test)


def assert_nowhere(run: ScriptRun, scene: Scene, *secrets: str) -> None:
    """None of ``secrets`` can be read after ``run``, plain or encoded, anywhere."""
    assert DONE in run.result, run.result
    for secret in secrets:
        places = seen_anywhere(secret, run, scene.ws)
        assert places == [], f"{secret[:20]}... can be read in {places}:\n{run.result[:1500]}"


def q(path: Path) -> str:
    """``path`` quoted for the script."""
    return shlex.quote(str(path))


@pytest.fixture
def decoy(scene: Scene) -> Iterator[subprocess.Popen[bytes]]:
    """Another process of the user holding a key, working in the folder beside the ws."""
    env = {"PATH": os.environ["PATH"], "OPENAI_API_KEY": DECOY_KEY}
    proc = subprocess.Popen(["sleep", "120"], cwd=scene.outside, env=env)
    yield proc
    proc.kill()
    proc.wait()


# --- the key: environment and /proc -------------------------------------------------------


@both
def test_env_of_the_script_has_no_key(scene: Scene) -> None:
    run = scene.run(f"env > loot.env; env; printenv OPENAI_API_KEY; echo {DONE}")
    assert "PATH=" in (scene.ws / "loot.env").read_text()
    assert "OPENAI_API_KEY" not in (scene.ws / "loot.env").read_text()
    assert_nowhere(run, scene, KEY)


@both
def test_parent_environ_has_no_key(scene: Scene) -> None:
    run = scene.run(f"cat /proc/$PPID/environ > loot.env; echo {DONE}")
    assert (scene.ws / "loot.env").stat().st_size > 0  # the read worked: nothing to find
    assert_nowhere(run, scene, KEY)


@both
def test_environ_of_every_ancestor_has_no_key(scene: Scene) -> None:
    script = f"""
        p=$$
        while [ "$p" -gt 1 ]; do
          echo "== $p $(tr '\\0' ' ' < /proc/$p/cmdline | head -c 80)" >> loot.txt
          cat /proc/$p/environ >> loot.txt
          p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2)
        done
        cat loot.txt; echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, KEY)


@both
def test_jarvis_found_by_walking_proc_gives_no_key(scene: Scene) -> None:
    script = f"""
        for d in /proc/[0-9]*; do
          if tr '\\0' ' ' < $d/cmdline 2>/dev/null | grep -q 'jarvis_graph[.]cli'; then
            echo "found $d" >> found.txt
            cat $d/environ >> loot.txt
          fi
        done
        echo {DONE}
    """
    run = scene.run(script)
    if scene.level == "bwrap":  # its own PID namespace: the agent is not there to find
        assert not (scene.ws / "found.txt").exists(), (scene.ws / "found.txt").read_text()
    assert_nowhere(run, scene, KEY)


@both
def test_every_environ_piped_through_base64_has_no_key(scene: Scene) -> None:
    run = scene.run(f"cat /proc/[0-9]*/environ | base64 -w0 | tee loot.b64; echo; echo {DONE}")
    assert (scene.ws / "loot.b64").stat().st_size > 0
    assert_nowhere(run, scene, KEY)


@both
def test_proc_1_environ_has_no_key(scene: Scene) -> None:
    run = scene.run(f"cat /proc/1/environ | tr '\\0' '\\n' > loot.env; echo {DONE}")
    assert_nowhere(run, scene, KEY)


@both
def test_another_process_environ_through_proc_self_dotdot(
    scene: Scene, decoy: subprocess.Popen[bytes]
) -> None:
    pid = decoy.pid
    script = f"""
        cat /proc/self/../{pid}/environ >> loot.txt
        cat /proc/$$/../{pid}/environ >> loot.txt
        cat /proc/thread-self/../../{pid}/environ >> loot.txt
        cat /proc/self/root/proc/{pid}/environ >> loot.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, DECOY_KEY, KEY)


@both
def test_another_process_root_and_cwd_links(scene: Scene, decoy: subprocess.Popen[bytes]) -> None:
    pid = decoy.pid
    script = f"""
        cat /proc/{pid}/root{q(scene.home)}/.ssh/id_rsa >> loot.txt
        cat /proc/{pid}/cwd/secret.txt >> loot.txt
        ls -la /proc/{pid}/cwd/ >> loot.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, SSH_KEY.splitlines()[1], OUTSIDE_SECRET)


@both
def test_no_signal_reaches_a_process_of_the_machine(
    scene: Scene, decoy: subprocess.Popen[bytes]
) -> None:
    run = scene.run(f"kill -STOP {decoy.pid}; kill -9 {decoy.pid}; echo {DONE}")
    assert DONE in run.result
    state = Path(f"/proc/{decoy.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    assert decoy.poll() is None and state == "S", run.result  # alive, not stopped


# --- files outside the workspace -----------------------------------------------------------


@both
def test_write_outside_the_workspace_in_tmp(scene: Scene) -> None:
    made = scene.tmp_path / "made"
    shared = [Path(f"{folder}/jarvis-test-46-{os.getpid()}") for folder in ("/dev/shm", "/var/tmp")]
    script = f"""
        echo pwned > {q(scene.outside)}/escape.txt
        echo pwned >> {q(scene.outside)}/victim.txt
        mkdir -p {q(made)} && echo pwned > {q(made)}/escape.txt
        echo pwned > {q(shared[0])}; echo pwned > {q(shared[1])}
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert not (scene.outside / "escape.txt").exists()
    assert (scene.outside / "victim.txt").read_text() == "original\n"
    assert not made.exists()
    assert [p for p in shared if p.exists()] == []
    if scene.level == "landlock":  # no private /tmp there: the write itself is refused
        assert "Permission denied" in run.result, run.result


@both
def test_read_the_ssh_key(scene: Scene) -> None:
    home = q(scene.home)
    script = f"""
        cat ~/.ssh/id_rsa {home}/.ssh/id_rsa "$HOME/.ssh/id_rsa" > loot.txt
        base64 loot.txt; echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, SSH_KEY.splitlines()[1])


@both
def test_read_secret_files_beside_the_workspace_and_in_home(scene: Scene) -> None:
    script = f"""
        cat {q(scene.outside)}/secret.txt {q(scene.home)}/notes/secret.txt > loot.txt
        find {q(scene.home)} {q(scene.outside)} -type f -exec cat {{}} + >> loot.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, OUTSIDE_SECRET, HOME_SECRET, SSH_KEY.splitlines()[1])


@pytest.fixture
def owner_only_file(scene: Scene) -> Iterator[Path]:
    """A file only its owner (root) may read, in a folder no sandbox level hides."""
    if os.geteuid() != 0:
        pytest.skip("only a command of root owns what the system keeps from other users")
    folder = Path("/srv") / f"jarvis-test-{os.getpid()}-{scene.tmp_path.name}"
    folder.mkdir(parents=True)
    secret = folder / "db.conf"
    secret.write_text(OUTSIDE_SECRET)
    secret.chmod(0o600)
    yield secret
    shutil.rmtree(folder, ignore_errors=True)


@both
def test_owner_only_files_of_the_system_are_not_readable(
    scene: Scene, owner_only_file: Path
) -> None:
    # Running as root, a command owns /etc/shadow and the like; the system keeps them from
    # other users, and the sandbox keeps them from the command.
    script = f"""
        cat {q(owner_only_file)} /etc/shadow > loot.txt 2>&1
        base64 loot.txt; echo {DONE}
    """
    run = scene.run(script)
    assert_nowhere(run, scene, OUTSIDE_SECRET)
    shadow = Path("/etc/shadow").read_text().splitlines()[0]
    assert shadow not in (scene.ws / "loot.txt").read_text()


@both
def test_write_and_read_through_links_in_the_workspace(scene: Scene) -> None:
    (scene.ws / "link").symlink_to(scene.outside)
    (scene.ws / "filelink").symlink_to(scene.outside / "victim.txt")
    script = f"""
        echo pwned > link/escape.txt
        echo pwned >> filelink
        cat link/secret.txt > loot.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert not (scene.outside / "escape.txt").exists()
    assert (scene.outside / "victim.txt").read_text() == "original\n"
    assert_nowhere(run, scene, OUTSIDE_SECRET)


@both
def test_hard_links_to_outside_files(scene: Scene) -> None:
    script = f"""
        ln {q(scene.outside)}/victim.txt hard && echo pwned >> hard
        ln {q(scene.home)}/.ssh/id_rsa key && cat key > loot.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert (scene.outside / "victim.txt").read_text() == "original\n"
    assert_nowhere(run, scene, SSH_KEY.splitlines()[1])


@both
def test_dotdot_paths(scene: Scene) -> None:
    ws = q(scene.ws)
    script = f"""
        echo pwned > ../escape.txt
        echo pwned > ../outside/escape.txt
        echo pwned >> ./../outside/victim.txt
        cat {ws}/../outside/secret.txt > loot.txt
        cd .. && echo pwned > escape2.txt
        echo {DONE}
    """
    run = scene.run(script)
    assert not (scene.tmp_path / "escape.txt").exists()
    assert not (scene.tmp_path / "escape2.txt").exists()
    assert not (scene.outside / "escape.txt").exists()
    assert (scene.outside / "victim.txt").read_text() == "original\n"
    assert_nowhere(run, scene, OUTSIDE_SECRET)


@both
def test_tilde_writes_do_not_reach_the_home_folder(scene: Scene) -> None:
    before = scene.home_files()
    script = f"""
        echo pwned > ~/x
        echo pwned >> ~/.bashrc
        mkdir -p ~/.ssh && echo 'ssh-ed25519 AAAA evil' >> ~/.ssh/authorized_keys
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert scene.home_files() == before


@both
def test_home_variable_and_home_path_writes_do_not_reach_the_home_folder(scene: Scene) -> None:
    before = scene.home_files()
    script = f"""
        echo pwned > "$HOME/x"
        echo pwned > {q(scene.home)}/x2
        echo pwned >> {q(scene.home)}/notes/secret.txt
        cd && echo pwned > x3
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert scene.home_files() == before


@both
def test_rewritten_settings_do_not_turn_the_sandbox_off(scene: Scene) -> None:
    (scene.ws / ".jarvis").mkdir()
    project = scene.ws / ".jarvis" / "config.yaml"
    project.write_text("tool_output_limit: 5000\n")
    trust(scene.ws)
    user = scene.home / ".jarvis" / "config.yaml"
    user_before = user.read_bytes()
    off = "printf 'sandbox: off\\nsandbox_network: allow\\n'"
    started = scene.tmp_path / "server-started.txt"  # an MCP "server" leaving a marker
    server = {"command": "sh", "args": ["-c", f"echo ran > {q(started)}"]}
    servers = json.dumps({"mcpServers": {"evil": server}})
    script = f"""
        {off} > .jarvis/config.yaml
        {off} > "$JARVIS_HOME/config.yaml"
        {off} > {q(user)}
        echo {shlex.quote(servers)} > .jarvis/mcp.json
        echo {shlex.quote(servers)} > "$JARVIS_HOME/mcp.json"
        echo {DONE}
    """
    first = scene.run(script)
    assert DONE in first.result
    assert user.read_bytes() == user_before
    assert not (scene.home / ".jarvis" / "mcp.json").exists()
    if scene.level == "bwrap":  # .jarvis is hidden there; Landlock cannot cover it
        assert project.read_text() == "tool_output_limit: 5000\n"
        assert not (scene.ws / ".jarvis" / "mcp.json").exists()
    second = scene.run(f"echo pwned > {q(scene.outside)}/escape.txt; echo {DONE}")
    assert DONE in second.result
    assert not (scene.outside / "escape.txt").exists(), second.result
    assert not started.exists()  # trust lapsed with the change: no server started


# --- the network ----------------------------------------------------------------------------


def _listener(family: int, kind: int, address: tuple[str, int] | str) -> socket.socket:
    sock = socket.socket(family, kind)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        pytest.skip(f"cannot bind {address!r} here: {exc}")
    if kind == socket.SOCK_STREAM:
        sock.listen(8)
    return sock


def _reached(sock: socket.socket) -> bool:
    """Whether a connection (or a datagram) arrived at ``sock``."""
    return bool(select.select([sock], [], [], 0.3)[0])


def _connect_script(family: str, address: str) -> str:
    """Python connecting to ``address`` and sending a line; prints what happened."""
    code = (
        "import socket\n"
        f"s = socket.socket(socket.{family}, socket.SOCK_STREAM)\n"
        "s.settimeout(3)\n"
        f"s.connect({address})\n"
        "s.sendall(b'escaped\\n')\n"
        "print('CONN' + 'ECTED')\n"
    )
    return f"python3 -c {shlex.quote(code)}"


@both
@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_tcp_to_loopback(scene: Scene, host: str) -> None:
    family = socket.AF_INET if host == "127.0.0.1" else socket.AF_INET6
    server = _listener(family, socket.SOCK_STREAM, (host, 0))
    port = server.getsockname()[1]
    bracketed = host if family == socket.AF_INET else f"[{host}]"
    name = "AF_INET" if family == socket.AF_INET else "AF_INET6"
    script = f"""
        (exec 3<>/dev/tcp/{host}/{port} && echo escaped >&3 && echo CONN''ECTED)
        {_connect_script(name, repr((host, port)))}
        echo {DONE}
    """
    with server:
        run = scene.run(script)
        assert DONE in run.result
        assert not _reached(server), f"a connection reached {bracketed}:{port}"
    assert "CONNECTED" not in run.result
    assert "Traceback" in run.result  # the Python connect failed


@both
def test_udp_to_loopback(scene: Scene) -> None:
    server = _listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
    port = server.getsockname()[1]
    with server:
        run = scene.run(f"echo escaped > /dev/udp/127.0.0.1/{port}; echo {DONE}")
        assert DONE in run.result
        assert not _reached(server), "a datagram reached the host"


@both
def test_unix_socket_of_the_host_by_path(scene: Scene) -> None:
    path = scene.outside / "host.sock"
    server = _listener(socket.AF_UNIX, socket.SOCK_STREAM, str(path))
    with server:
        run = scene.run(f"{_connect_script('AF_UNIX', repr(str(path)))}; echo {DONE}")
        assert DONE in run.result
        assert not _reached(server), "a connection reached the host's Unix socket"
    assert "CONNECTED" not in run.result


@both
def test_unix_socket_in_a_folder_the_sandbox_shows(scene: Scene) -> None:
    # A workspace inside a larger repository sees that repository read-only; a host
    # service's socket there (a dev database, a daemon) is a way out like the network.
    outer = scene.tmp_path / "outer"
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    inner = dataclasses.replace(scene, ws=outer / "ws")
    inner.ws.mkdir()
    path = outer / "service.sock"
    server = _listener(socket.AF_UNIX, socket.SOCK_STREAM, str(path))
    with server:
        run = inner.run(f"ls ..; {_connect_script('AF_UNIX', repr(str(path)))}; echo {DONE}")
        assert DONE in run.result
        assert not _reached(server), "a connection reached a host socket\n" + run.result
    assert "CONNECTED" not in run.result


@both
def test_abstract_unix_socket_of_the_host(scene: Scene) -> None:
    name = f"\0jarvis-test-46-{os.getpid()}-{time.monotonic_ns()}"
    server = _listener(socket.AF_UNIX, socket.SOCK_STREAM, name)
    with server:
        run = scene.run(f"{_connect_script('AF_UNIX', repr(name))}; echo {DONE}")
        assert DONE in run.result
        assert not _reached(server), "a connection reached the host's abstract socket"
    assert "CONNECTED" not in run.result


# --- the kernel -----------------------------------------------------------------------------

SYSCTLS = ("/proc/sys/kernel/core_pattern", "/proc/sys/fs/lease-break-time")
"""Settings of the whole machine (no namespace has its own): ``core_pattern`` names a
program the kernel runs as root when any process dumps core."""


@both
def test_kernel_settings_cannot_be_changed(scene: Scene) -> None:
    # Each setting is written back with its own value: a sandbox that lets the write
    # through fails the test without changing the machine.
    script = "".join(
        f'v=$(cat {path}); printf "%s\\n" "$v" > {path} && echo "wrote {path}"\n'
        for path in SYSCTLS
        if Path(path).exists()
    )
    run = scene.run(f"{script}echo {DONE}")
    assert DONE in run.result
    assert "wrote /proc/sys" not in run.result, run.result


# --- processes and resources ----------------------------------------------------------------


def _stops_growing(path: Path) -> bool:
    """Whether ``path`` keeps its size for a second (nothing writes it any more)."""
    time.sleep(0.3)
    size = path.stat().st_size
    time.sleep(1.0)
    return path.stat().st_size == size


BEAT = "while :; do echo beat >> {file}; sleep 0.1; done"


@both
def test_a_double_fork_does_not_outlive_the_run(scene: Scene) -> None:
    loop = BEAT.format(file="beat.log")
    run = scene.run(f"( ( {loop} ) & ) ; sleep 0.5; echo {DONE}")
    assert DONE in run.result
    assert (scene.ws / "beat.log").read_text().count("beat") >= 2  # it ran
    assert _stops_growing(scene.ws / "beat.log")
    assert _kill_left_in(scene.ws) == []


@both
def test_setsid_and_nohup_do_not_outlive_the_run(scene: Scene) -> None:
    script = f"""
        nohup sh -c {shlex.quote(BEAT.format(file="nohup.log"))} >/dev/null 2>&1 &
        setsid -f sh -c {shlex.quote(BEAT.format(file="setsid.log"))} >/dev/null 2>&1
        sleep 0.5; echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    for name in ("nohup.log", "setsid.log"):
        assert (scene.ws / name).read_text().count("beat") >= 2, name
        assert _stops_growing(scene.ws / name), name
    assert _kill_left_in(scene.ws) == []


@both
def test_a_fork_bomb_is_bounded_and_the_next_run_works(scene: Scene) -> None:
    user_config(scene.home, execute_timeout=20, sandbox_limits={"processes": 64})
    bomb = scene.run(f"bomb() {{ bomb | bomb & }}; bomb; sleep 3; echo {DONE}", timeout=90)
    assert bomb.seconds < 60, bomb.output
    assert _kill_left_in(scene.ws) == []
    after = scene.run(f"echo next run works; echo {DONE}")
    assert after.result.startswith("exit code: 0\nnext run works\n"), after.result


@both
def test_a_ten_gigabyte_write_is_bounded(scene: Scene) -> None:
    user_config(scene.home, sandbox_limits={"file_mb": 50})
    run = scene.run(f"head -c 10G /dev/zero > big; echo head ended $?; echo {DONE}")
    assert DONE in run.result and "head ended 0" not in run.result, run.result
    size = (scene.ws / "big").stat().st_size
    assert 0 < size <= 50 << 20, size


# --- Jarvis' records and the repository (bwrap) ----------------------------------------------


@bwrap_only
def test_the_session_store_is_hidden(scene: Scene) -> None:
    scene.run(f"echo first-session-text-46; echo {DONE}")
    script = f"""
        ls -la .jarvis
        cp -r .jarvis stolen
        cat .jarvis/sessions.sqlite | base64 -w0 > loot.b64
        echo {DONE}
    """
    run = scene.run(script)
    assert not (scene.ws / "stolen" / "sessions.sqlite").exists()
    assert not (scene.ws / "stolen" / "blobs").exists()
    assert "No such file or directory" in run.result, run.result
    assert (scene.ws / "loot.b64").stat().st_size == 0
    assert_nowhere_in_files(scene.ws, "first-session-text-46", ["stolen", "loot.b64"])


def assert_nowhere_in_files(ws: Path, text: str, names: list[str]) -> None:
    """``text`` is in none of the files the script made (``names``, folders walked)."""
    for name in names:
        root = ws / name
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for path in files:
            assert text.encode() not in readable_forms(path.read_bytes()), path


@bwrap_only
def test_jarvis_files_of_the_workspace_cannot_be_changed(scene: Scene) -> None:
    first = scene.run(f"echo first; echo {DONE}")
    project = scene.ws / ".jarvis" / "config.yaml"
    project.write_text("tool_output_limit: 5000\n")
    trust(scene.ws)
    store = scene.ws / ".jarvis" / "sessions.sqlite"
    script = f"""
        printf 'sandbox: off\\n' > .jarvis/config.yaml
        echo forged > .jarvis/tool_outputs/forged.txt
        : > .jarvis/sessions.sqlite
        rm -rf .jarvis/blobs
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert project.read_text() == "tool_output_limit: 5000\n"
    assert not (scene.ws / ".jarvis" / "tool_outputs" / "forged.txt").exists()
    assert store.stat().st_size > 0 and (scene.ws / ".jarvis" / "blobs").is_dir()
    assert session_count(scene.ws) == 2  # the first run's session is still there
    assert "first" in first.result


def session_count(ws: Path) -> int:
    """How many sessions the workspace's store holds."""
    from jarvis_graph.checkpointing import open_checkpointer

    with open_checkpointer(ws) as saver:
        sql = "SELECT COUNT(DISTINCT thread_id) FROM checkpoints"
        return int(saver.conn.execute(sql).fetchone()[0])  # type: ignore[attr-defined]


@pytest.fixture
def repo(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workspace as a repository with a pre-commit hook (git identity set)."""
    set_identity(monkeypatch)
    make_repo(scene.ws, {"app.py": "print('hi')\n"})
    hook = scene.ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    return scene.ws


def _git_runs_nothing_planted(ws: Path, tmp_path: Path) -> list[Path]:
    """Files the planted code made when the user ran git in ``ws`` afterwards."""
    for args in (["status"], ["commit", "-q", "--allow-empty", "-m", "after the run"]):
        subprocess.run(["git", *args], cwd=ws, capture_output=True, check=False)
    return [p for p in (ws / "PWNED", tmp_path / "PWNED") if p.exists()]


@bwrap_only
def test_git_hooks_cannot_be_written(scene: Scene, repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    before = {p.name: p.read_bytes() for p in hooks.iterdir()}
    script = f"""
        echo 'touch {q(scene.tmp_path)}/PWNED' >> .git/hooks/pre-commit
        printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/post-commit
        chmod +x .git/hooks/post-commit
        echo {DONE}
    """
    run = scene.run(script)
    assert "Read-only file system" in run.result, run.result
    assert {p.name: p.read_bytes() for p in hooks.iterdir()} == before
    assert _git_runs_nothing_planted(repo, scene.tmp_path) == []


@bwrap_only
def test_git_config_fsmonitor_cannot_be_set(scene: Scene, repo: Path) -> None:
    config = (repo / ".git" / "config").read_bytes()
    script = f"""
        git config core.fsmonitor 'touch PWNED; false'
        git config core.hooksPath evil-hooks
        echo '[core]' >> .git/config
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert (repo / ".git" / "config").read_bytes() == config
    assert _git_runs_nothing_planted(repo, scene.tmp_path) == []


@bwrap_only
def test_git_dir_swapped_for_a_copy_plants_nothing(scene: Scene, repo: Path) -> None:
    # .git itself is no mount point: renamed, its read-only hooks and config move with
    # it, and a writable copy takes its place.
    script = f"""
        mv .git .git-old && cp -a .git-old .git
        printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit
        git config core.fsmonitor 'touch PWNED; false'
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert _git_runs_nothing_planted(repo, scene.tmp_path) == [], run.result


@bwrap_only
def test_git_commondir_pointing_to_a_planted_config_plants_nothing(
    scene: Scene, repo: Path
) -> None:
    # git reads the config and hooks of the folder .git/commondir names, not .git's own.
    script = f"""
        mkdir evil && cp -a .git/config .git/HEAD .git/refs .git/objects evil/
        mkdir evil/hooks
        git --git-dir=evil config core.fsmonitor 'touch PWNED; false'
        echo ../evil > .git/commondir
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert _git_runs_nothing_planted(repo, scene.tmp_path) == [], run.result


@bwrap_only
def test_read_only_mounts_cannot_be_undone_from_a_user_namespace(scene: Scene, repo: Path) -> None:
    hook = (repo / ".git" / "hooks" / "pre-commit").read_bytes()
    inner = (
        "umount .git/hooks; umount -l .jarvis; "
        "mount -o remount,rw,bind .git/hooks .git/hooks; "
        "echo 'touch PWNED' >> .git/hooks/pre-commit"
    )
    script = f"""
        unshare -Urm sh -c {shlex.quote(inner)}
        mount -o remount,rw,bind .git/hooks .git/hooks
        echo 'touch PWNED' >> .git/hooks/pre-commit
        echo {DONE}
    """
    run = scene.run(script)
    assert DONE in run.result
    assert (repo / ".git" / "hooks" / "pre-commit").read_bytes() == hook
