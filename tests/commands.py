"""The environment of a command that a test runs as a real process (the app's and the fault
tests'): no ambient MLflow or Hydra settings, and the package the tests import first on
``PYTHONPATH`` (this checkout, or the mutated copy that tools/mutate.py puts first)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import recoeval_tracking

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The folder holding the package the tests import: the checkout, or a copy put first on the
#: path (mutation testing), which the processes must import too.
PACKAGE_ROOT = Path(recoeval_tracking.__file__).resolve().parents[1]
#: The name under which a fault test's report carries a row of the table of counts that
#: ``tests/conftest.py`` prints at the end of the session.
FAULT_ROW = "recoeval_fault_scenario"


def clean_env() -> dict[str, str]:
    """``os.environ`` without MLflow's and Hydra's settings, with the tests' package importable."""
    env = dict(os.environ)
    for var in (
        "MLFLOW_TRACKING_URI",
        "MLFLOW_RUN_ID",
        "MLFLOW_EXPERIMENT_NAME",
        "MLFLOW_EXPERIMENT_ID",
        "HYDRA_FULL_ERROR",
    ):
        env.pop(var, None)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_command(
    args: list[str],
    cwd: Path,
    *,
    module: bool = True,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run ``python -m recoeval_tracking ARGS`` (or the ``recoeval-track`` script) in ``cwd``."""
    if module:
        cmd = [sys.executable, "-m", "recoeval_tracking", *args]
    else:
        script = Path(sys.executable).with_name("recoeval-track")
        if not script.is_file():
            pytest.skip("the recoeval-track console script is not installed in this environment")
        cmd = [str(script), *args]
    return run_process(cmd, cwd, timeout=timeout, env=env)


def run_process(
    cmd: list[str], cwd: Path, *, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run ``cmd`` in ``cwd`` with :func:`clean_env` (or ``env``), its output captured as text;
    a non-zero exit is the caller's to judge."""
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_main(
    args: list[str],
    cwd: Path,
    *,
    command: str = "recoeval-track",
    env: dict[str, str] | None = None,
    show_warnings: bool = False,
) -> subprocess.CompletedProcess:
    """Run the entry point of ``command`` (``recoeval-track``: ``recoeval_tracking.app.cli.main``;
    ``recoeval-track-report``: ``recoeval_tracking.app.report.main``) in this process, as the
    console script would with ``ARGS`` in ``cwd``: its exit status, stdout and stderr, with
    ``returncode`` 1 and the traceback on stderr if an exception escapes it (as the interpreter
    would exit). Far cheaper than a process (no interpreter or imports to start), for checks of
    what the command says; the process-level behaviour stays checked with :func:`run_command`.
    The working folder, ``sys.argv``, the environment and the logging set-up that the command
    changes are put back afterwards. The command sees :func:`clean_env` as its environment, or
    ``env`` in its place. Python's warnings are pytest's to record, unless ``show_warnings``: then
    they are printed on the command's stderr as a fresh interpreter's default filters print them
    (once per place, deprecations and resource warnings ignored)."""
    import io
    import logging
    import traceback

    from recoeval_tracking.app import cli, report

    main = {"recoeval-track": cli.main, "recoeval-track-report": report.main}[command]
    saved_argv, saved_cwd, saved_env = sys.argv[:], os.getcwd(), dict(os.environ)
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_factory = logging.getLogRecordFactory()
    out, err = io.StringIO(), io.StringIO()
    status = 0
    os.environ.clear()
    os.environ.update(clean_env() if env is None else env)
    sys.argv = [str(Path(sys.executable).with_name(command)), *args]
    os.chdir(cwd)
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            if show_warnings:
                stack.enter_context(_interpreter_warnings())
            try:
                main()
            except SystemExit as stop:
                code = stop.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
                if code is not None and not isinstance(code, int):
                    print(code, file=sys.stderr)
            except Exception:  # noqa: BLE001 - what escapes ends the process with a traceback
                status = 1
                traceback.print_exc()
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logging.setLogRecordFactory(saved_factory)
    return subprocess.CompletedProcess([command, *args], status, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _interpreter_warnings() -> Iterator[None]:
    """Python's warnings filtered and shown on ``sys.stderr`` as in a fresh interpreter started
    without ``-W`` (the filters of the :mod:`warnings` docs' "Default Warning Filter"), put back
    afterwards."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings():
        warnings.resetwarnings()  # also forgets which warnings were shown once already
        for category in (
            DeprecationWarning,
            PendingDeprecationWarning,
            ImportWarning,
            ResourceWarning,
        ):
            warnings.simplefilter("ignore", category)
        warnings.showwarning = show
        yield


#: The settings that keep a test sweep small and quiet (a synthetic set of 120 users x 60 items,
#: no plots, no bars, one thread, no curves).
SMALL_SWEEP = [
    "dataset.n_users=120",
    "dataset.n_items=60",
    "plots=false",
    "progress=false",
    "nthreads=1",
    "metrics.cumulative=false",
]


def sweep_in_store(
    tmp_path_factory: Any, migrated_db: Path, name: str, args: list[str], *, module: bool = True
) -> tuple[Path, subprocess.CompletedProcess]:
    """Run the sweep ``args`` once in a fresh process, in a new folder holding a copy of the
    migrated SQLite store, its sweep folder ``multirun/s``; returns the folder and the process
    (asserted to have succeeded)."""
    import shutil

    root = tmp_path_factory.mktemp(name)
    shutil.copyfile(migrated_db, root / "mlflow.db")
    proc = run_command([*args, "hydra.sweep.dir=multirun/s"], root, module=module, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    return root, proc


def sweep_report_config(root: Path, sweep_id: str, **output: Any) -> dict[str, Any]:
    """A quick report of a test sweep logged to ``root``'s SQLite store (NDCG@10 only, 20
    resamples): Markdown into ``root/report`` and not logged back, plus ``output``'s files."""
    return {
        "tracking": {"uri": f"sqlite:///{root / 'mlflow.db'}"},
        "select": {"sweep_id": sweep_id},
        "metrics": ["ndcg_at_10"],
        "n_bootstrap": 20,
        "n_permutations": 20,
        "output": {
            "dir": str(root / "report"),
            "markdown": "report.md",
            "log_to_mlflow": False,
            **output,
        },
    }
