"""Fixtures for the fault-injection tests: one real ``mlflow server`` per module, commands run as
real processes (with a fault injected by ``inject.py``) or, for a sync with nothing injected
that runs alone, in this process (:func:`sync_here`), and the counts every scenario is judged
by (runs per job, duplicates, deleted runs, RUNNING leftovers, pending left, lost results).

The counts of every scenario are collected and printed as a table at the end of the session (by
``tests/conftest.py``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from commands import FAULT_ROW, REPO_ROOT, clean_env  # tests/ is on sys.path (tests/conftest.py)
from mlflow_server import served

HERE = Path(__file__).resolve().parent
INJECT = HERE / "inject.py"
#: A job that runs in about a second: small synthetic data, popularity, two metrics, no plots.
TINY = [
    "model=popularity",
    "metrics.names=[p,ndcg]",
    "metrics.k=5",
    "plots=false",
    "progress=false",
    "nthreads=1",
    "dataset.n_users=60",
    "dataset.n_items=40",
]


def start(fault: str, command: str, args: list[str], cwd: Path) -> subprocess.Popen:
    """Start ``recoeval-track`` (``command="track"``) or ``recoeval-track-sync`` (``"sync"``)
    with ``fault`` injected (see ``inject.py``)."""
    cmd = [sys.executable, str(INJECT), fault, command, *[str(a) for a in args]]
    return subprocess.Popen(
        cmd, cwd=cwd, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen, timeout: float = 180) -> subprocess.CompletedProcess:
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run(
    fault: str, command: str, args: list[str], cwd: Path, timeout: float = 180
) -> subprocess.CompletedProcess:
    return finish(start(fault, command, args, cwd), timeout)


def sync_here(args: list[Any], cwd: Path) -> subprocess.CompletedProcess:
    """Run the ``recoeval-track-sync`` entry point with ``args`` in ``cwd`` in this process: its
    exit status (1 with the traceback on stderr if an exception escapes it, as the interpreter
    would exit), stdout and stderr. For a sync with no fault injected that runs alone (the one
    that recovers after a fault): the same code and store as a process, without an interpreter
    and MLflow's import to start. A sync whose failure is judged, or that races another command,
    runs as a process (:func:`run`)."""
    import contextlib
    import io
    import traceback

    from recoeval_tracking.app.sync import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as stop:  # argparse's refusals
            status = stop.code if isinstance(stop.code, int) else 1
        except Exception:  # noqa: BLE001 - what escapes ends the process with a traceback
            status = 1
            traceback.print_exc()
    return subprocess.CompletedProcess(
        ["recoeval-track-sync", *argv], status, out.getvalue(), err.getvalue()
    )


def run_all(specs: list[tuple[str, str, list[str], Path]]) -> list[subprocess.CompletedProcess]:
    """Start every command at once, then wait for them all."""
    procs = [start(*spec) for spec in specs]
    return [finish(p) for p in procs]


def load_results_factory():
    spec = importlib.util.spec_from_file_location(
        "results_factory", REPO_ROOT / "tests" / "tracking" / "results_factory.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_results


# ---------------------------------------------------------------------------------------------
# counting
# ---------------------------------------------------------------------------------------------


def job_dirs(root: Path) -> list[Path]:
    """Every job directory under ``root``: folders holding results or a marker of one."""
    names = ("job.json", "INCOMPLETE", "PENDING", "UPLOADING", "metrics.json")
    found = {
        p.parent
        for n in names
        for p in root.rglob(n)
        if "mlartifacts" not in p.parts and "downloaded" not in p.parts
    }
    return sorted(found)


def counts(uri: str, experiment: str, root: Path) -> dict[str, Any]:
    """What the store and the folders under ``root`` hold for one scenario."""
    from mlflow import MlflowClient
    from mlflow.entities import ViewType

    from recoeval_tracking.jobdir import job_dir_state, read_job_dir

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id], max_results=1000) if exp else []
    deleted = (
        client.search_runs(
            [exp.experiment_id], run_view_type=ViewType.DELETED_ONLY, max_results=1000
        )
        if exp
        else []
    )
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") != "true"]
    per_uid = Counter(r.data.tags.get("recoeval.job_uid") for r in children)
    finished = {
        r.data.tags.get("recoeval.job_uid") for r in children if r.info.status == "FINISHED"
    }
    complete = [d for d in job_dirs(root) if job_dir_state(d) == "complete"]
    uids = [read_job_dir(d, per_user=False).job_uid for d in complete]
    return {
        "jobs": len(complete),
        "runs": len(children),
        "parents": len(parents),
        "duplicates": sum(n - 1 for n in per_uid.values()),
        "deleted": len(deleted),
        "running": sum(r.info.status == "RUNNING" for r in runs),
        "pending": sum(
            (d / "PENDING").exists() or (d / "UPLOADING").exists() for d in job_dirs(root)
        ),
        "lost": sum(uid not in finished for uid in uids),
        "sweep_ids": len({r.data.tags.get("recoeval.sweep_id") for r in children}),
    }


#: The test running now (set by ``_current_test``), whose report carries the rows it records.
_CURRENT: list[pytest.Item] = []


@pytest.fixture(autouse=True)
def _current_test(request):
    _CURRENT[:] = [request.node]
    yield
    _CURRENT.clear()


def record(scenario: str, numbers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Keep one row of the session's table (``tests/conftest.py`` prints it at the end, from the
    tests' reports, so that rows recorded on any worker reach it); returns ``numbers``."""
    row = {"scenario": scenario, **numbers, **extra}
    _CURRENT[0].user_properties.append((FAULT_ROW, row))
    return numbers


# ---------------------------------------------------------------------------------------------
# the server
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_db):
    """One real ``mlflow server`` for the module; each test uses an experiment of its own."""
    with served(tmp_path_factory.mktemp("fault-server"), migrated_db) as srv:
        yield srv
