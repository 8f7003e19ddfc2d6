"""A real ``mlflow server`` on 127.0.0.1 for tests: started on a copy of a migrated SQLite store,
stopped or killed by its pid (the uvicorn child that ``mlflow server`` starts shares its process
group).

Used by ``tests/tracking`` (one server per test) and ``tests/faults`` (one per module).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["MlflowServer", "free_port", "dead_uri", "served"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dead_uri() -> str:
    """A URI where nothing listens (a port just freed): every request is refused at once."""
    return f"http://127.0.0.1:{free_port()}"


class MlflowServer:
    """A real ``mlflow server`` on 127.0.0.1 with a SQLite backend, started and stopped by pid."""

    def __init__(self, root: Path, db: Path, port: int):
        self.root, self.db, self.port = root, db, port
        self.proc: subprocess.Popen | None = None
        self.log = root / "server.log"

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self, timeout: float = 60.0) -> None:
        cmd = [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            f"sqlite:///{self.db}",
            "--artifacts-destination",
            str(self.root / "mlartifacts"),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            "1",
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
        # No job-execution runner (a huey consumer process importing MLflow, for the server's
        # GenAI jobs, which no test uses): a second interpreter's start-up on every server start.
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.root,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.uri + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(
            f"mlflow server not healthy after {timeout} s: {self.log.read_text()[-2000:]}"
        )

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(os.getpgid(self.proc.pid), sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the server and its uvicorn child (its process group), as a crash would."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            self.proc = proc
            self._signal_group(signal.SIGKILL)
            self.proc = None
        proc.wait(timeout=10)

    def stop(self, grace: float = 2.0) -> None:
        """SIGTERM the server's process group, then SIGKILL what is left after ``grace``
        seconds: uvicorn waits for its open keep-alive connections (a browser's, a client's
        pool) up to the whole wait, which cost 8-10 s a stop."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is not None:
            self.proc = None
            return
        pgid = os.getpgid(proc.pid)
        os.killpg(pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            proc.wait(timeout=10)
        # The uvicorn child shares the process group; make sure none is left behind.
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc = None


@contextmanager
def served(root: Path, migrated_db: Path) -> Iterator[MlflowServer]:
    """A server on a copy of ``migrated_db`` in ``root`` (created), killed on exit: the test is
    over and its store thrown away, so nothing is gained by :meth:`MlflowServer.stop`'s grace,
    which uvicorn spends whole waiting on the client's keep-alive connections."""
    root.mkdir(parents=True, exist_ok=True)
    db = root / "mlflow.db"
    shutil.copyfile(migrated_db, db)
    server = MlflowServer(root, db, free_port())
    server.start()
    try:
        yield server
    finally:
        server.kill()
