"""End to end: a 3-model sweep on MovieLens 100K into a temporary MLflow store, then the report
built from the sweep id (through run_report and through the recoeval-track-report command, whose
entry point runs in this process: :func:`commands.run_main`, its exit status and output as the
command's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from commands import run_main  # tests/ is on sys.path (tests/conftest.py)

from recoeval_tracking import InputError, evaluate, load_dataset, make_model, make_split
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.tracking.runs import log_job_dir
from recoeval_tracking.tracking.sweeps import create_sweep_parent, finish_sweep_parent

REPO = Path(__file__).resolve().parents[2]


def _u_data() -> Path:
    env = os.environ.get("RECOEVAL_SHARED_DATA")
    root = Path(env) if env else (REPO / ".." / "shared" / "data").resolve()
    path = root / "ml-100k" / "u.data"
    if not path.is_file():
        pytest.skip(f"MovieLens 100K not found at {path} (set RECOEVAL_SHARED_DATA)")
    return path


MODELS = (
    ("popularity", {}),
    ("random", {"seed": 0}),
    ("als", {"factors": 32, "iterations": 10, "progress": False}),
)


@pytest.fixture(scope="module")
def job_dirs(tmp_path_factory):
    """Evaluate the three models once; every test logs the job directories into its store."""
    data = load_dataset("movielens_100k", path=str(_u_data()))
    split = make_split("random", data, test_fraction=0.2, seed=1)
    root = tmp_path_factory.mktemp("jobs")
    dataset = {
        "name": "ml-100k",
        "data_fingerprint": data.fingerprint,
        "split_fingerprint": split.fingerprint,
    }
    dirs = {}
    for name, params in MODELS:
        model = make_model(name, **params).fit(split.train.matrix)
        res = evaluate(
            split.train,
            split.test,
            scores=model.score_source(),
            metrics=["ndcg", "p", "r"],
            k=10,
            cumulative=True,
            nthreads=2,
        )
        config = {
            "dataset": {"kind": "movielens_100k", "path": str(_u_data())},
            "split": {"name": "random", "test_fraction": 0.2, "seed": 1},
            "model": {"name": name, **params},
        }
        dirs[name] = write_job_dir(
            res,
            root / name,
            config_yaml=config,
            overrides=[f"model={name}"],
            dataset=dataset,
            plots=False,
        )
    return dirs


def _sweep(job_dirs, uri):
    parent = create_sweep_parent(tracking_uri=uri, experiment="e2e")
    ids = {}
    for name, path in job_dirs.items():
        ids[name] = log_job_dir(
            path,
            tracking_uri=uri,
            experiment="e2e",
            run_name=name,
            parent_run_id=parent.run_id,
            sweep_id=parent.sweep_id,
            precision="exact",
        )  # compared with the report's means exactly
    finish_sweep_parent(parent.run_id, tracking_uri=uri)
    return parent, ids


@pytest.fixture(scope="module")
def logged_sweep(job_dirs, tmp_path_factory, migrated_db):
    """The three jobs logged once as one sweep into a store of the module's: ``(uri, parent,
    ids)``. The tests that share it read its runs (and add artifacts to the parent only)."""
    db = tmp_path_factory.mktemp("e2e-store") / "mlflow.db"
    shutil.copyfile(migrated_db, db)
    uri = f"sqlite:///{db}"
    parent, ids = _sweep(job_dirs, uri)
    return uri, parent, ids


def test_report_from_sweep_id(logged_sweep, tmp_path):
    from mlflow import MlflowClient

    from recoeval_tracking.app.report import run_report

    store_uri, parent, ids = logged_sweep
    cfg = {
        "tracking": {"uri": store_uri, "experiment": "e2e"},
        "select": {"sweep_id": parent.sweep_id},
        "baseline": "random",
        "correction": "holm",
        "test": "t",
        "n_bootstrap": 200,
        "n_permutations": 200,
        "seed": 0,
        "slices": [{"kind": "activity", "q": 4}, {"kind": "popularity"}],
        "output": {
            "dir": str(tmp_path / "out"),
            "html": "report.html",
            "markdown": "report.md",
            "latex": "report.tex",
            "log_to_mlflow": True,
            "artifact_path": "report",
        },
    }
    result = run_report(cfg)
    rep = result["report"]
    client = MlflowClient(store_uri)

    # The three children, not the parent; random is the baseline.
    assert sorted(r.run_id for r in rep.runs) == sorted(ids.values())
    assert rep.baseline == ids["random"] and rep.comparable
    # Means equal the runs' logged means.
    summary = rep.summary.set_index(["run_id", "metric"])
    for run_id in ids.values():
        run = client.get_run(run_id)
        logged, bounds = run.data.metrics, json.loads(run.data.tags["recoeval.ci95"])
        for m in ("ndcg_at_10", "p_at_10", "r_at_10"):
            assert summary.loc[(run_id, m), "mean"] == pytest.approx(logged[m], rel=1e-12)
            assert summary.loc[(run_id, m), "t_low"] == pytest.approx(bounds[m][0], rel=1e-9)
            assert summary.loc[(run_id, m), "t_high"] == pytest.approx(bounds[m][1], rel=1e-9)
    # ALS is far better than random (about 0.35 vs 0.01 NDCG@10 on 943 users): every test
    # agrees and the mark says better at p < 0.001 after Holm; popularity too.
    comp = rep.comparisons.set_index(["run_id", "metric"])
    for m in ("ndcg_at_10", "p_at_10", "r_at_10"):
        row = comp.loc[(ids["als"], m)]
        assert row["mark"] == "▲***"
        assert row["mean_diff"] > 0.1 and row["t_low"] > 0
        assert row["p_wilcoxon_adj"] < 1e-3
        # No random sign vector reaches the observed sum: p = 1 / (1 + 200), the floor; Holm
        # over the family of this metric's 2 comparisons (both at that floor) doubles it.
        assert row["p_randomization"] == 1 / 201
        assert row["p_randomization_adj"] == pytest.approx(2 / 201)
        assert comp.loc[(ids["popularity"], m), "mark"] == "▲***"
    # Popularity slice built from the runs' config: the split rebuilt has their fingerprint.
    groups = {t.slice: 0 for t in rep.slices}
    for t in rep.slices:
        groups[t.slice] += t.n_users
    assert groups == {"activity": 943, "popularity": 943}

    # Figures and pages.
    paths = result["paths"]
    figures = {p.name for p in paths["figures"].iterdir()}
    assert {"curves_ndcg_at_k.png", "per_user_ndcg_at_10.png"} <= figures
    # A sweep over models alone varies no parameter within a model: no sweep figure (the
    # summary's rows already compare the models).
    assert not any(f.startswith("sweep_") for f in figures)
    page = paths["html"].read_text()
    assert page.count("data:image/png;base64,") == len(figures)
    for run_id in ids.values():
        assert run_id in page

    # The report is an artifact of the sweep's parent run.
    assert result["logged_run_id"] == parent.run_id
    listed = {a.path for a in client.list_artifacts(parent.run_id, "report")}
    assert {
        "report/report.html",
        "report/report.md",
        "report/report_figures",
        "report/report.tex",
    } <= listed
    # the page's numbers are the comparison's (rt.compare over the same runs)
    assert result["comparison"].report is rep
    s = result["comparison"].summary().set_index(["system", "metric"])
    assert s.loc[("als", "ndcg_at_10"), "mean"] == summary.loc[(ids["als"], "ndcg_at_10"), "mean"]
    assert "\\toprule" in result["paths"]["latex"].read_text()


def test_command_refuses_different_split_fingerprints(job_dirs, store_uri, tmp_path):
    import json
    import shutil

    changed = tmp_path / "als_other_split"
    shutil.copytree(job_dirs["als"], changed)
    info = json.loads((changed / "dataset.json").read_text())
    info["split_fingerprint"] = "0123456789abcdef"
    (changed / "dataset.json").write_text(json.dumps(info))
    dirs = [str(job_dirs["popularity"]), str(changed)]
    cmd = [
        f"select.job_dirs=[{','.join(dirs)}]",
        f"output.dir={tmp_path / 'out'}",
        "output.log_to_mlflow=false",
        "n_bootstrap=50",
        "n_permutations=50",
    ]
    proc = _run_report(tmp_path, *cmd)
    assert proc.returncode == 2, proc.stderr
    assert "not comparable: the split fingerprint differs" in proc.stderr
    assert "0123456789abcdef" in proc.stderr and "allow_mismatch=true" in proc.stderr
    assert not (tmp_path / "out" / "report.html").exists()

    proc = _run_report(tmp_path, *cmd, "allow_mismatch=true", "slices=[]")
    assert proc.returncode == 0, proc.stderr
    assert "NOT COMPARABLE" in (tmp_path / "out" / "report.html").read_text()


def test_selection_errors(store_uri, tmp_path):
    from recoeval_tracking.app.report import run_report

    with pytest.raises(InputError, match="select"):
        run_report({"tracking": {"uri": store_uri}, "select": {}})
    with pytest.raises(InputError, match="no run matches"):
        run_report({"tracking": {"uri": store_uri}, "select": {"sweep_id": "nope"}})


def _run_report(cwd, *overrides: str) -> subprocess.CompletedProcess:
    """``recoeval-track-report`` with ``overrides``, run in ``cwd`` without the environment's
    MLflow settings: its entry point in this process (:func:`commands.run_main`)."""
    return run_main(list(overrides), cwd, command="recoeval-track-report")


def test_command_takes_a_metric_list_and_says_what_it_does(job_dirs, tmp_path):
    """``metrics=[...]`` is a plain list of the report's config (not a config group), and the
    command says what it is doing while it runs."""
    dirs = ",".join(str(job_dirs[m]) for m in ("popularity", "als"))
    proc = _run_report(
        tmp_path,
        f"select.job_dirs=[{dirs}]",
        f"output.dir={tmp_path}",
        "output.log_to_mlflow=false",
        "n_bootstrap=20",
        "metrics=[ndcg_at_10,p_at_10]",
        "slices=[]",
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 runs read; computing intervals and paired tests" in proc.stderr
    page = (tmp_path / "report.md").read_text()
    assert "## Summary" in page and "ndcg_at_10: all users" in page
    assert "r_at_10: all users" not in page  # only the metrics asked for


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "corection=bh",
            "'corection' is not a setting of the chosen config. Did you mean correction?",
        ),
        ("select.sweep_idd=x", "Did you mean select.sweep_id"),
        ("alpha=abc", "the value given to 'alpha' has the wrong type"),
        ("family=per_run", "family: expected one of metric, table; got 'per_run'"),
        ("n_permutations=0", "n_permutations: expected 'auto' or an integer >= 1; got 0"),
    ],
)
def test_command_refuses_a_bad_setting_before_reading_runs(tmp_path, override, expected):
    """A misspelt key, a wrong type or a bad value: one paragraph naming the setting, exit 2,
    before any run is read (the selection names a store that does not exist). Through the
    command's entry point in this process, as the other command tests."""
    proc = run_main(
        ["select.sweep_id=abc", "tracking.uri=sqlite:///nowhere.db", override],
        tmp_path,
        command="recoeval-track-report",
    )
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr and "reading the selected runs" not in proc.stderr
    assert proc.stderr.startswith("recoeval-track-report: ")
    assert not (tmp_path / "nowhere.db").exists()


