"""The report command where a user's input could send it astray: page names that leave
``output.dir``, a tracking server that does not answer (the one timeout of every command that
talks to a server), and a sweep id holding a quote (pasted into MLflow's filter, it broke or
changed the selection)."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest
from _report_process import run_report_command
from mlflow_server import dead_uri

from recoeval_tracking import InputError
from recoeval_tracking.app.report import run_report
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.search import find_sweep_parent, search_runs_for_report

_spec = importlib.util.spec_from_file_location(
    "results_factory", Path(__file__).resolve().parents[1] / "tracking" / "results_factory.py"
)
_factory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_factory)


@pytest.fixture
def two_jobs(tmp_path):
    return [
        str(
            write_job_dir(
                _factory.make_results(n_users=40, k=3, seed=s), tmp_path / f"j{s}", plots=False
            )
        )
        for s in (0, 1)
    ]


def _config(jobs: list[str], out: Path, **pages: str) -> dict:
    """The report of ``jobs`` into ``out``, the pages named in ``pages`` only."""
    output = {"dir": str(out), "html": None, "markdown": None, "latex": None}
    return {
        "select": {"job_dirs": jobs},
        "n_bootstrap": 20,
        "slices": [],
        "output": {**output, "log_to_mlflow": False, **pages},
    }


@pytest.mark.parametrize(
    "key, name",
    [("html", "../../x.html"), ("markdown", "../escaped.md"), ("latex", "ABSOLUTE")],
)
def test_a_page_name_leaving_the_output_folder_is_refused(tmp_path, two_jobs, key, name):
    out = tmp_path / "a" / "b" / "report"
    if name == "ABSOLUTE":
        name = str(tmp_path / "elsewhere.tex")  # an absolute path outside output.dir
    cfg = _config(two_jobs, out, **{key: name})
    before = set(tmp_path.rglob("*"))
    with pytest.raises(InputError, match=rf"output\.{key} must be a path inside"):
        run_report(cfg)
    assert set(tmp_path.rglob("*")) == before  # nothing written, inside or out
    assert not (out / name).resolve().exists()


def test_a_page_name_inside_the_output_folder_is_written(tmp_path, two_jobs):
    out = tmp_path / "report"
    cfg = _config(two_jobs, out, html="pages/../r.html")
    result = run_report(cfg)
    assert (out / "r.html").is_file() and result["paths"]["html"].resolve() == out / "r.html"


def test_the_report_gives_up_on_a_dead_server_like_the_sync(tmp_path):
    """It used to still be "reading the selected runs" after 240 s (MLflow's default: 7 retries
    with backoff, 120 s per request); it now ends as the sync does, in seconds, in one
    paragraph."""
    uri = dead_uri()
    start = time.monotonic()
    proc = run_report_command(
        [f"tracking.uri={uri}", "select.sweep_id=abc", "output.log_to_mlflow=false"],
        tmp_path,
        timeout=100,
    )
    assert time.monotonic() - start < 60
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"recoeval-track-report: could not reach the tracking store {uri}")
    assert "Traceback" not in proc.stderr and "This is a bug" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # no page, no store


@pytest.mark.parametrize("sweep_id", ["abc' or tags.x != '", 'a"b', "a`b", "a\\b"])
def test_a_sweep_id_with_a_quote_is_refused_by_name(store_uri, sweep_id):
    with pytest.raises(InputError, match="'sweep_id' parameter of search_runs_for_report"):
        search_runs_for_report(tracking_uri=store_uri, sweep_id=sweep_id)
    with pytest.raises(InputError, match="'sweep_id' parameter of find_sweep_parent"):
        find_sweep_parent(sweep_id, tracking_uri=store_uri)


def test_a_plain_sweep_id_still_selects(store_uri):
    assert search_runs_for_report(tracking_uri=store_uri, sweep_id="3f2a9c1b7d4e") == []
