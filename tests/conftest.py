"""Shared fixtures: paths to the project's shared data and worked examples, and isolated MLflow
stores.

The real MovieLens files and the worked examples live outside the repository, in ``shared/`` next
to it (``<repo>/../shared``). ``RECOEVAL_SHARED_DATA`` overrides the data folder and
``RECOEVAL_SEED_EXAMPLES`` the worked-examples file. Tests that need them are skipped when they
are missing, never failed.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
SHARED_ROOT = (REPO_ROOT / ".." / "shared").resolve()

# Make the slow reference (tests/reference.py) importable from every test folder.
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


def shared_data_dir() -> Path:
    """The MovieLens folder: ``$RECOEVAL_SHARED_DATA`` or ``<repo>/../shared/data``."""
    env = os.environ.get("RECOEVAL_SHARED_DATA")
    return Path(env).resolve() if env else SHARED_ROOT / "data"


def seed_examples_path() -> Path:
    """The worked examples: ``$RECOEVAL_SEED_EXAMPLES`` or ``<repo>/../shared/reference/seed_examples.json``."""
    env = os.environ.get("RECOEVAL_SEED_EXAMPLES")
    return Path(env).resolve() if env else SHARED_ROOT / "reference" / "seed_examples.json"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the shared MovieLens folder (``ml-100k/``, ``ml-latest-small/``...); skips if absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"shared MovieLens data not found at {path} (set RECOEVAL_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def seed_examples_file() -> Path:
    """Path of ``seed_examples.json``; skips if absent."""
    path = seed_examples_path()
    if not path.is_file():
        pytest.skip(f"worked examples not found at {path} (set RECOEVAL_SEED_EXAMPLES)")
    return path


@pytest.fixture(scope="session")
def seed_examples(seed_examples_file: Path) -> dict[str, Any]:
    """The parsed worked examples, with the cases also indexed by name under ``"by_name"``."""
    data = json.loads(seed_examples_file.read_text(encoding="utf-8"))
    data["by_name"] = {case["name"]: case for case in data["cases"]}
    return data


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml): a worker gets whole files (``--dist loadfile``), so a run of
    test files named on the command line needs no more workers than files, and a run of one
    file runs in this process (no worker to start). Otherwise pytest-xdist's count, one per
    core."""
    files = {arg.split("::")[0] for arg in config.args}
    if files and all(f.endswith(".py") for f in files):
        return 0 if len(files) == 1 else min(len(files), os.cpu_count() or 1)
    return None


