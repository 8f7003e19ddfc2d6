"""Job directories: what write_job_dir puts on disk and read_job_dir gets back.

Expected values are computed here from the per-user table with the textbook formulas (mean of
defined values; Student-t interval mean ± t_{0.975,n-1} s / sqrt(n)), independently of Results.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recoeval_tracking import InputError
from recoeval_tracking.jobdir import PENDING, SYNCED, read_job_dir, write_job_dir

_spec = importlib.util.spec_from_file_location(
    "results_factory", Path(__file__).resolve().parents[1] / "tracking" / "results_factory.py"
)
_factory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_factory)
make_results = _factory.make_results


def t_interval(values):
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    n = len(v)
    m = sum(v) / n
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
    return m, m - half, m + half


@pytest.fixture
def results():
    return make_results(n_users=40, k=4, seed=3)


def test_metrics_json_means_cis_counts_timings(tmp_path, results):
    path = write_job_dir(
        results, tmp_path / "job", extra_metrics={"fit_time_total": 2.5}, plots=False
    )
    metrics = json.loads((path / "metrics.json").read_text())
    pu = results.per_user
    for col in ("ndcg_at_4", "p_at_4", "r_at_4", "roc_auc"):
        m, lo, hi = t_interval(pu[col])
        assert metrics[col] == pytest.approx(m, rel=1e-12)
        assert metrics[f"{col}_ci95_low"] == pytest.approx(lo, rel=1e-10)
        assert metrics[f"{col}_ci95_high"] == pytest.approx(hi, rel=1e-10)
    reasons = list(pu["nan_reason"])
    assert metrics["users_evaluated"] == reasons.count("")
    assert metrics["users_nan_no_test"] == reasons.count("no_test")
    assert metrics["users_nan_cold_start"] == reasons.count("cold_start")
    # timings: a stage gets "_seconds" once, never twice
    assert metrics["eval_seconds"] == 0.25
    assert metrics["fit_seconds"] == 1.5
    assert "fit_seconds_seconds" not in metrics
    assert metrics["fit_time_total"] == 2.5
    assert not any("@" in k for k in metrics)


def test_catalogue_metrics_in_metrics_json(tmp_path, results):
    # coverage, gini, GAUC...: one number over all users each, logged beside the means
    results.aggregates = {"coverage_at_4": 0.25, "gauc": 0.625}
    path = write_job_dir(results, tmp_path / "job", plots=False)
    metrics = json.loads((path / "metrics.json").read_text())
    assert metrics["coverage_at_4"] == 0.25 and metrics["gauc"] == 0.625
    assert "coverage_at_4_ci95_low" not in metrics
    assert read_job_dir(path, per_user=False).metrics["gauc"] == 0.625


def test_curves_csv_is_mean_over_defined_users(tmp_path, results):
    path = write_job_dir(results, tmp_path / "job", plots=False)
    curves = pd.read_csv(path / "curves.csv")
    assert list(curves["k"]) == [1, 2, 3, 4]
    for name, arr in results.curves_per_user.items():
        for j in range(results.k):
            m, lo, hi = t_interval(arr[:, j])
            assert curves[name][j] == pytest.approx(m, rel=1e-12)
            assert curves[f"{name}_ci95_low"][j] == pytest.approx(lo, rel=1e-10)
            assert curves[f"{name}_ci95_high"][j] == pytest.approx(hi, rel=1e-10)
    # the curve at K is the single-K mean
    metrics = json.loads((path / "metrics.json").read_text())
    assert curves["ndcg_at_k"].iloc[-1] == pytest.approx(metrics["ndcg_at_4"], rel=1e-12)


def test_round_trip(tmp_path, results):
    config = "model:\n  name: als\n  factors: 8\nmetrics:\n  k: 4\n"
    dataset = {
        "name": "toy",
        "n_users": 40,
        "data_fingerprint": "abc123",
        "split_fingerprint": "def456",
        "density": 0.1,
    }
    path = write_job_dir(
        results,
        tmp_path / "job",
        config_yaml=config,
        overrides=["model.factors=8"],
        dataset=dataset,
        plots=False,
    )
    job = read_job_dir(path)
    pd.testing.assert_frame_equal(job.per_user, results.per_user, check_dtype=False)
    assert job.k == 4 and job.fingerprint == "def00003abc" and not job.topk_only
    assert job.metric_columns == ["ndcg_at_4", "p_at_4", "r_at_4", "roc_auc"]
    assert job.curve_names == ["ndcg_at_k", "p_at_k"]
    assert job.definitions == results.definitions
    assert job.dataset == dataset
    assert job.config == {"model": {"name": "als", "factors": 8}, "metrics": {"k": 4}}
    assert job.overrides == ["model.factors=8"]
    assert len(job.job_uid) == 32
    assert job.means["ndcg_at_4"] == pytest.approx(np.nanmean(results.per_user["ndcg_at_4"]))


def test_all_nan_metric_round_trips_as_nan(tmp_path):
    res = make_results(n_users=10, k=3, seed=1)
    res.per_user["roc_auc"] = np.nan
    path = write_job_dir(res, tmp_path / "job", plots=False)
    raw = json.loads((path / "metrics.json").read_text())
    assert raw["roc_auc"] is None  # valid JSON, no NaN literal
    assert math.isnan(read_job_dir(path).metrics["roc_auc"])


def test_secrets_redacted_on_disk(tmp_path, results):
    config = {
        "tracking": {"uri": "http://bob:hunter2@host", "password": "hunter2"},
        "db": {"apiKey": "hunter2"},
        "metrics": {"k": 4},
    }
    path = write_job_dir(
        results,
        tmp_path / "job",
        config_yaml=config,
        overrides=["tracking.password=hunter2", "metrics.k=4"],
        dataset={"name": "x", "token": "hunter2"},
        plots=False,
    )
    for name in ("config.yaml", "overrides.yaml", "dataset.json"):
        assert "hunter2" not in (path / name).read_text()
    job = read_job_dir(path)
    assert job.config["metrics"] == {"k": 4}
    assert job.config["tracking"]["password"] == "<redacted>"


def test_new_uid_and_markers_cleared_on_rewrite(tmp_path, results):
    path = write_job_dir(results, tmp_path / "job", plots=False)
    uid1 = read_job_dir(path, per_user=False).job_uid
    (path / PENDING).write_text("{}")
    (path / SYNCED).write_text("{}")
    write_job_dir(results, path, plots=False)
    assert read_job_dir(path, per_user=False).job_uid != uid1
    assert not (path / PENDING).exists() and not (path / SYNCED).exists()


def test_plots_written(tmp_path):
    res = make_results(n_users=30, k=3, seed=2)
    path = write_job_dir(res, tmp_path / "job", plots="all")
    names = sorted(p.name for p in (path / "plots").iterdir())
    assert names == [
        "curves.png",
        "per_user_ndcg_at_3.png",
        "per_user_p_at_3.png",
        "per_user_r_at_3.png",
        "per_user_roc_auc.png",
    ]
    for p in (path / "plots").iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_plots_are_the_curves_and_one_histogram(tmp_path):
    res = make_results(n_users=30, k=3, seed=2)
    path = write_job_dir(res, tmp_path / "job")
    names = sorted(p.name for p in (path / "plots").iterdir())
    assert names == ["curves.png", "per_user_ndcg_at_3.png"]  # NDCG heads the headline list
    with pytest.raises(InputError, match="'plots'"):
        write_job_dir(res, tmp_path / "job2", plots="some")


def test_no_curves_means_no_curves_csv(tmp_path):
    res = make_results(n_users=20, k=3, seed=4, curves=())
    path = write_job_dir(res, tmp_path / "job", plots=False)
    assert not (path / "curves.csv").exists()
    assert read_job_dir(path).curve_names == []


def test_validation_messages(tmp_path, results):
    with pytest.raises(
        InputError, match="'results' parameter of write_job_dir must be a recoeval_tracking Results"
    ):
        write_job_dir({"ndcg": 1}, tmp_path)
    with pytest.raises(InputError, match="'extra_metrics' parameter of write_job_dir"):
        write_job_dir(results, tmp_path, extra_metrics={"x": "fast"})
    with pytest.raises(InputError, match="'overrides' parameter"):
        write_job_dir(results, tmp_path, overrides="model=als")
    with pytest.raises(
        InputError, match="'path' parameter of read_job_dir must be a job directory"
    ):
        read_job_dir(tmp_path / "nothing-here")


def test_folder_is_complete_only_after_job_json(tmp_path, results):
    from recoeval_tracking.jobdir import INCOMPLETE, job_dir_state

    path = write_job_dir(results, tmp_path / "job", plots=False)
    assert job_dir_state(path) == "complete" and not (path / INCOMPLETE).exists()
    assert not [p for p in path.iterdir() if "recoeval-tmp" in p.name]
    # a rewrite cut off before job.json: the old job.json is gone, the folder is incomplete
    (path / INCOMPLETE).write_text(json.dumps({"job_uid": "new"}))
    assert job_dir_state(path) == "incomplete"
    with pytest.raises(InputError, match="INCOMPLETE"):
        read_job_dir(path)
    (path / "job.json").unlink()
    assert job_dir_state(path) == "incomplete"
    (path / INCOMPLETE).unlink()
    assert job_dir_state(path) == "handwritten"


def test_full_disk_names_the_folder_file_and_what_was_kept(tmp_path, results, monkeypatch):
    import errno

    from recoeval_tracking.jobdir import INCOMPLETE, JobDirWriteError, job_dir_state

    def full(self, path, *args, **kwargs):
        with open(path, "wb") as fh:
            fh.write(b"PAR1")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    with pytest.raises(JobDirWriteError) as info:
        write_job_dir(results, tmp_path / "job", plots=False, overrides=["a=1"])
    err = info.value
    text = str(err)
    assert str(tmp_path / "job") in text and "No space left on device (ENOSPC)" in text
    assert "while writing per_user.parquet" in text
    assert "Kept: metrics.json, definitions.json, curves.csv." in text
    assert "\n" not in text and err.kept == ["metrics.json", "definitions.json", "curves.csv"]
    assert isinstance(err, OSError)
    path = tmp_path / "job"
    assert job_dir_state(path) == "incomplete" and (path / INCOMPLETE).exists()
    assert not (path / "per_user.parquet").exists()  # no truncated file under the final name
    assert not [p for p in path.iterdir() if "recoeval-tmp" in p.name]
    monkeypatch.undo()
    write_job_dir(results, path, plots=False)  # space again: the folder becomes complete
    assert job_dir_state(path) == "complete"


def test_handwritten_folder_gets_a_content_uid(tmp_path, results):
    path = write_job_dir(results, tmp_path / "job", plots=False)
    (path / "job.json").unlink()
    uid = read_job_dir(path, per_user=False).job_uid
    assert uid.startswith("content-") and uid == read_job_dir(path, per_user=False).job_uid
    (path / "metrics.json").write_text("{not json")
    with pytest.raises(InputError, match="metrics.json of .* not valid JSON"):
        read_job_dir(path)


def test_rewrite_clears_every_marker(tmp_path, results):
    from recoeval_tracking.jobdir import UPLOADING

    path = write_job_dir(results, tmp_path / "job", plots=False)
    for marker in (PENDING, SYNCED, UPLOADING):
        (path / marker).write_text("{}")
    (path / ".per_user.parquet.1.ab.recoeval-tmp").write_bytes(b"PAR1")
    write_job_dir(results, path, plots=False)
    assert sorted(p.name for p in path.iterdir()) == [
        ".recoeval.lock",
        "curves.csv",
        "definitions.json",
        "job.json",
        "metrics.json",
        "per_user.parquet",
    ]


def test_the_seconds_of_writing_and_of_the_plots_are_reported(tmp_path):
    res = make_results(n_users=30, k=3, seed=2)
    seconds: dict[str, float] = {}
    write_job_dir(res, tmp_path / "job", timings=seconds)
    assert set(seconds) == {"plots", "total"}
    assert 0 < seconds["plots"] < seconds["total"]
    write_job_dir(res, tmp_path / "job2", plots=False, timings=seconds)
    assert seconds["plots"] == 0.0 and seconds["total"] > 0


def test_default_curves_are_the_headline_ones_and_all_draws_every_curve(tmp_path, monkeypatch):
    from recoeval_tracking.jobdir import io

    drawn = []
    real = io.write_job_plots
    monkeypatch.setattr(
        io,
        "write_job_plots",
        lambda per_user, shown, curves, folder: (
            drawn.append((list(per_user.columns), list(shown), list(curves.columns))),
            real(per_user, shown, curves, folder),
        ),
    )
    res = make_results(n_users=40, k=4, seed=3, curves=("ndcg", "p", "dcg", "novelty", "r"))
    write_job_dir(res, tmp_path / "job")
    write_job_dir(res, tmp_path / "all", plots="all")
    (table, shown, curves), (_, shown_all, curves_all) = drawn
    bounds = lambda n: [n, f"{n}_ci95_low", f"{n}_ci95_high"]  # noqa: E731
    # the headline curves, in the headline order (NDCG, P, R...); DCG and novelty left out
    assert curves == ["k", *bounds("ndcg_at_k"), *bounds("p_at_k"), *bounds("r_at_k")]
    assert shown == ["ndcg_at_4"] and table == ["ndcg_at_4"]
    assert set(curves_all) == set(pd.read_csv(tmp_path / "all" / "curves.csv").columns)
    assert len(curves_all) == 1 + 3 * 5 and len(shown_all) == 6  # five curves, r and roc_auc
    # curves.csv keeps every curve whatever is drawn
    assert list(pd.read_csv(tmp_path / "job" / "curves.csv").columns) == curves_all