def test_compare_reads_mlflow_run_ids(job_dirs, logged_sweep):
    """rt.compare on run ids gives the numbers it gives on the job folders they were logged
    from."""
    import recoeval_tracking as rt

    store_uri, _, ids = logged_sweep
    by_id = rt.compare(
        {"pop": ids["popularity"], "als": ids["als"]},
        tracking_uri=store_uri,
        n_bootstrap=50,
        n_permutations=100,
    )
    by_dir = rt.compare(
        {"pop": str(job_dirs["popularity"]), "als": str(job_dirs["als"])},
        n_bootstrap=50,
        n_permutations=100,
    )
    a, b = by_id.summary(), by_dir.summary()
    assert a[["system", "metric"]].equals(b[["system", "metric"]])
    for col in ("mean", "ci_low", "ci_high", "delta", "p_adj"):
        assert a[col].fillna(-1).tolist() == b[col].fillna(-1).tolist()
    assert by_id.report.runs[1].source == f"mlflow run {ids['als']}"


def test_a_report_run_is_not_selected_as_a_run_to_compare(job_dirs, store_uri, tmp_path):
    """A report logged as its own run (tag recoeval.report=true) holds no job: selecting the
    experiment again compares the jobs only."""
    from recoeval_tracking.app.report import run_report
    from recoeval_tracking.tracking.search import log_report_artifacts

    _, ids = _sweep(job_dirs, store_uri)
    page = tmp_path / "old.html"
    page.write_text("<html></html>")
    report_run = log_report_artifacts([page], tracking_uri=store_uri, experiment="e2e")
    cfg = {
        "tracking": {"uri": store_uri},
        "select": {"experiment": "e2e"},
        "n_bootstrap": 20,
        "n_permutations": 20,
        "slices": [],
        "metrics": ["ndcg_at_10"],
        "output": {
            "dir": str(tmp_path / "out"),
            "html": None,
            "markdown": None,
            "latex": "r.tex",
            "log_to_mlflow": False,
        },
    }
    rep = run_report(cfg)["report"]
    selected = {r.run_id for r in rep.runs}
    assert report_run not in selected and set(ids.values()) <= selected