#: Folders whose files share one expensive per-process resource and so run on one worker, one
#: after the other, first in the queue: tests/spark's JVM (a package-scoped session; a second
#: worker would start a second JVM, ~8 s and 1 GiB).
_ONE_WORKER = ("tests/spark/",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the files of :data:`_ONE_WORKER`'s folders as one unit of work,
    queued first (the longest unit: the other worker takes the rest meanwhile); every other
    file is a unit of its own, in pytest-xdist's order. Other ``--dist`` modes: xdist's."""
    if config.getoption("dist", "no") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class _Scheduler(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return next((f for f in _ONE_WORKER if path.startswith(f)), path)

        def _assign_work_unit(self, node: Any) -> None:
            if not getattr(self, "_ours_first", False):  # the first unit given out
                self._ours_first = True
                for scope in reversed(_ONE_WORKER):
                    if scope in self.workqueue:
                        self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return _Scheduler(config, log)


@pytest.fixture(autouse=True)
def _no_ambient_tracking(monkeypatch):
    """Tests never fall back on the user's MLflow store or environment."""
    for var in (
        "MLFLOW_TRACKING_URI",
        "MLFLOW_RUN_ID",
        "MLFLOW_EXPERIMENT_NAME",
        "MLFLOW_EXPERIMENT_ID",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory) -> Path:
    """An empty MLflow SQLite store with its schema created. Creating the schema takes several
    seconds on a small machine, so it is made once per session and copied for each test."""
    from mlflow import MlflowClient

    path = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def store_uri(tmp_path, migrated_db) -> str:
    """A store of the test's own: ``sqlite:///{tmp_path}/mlflow.db``."""
    db = tmp_path / "mlflow.db"
    shutil.copyfile(migrated_db, db)
    return f"sqlite:///{db}"


# ---------------------------------------------------------------------------------------------
# The fault tests' table of counts (tests/faults): each test's report carries the rows it
# recorded, so the table is whole whether the tests ran here or on pytest-xdist's workers.
# ---------------------------------------------------------------------------------------------

_FAULT_ROWS: list[dict[str, Any]] = []
FAULT_COLUMNS = [
    "scenario",
    "jobs",
    "runs",
    "parents",
    "duplicates",
    "deleted",
    "running",
    "pending",
    "lost",
]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    from commands import FAULT_ROW

    if report.when == "call":
        _FAULT_ROWS.extend(row for name, row in report.user_properties if name == FAULT_ROW)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _FAULT_ROWS:
        return
    rows, cols = _FAULT_ROWS, FAULT_COLUMNS
    terminalreporter.section("fault scenarios: counts")
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    terminalreporter.write_line("  ".join(c.ljust(widths[c]) for c in cols))
    for row in rows:
        terminalreporter.write_line("  ".join(str(row.get(c, "")).ljust(widths[c]) for c in cols))
    out = os.environ.get("RECOEVAL_FAULT_TABLE")
    if out:
        Path(out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


# A library's background thread (Dask's scheduler, py4j's) that logs after the test it started
# in has ended writes to that test's closed capture stream; logging then prints "--- Logging
# error ---" and a 40-line stack (45 of them in a run). Those writes are dropped; any other
# logging error is reported as before.
_handle_error = logging.Handler.handleError


def _handle_error_unless_closed(self: logging.Handler, record: logging.LogRecord) -> None:
    error = sys.exc_info()[1]
    if isinstance(error, ValueError) and "closed file" in str(error):
        return
    _handle_error(self, record)


logging.Handler.handleError = _handle_error_unless_closed  # type: ignore[method-assign]


# The suite's two workers keep both cores busy, so a cold kernel's compile helper and the app's
# warm-up child would only add processes: off unless a test turns them on
# (tests/engine/test_compiling.py, tests/metrics/test_warm.py, tests/app/test_pipeline.py).
os.environ.setdefault("RECOEVAL_WARM_UP", "0")
# Likewise the app's upload child (the in-process tests of the app patch the tracking code it
# would not see): its own tests start it (tests/tracking/test_uploader.py, tests/app/test_startup.py).
os.environ.setdefault("RECOEVAL_UPLOADER", "0")


# ---------------------------------------------------------------------------------------------
# The engine's kernels compiled once for the whole run. On a cold numba cache (a fresh install,
# as in CI) each worker, and each app process a test starts before the cache is written,
# compiled the same block kernels for itself. With workers, the controller starts
# `python -m recoeval_tracking.engine.compiling all DTYPE` (one process per score dtype, then
# one pass alone) while the workers collect, and a worker's first test waits for them; on a
# warm cache they find every kernel ready and end at once. RECOEVAL_TEST_PRECOMPILE=0 turns this off.
# ---------------------------------------------------------------------------------------------

_PRECOMPILED = "RECOEVAL_TEST_PRECOMPILED"


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get("RECOEVAL_TEST_PRECOMPILE") == "0":
        return
    if not config.getoption("numprocesses", None) or config.getoption("dist", "no") == "no":
        return
    import subprocess
    import tempfile
    import threading

    marker = Path(tempfile.mkdtemp(prefix="recoeval-precompile-")) / "done"
    os.environ[_PRECOMPILED] = str(marker)  # the workers, started after this, inherit it
    command = [sys.executable, "-m", "recoeval_tracking.engine.compiling", "all"]
    procs = [
        subprocess.Popen([*command, dtype], cwd=REPO_ROOT, stdin=subprocess.DEVNULL)
        for dtype in ("float32", "float64")
    ]

    def done() -> None:
        for proc in procs:
            proc.wait()
        # the two wrote overloads of the same functions at once, and numba takes no lock on a
        # function's cache index: an entry one of them wrote can be lost. A last pass, alone,
        # compiles again what is missing (seconds on a warm cache)
        subprocess.run(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, check=False)
        marker.touch()

    threading.Thread(target=done, name="precompile", daemon=True).start()


def pytest_unconfigure(config: pytest.Config) -> None:
    marker = os.environ.get(_PRECOMPILED)
    if marker and not hasattr(config, "workerinput"):
        shutil.rmtree(Path(marker).parent, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _kernels_precompiled() -> None:
    """A worker's first test waits for the controller's compile of the kernels (at most 5
    minutes; a test then compiles what it needs itself, as without it)."""
    marker = os.environ.get(_PRECOMPILED)
    if not marker:
        return
    import time

    deadline = time.monotonic() + 300
    while not Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
