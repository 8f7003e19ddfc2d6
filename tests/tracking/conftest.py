"""Fixtures for tracking tests: isolated SQLite stores and a real ``mlflow server``.

Creating MLflow's SQLite schema takes several seconds on a small machine, so one migrated
database is made per session and copied for each test: every test still gets its own store
(``sqlite:///{tmp_path}/mlflow.db``, artifacts in ``tmp_path/mlartifacts``).
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
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))





def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MlflowServer:
    """A real ``mlflow server`` on 127.0.0.1 with a SQLite backend, started and stopped by pid."""

    def __init__(self, root: Path, db: Path, port: int):
        self.root, self.db, self.port = root, db, port
        self.proc: subprocess.Popen | None = None
        self.log = root / "server.log"

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        cmd = [sys.executable, "-m", "mlflow", "server",
               "--backend-store-uri", f"sqlite:///{self.db}",
               "--artifacts-destination", str(self.root / "mlartifacts"),
               "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.root, stdout=log, stderr=subprocess.STDOUT,
                                         env=env, start_new_session=True)
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
        raise RuntimeError(f"mlflow server not healthy after {timeout} s: "
                           f"{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        pgid = os.getpgid(proc.pid)
        os.killpg(pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            proc.wait(timeout=10)
        # The job-runner child shares the process group; make sure none is left behind.
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def mlflow_server(tmp_path, migrated_db):
    root = tmp_path / "server"
    root.mkdir()
    db = root / "mlflow.db"
    shutil.copyfile(migrated_db, db)
    server = MlflowServer(root, db, free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
