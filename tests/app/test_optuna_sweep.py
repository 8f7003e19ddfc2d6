"""``recoeval-track -m hydra/sweeper=optuna``: a search whose trials are child runs of the
sweep's parent, the parent holding the best value and parameters; a stored study resumed; a
seeded search reproduced; bad objectives refused before any trial.

Expected values are read from the children (what each trial measured), never from the sweeper.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recoeval_tracking.splitting import leakage_line

optuna = pytest.importorskip("optuna", reason="optuna is not installed (extra 'search')")

from .conftest import QUIET, TINY_DATA, assert_ok, run_command, run_main, run_process  # noqa: E402

SEARCH = [
    "-m",
    "hydra/sweeper=optuna",
    "model=als",
    "model.iterations=5",
    "model.factors=int(interval(2,16))",
    "model.regularization=tag(log,interval(0.001,1))",
    *TINY_DATA,
    *QUIET,
    "tracking.precision=exact",
]


def _results(root: Path) -> list[dict]:
    """``optimization_results.yaml`` of every sweep under ``root``, oldest first."""
    return [
        yaml.safe_load(p.read_text())
        for p in sorted((root / "multirun").rglob("optimization_results.yaml"))
    ]


def _search(tmp_path: Path, store: str, *more: str):
    """A seeded search by ndcg_at_10 with ``more`` settings: its outcome, a client of the
    store and every run of its experiment. The command's entry point runs in this process (its
    exit status and output as the process would give them): the trials run one batch after the
    other in the launching process (the basic launcher), and what is checked is what the search
    says and logs; a search runs as a real process in the resume test and the failed trial's."""
    from mlflow import MlflowClient

    proc = run_main([*SEARCH, "hydra.sweeper.seed=0", "objective=ndcg_at_10", *more], tmp_path)
    assert_ok(proc)
    client = MlflowClient(store)
    exp = client.get_experiment_by_name("recoeval")
    return proc, client, client.search_runs([exp.experiment_id], max_results=100)


def test_search_of_six_trials_logs_children_and_the_best_on_the_parent(tmp_path, local_store):

    # batches of 2 trials (n_jobs), each launched by the configured launcher (basic here)
    proc, client, runs = _search(
        tmp_path, local_store, "hydra.sweeper.n_trials=6", "hydra.sweeper.n_jobs=2"
    )
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    assert len(parents) == 1
    parent = parents[0]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 6 and len(runs) == 7
    assert parent.info.status == "FINISHED"
    for child in children:
        assert child.info.status == "FINISHED"
        assert 2 <= int(child.data.params["model.factors"]) <= 16
        assert 0.001 <= float(child.data.params["model.regularization"]) <= 1
    best = max(children, key=lambda r: r.data.metrics["ndcg_at_10"])
    # the terminal names the best trial, its value and parameters, then the leaderboard
    out = proc.stdout + proc.stderr
    assert f"ndcg_at_10 = {best.data.metrics['ndcg_at_10']:.4f}" in out
    assert f"model.factors={best.data.params['model.factors']}" in out
    assert "Best parameters:" in out and "recoeval-track-report select.sweep_id=" in out
    assert parent.data.metrics["best_ndcg_at_10"] == pytest.approx(
        best.data.metrics["ndcg_at_10"], rel=1e-12
    )
    assert parent.data.tags["recoeval.best.run_id"] == best.info.run_id
    best_params = json.loads(parent.data.tags["recoeval.best.params"])
    assert str(best_params["model.factors"]) == best.data.params["model.factors"]
    assert float(best_params["model.regularization"]) == pytest.approx(
        float(best.data.params["model.regularization"]), rel=1e-12
    )
    # the best value is recorded as it improves: a non-decreasing curve over trial numbers
    # the best value is recorded as it improves (step = trial number); the close keeps it
    history = sorted(
        client.get_metric_history(parent.info.run_id, "best_ndcg_at_10"), key=lambda m: m.timestamp
    )
    assert history and [m.step for m in history] == sorted({m.step for m in history})
    assert [m.value for m in history] == sorted(m.value for m in history)
    assert history[-1].value == pytest.approx(best.data.metrics["ndcg_at_10"], rel=1e-12)
    (result,) = _results(tmp_path)
    assert result["direction"] == "maximize" and len(result["trials"]) == 6
    assert result["best_value"] == pytest.approx(best.data.metrics["ndcg_at_10"], rel=1e-12)


def test_stored_study_resumes_and_a_seeded_search_repeats(tmp_path):
    """The first search runs as a real process; the resumed one and the fresh seeded one run
    the command's entry point in this process (a new sweeper, its study loaded from the
    storage or made anew, as a new process would): no second and third interpreter start."""
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    args = [
        *SEARCH,
        "hydra.sweeper.seed=7",
        "objective=mpr",
        "tracking=none",
        f"hydra.sweeper.storage={storage}",
        "hydra.sweeper.study_name=resume",
    ]
    # a folder each: two searches begun within one second would share Hydra's dated folder
    assert_ok(
        run_command([*args, "hydra.sweeper.n_trials=2", "hydra.sweep.dir=multirun/1"], tmp_path)
    )
    assert_ok(  # one more trial
        run_main([*args, "hydra.sweeper.n_trials=1", "hydra.sweep.dir=multirun/2"], tmp_path)
    )
    first, second = _results(tmp_path)
    assert first["direction"] == "minimize"  # mpr: lower is better (metric registry)
    assert [t["number"] for t in first["trials"]] == [0, 1]
    assert [t["number"] for t in second["trials"]] == [2]
    assert second["n_trials_in_study"] == 3
    study = optuna.load_study(study_name="resume", storage=storage)
    values = [t.value for t in study.trials]
    assert len(values) == 3 and second["best_value"] == pytest.approx(min(values), rel=1e-12)
    # a fresh study with the same seed asks the same parameters in the same order
    assert_ok(
        run_main(
            [
                *SEARCH,
                "hydra.sweeper.n_trials=2",
                "hydra.sweeper.seed=7",
                "objective=mpr",
                "tracking=none",
                "hydra.sweep.dir=multirun/3",
            ],
            tmp_path,
        )
    )
    again = _results(tmp_path)[2]
    assert [t["params"] for t in again["trials"]] == [t["params"] for t in first["trials"]]
    assert [t["value"] for t in again["trials"]] == [t["value"] for t in first["trials"]]


@pytest.mark.parametrize(
    "objective,message",
    [
        ("objective=ndcg10", "objective must be the key of a metric the job reports"),
        ("objective=ndcg_at_20", "Set metrics.k=20 or objective=ndcg_at_10"),
        (None, "objective must be set for hydra/sweeper=optuna"),
    ],
)
def test_a_bad_objective_is_refused_before_any_trial(tmp_path, objective, message):
    proc = run_main([*SEARCH, "tracking=none", *([objective] if objective else [])], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = proc.stderr.strip()
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not list(tmp_path.rglob("metrics.json"))


def test_a_search_space_is_required(tmp_path):
    proc = run_main(
        ["-m", "hydra/sweeper=optuna", "objective=ndcg_at_10", "tracking=none", *TINY_DATA, *QUIET],
        tmp_path,
    )
    assert proc.returncode == 2
    assert "needs a search space" in proc.stderr


_DISCOVER = (
    "from hydra.core.plugins import Plugins; from hydra.plugins.sweeper import Sweeper; "
    "print(sorted(p.__name__ for p in Plugins.instance().discover(Sweeper)))"
)


def test_a_regular_install_ships_the_plugin_where_hydra_scans(tmp_path, built_package):
    """A non-editable build puts ``hydra_plugins/recoeval_optuna_sweeper`` (and no
    ``hydra_plugins/__init__.py``: a namespace shared with other plugins) in site-packages,
    where Hydra's own plugin scan finds the sweeper."""
    import sys

    from .conftest import clean_env

    lib = built_package
    assert (lib / "hydra_plugins" / "recoeval_optuna_sweeper" / "optuna_sweeper.py").is_file()
    assert not (lib / "hydra_plugins" / "__init__.py").exists()
    env = clean_env()
    env["PYTHONPATH"] = str(lib)
    run = tmp_path / "run"
    run.mkdir()
    probe = run_process([sys.executable, "-c", _DISCOVER], run, env=env, timeout=120)
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert "OptunaSweeper" in probe.stdout


def test_the_command_registers_the_plugin_in_any_install(tmp_path):
    """An editable install maps the plugin through an import hook that Hydra's scan cannot list;
    the command registers it itself (outside the checkout, no PYTHONPATH)."""
    import sys

    from .conftest import clean_env

    env = clean_env()
    env.pop("PYTHONPATH", None)
    code = (
        "from recoeval_tracking.app.cli import register_search_plugin as r; "
        "assert r(); " + _DISCOVER
    )
    probe = run_process([sys.executable, "-c", code], tmp_path, env=env, timeout=120)
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert "OptunaSweeper" in probe.stdout


def test_with_a_validation_part_the_trials_are_read_on_validation_and_the_best_tested_once(
    tmp_path, local_store
):
    proc, client, runs = _search(
        tmp_path, local_store, "hydra.sweeper.n_trials=3", "split.validation_fraction=0.15"
    )
    (parent,) = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    trials = [r for r in children if r.data.tags.get("recoeval.phase") == "selection"]
    (tested,) = [r for r in children if r.data.tags.get("recoeval.phase") == "test"]
    assert len(trials) == 3
    for trial in trials:  # no trial has a test number
        assert "ndcg_at_10" not in trial.data.metrics and "val_ndcg_at_10" in trial.data.metrics
    best = max(trials, key=lambda r: r.data.metrics["val_ndcg_at_10"])
    assert tested.data.params["model.factors"] == best.data.params["model.factors"]
    assert tested.data.metrics["val_ndcg_at_10"] == pytest.approx(
        best.data.metrics["val_ndcg_at_10"], rel=1e-12
    )
    # the search's curve is the validation one; the parent's best is the one test number
    assert parent.data.metrics["best_val_ndcg_at_10"] == pytest.approx(
        best.data.metrics["val_ndcg_at_10"], rel=1e-12
    )
    assert parent.data.metrics["best_ndcg_at_10"] == tested.data.metrics["ndcg_at_10"]
    assert parent.data.tags["recoeval.protocol"] == (
        "chosen on validation by val NDCG@10 among 3 configurations per system, tested once "
        "(refit on train + validation)"
    )
    assert "protocol: chosen on validation" in proc.stdout
    # the budget counts the fits the jobs measured (each trial's fit on train, the test's fit
    # and refit), read from their own folders; the split's leakage, from the tested job's
    jobs = _job_folders(tmp_path)
    seconds = sum(m.get("fit_seconds", 0.0) + m.get("refit_seconds", 0.0) for _, m, _ in jobs)
    assert seconds > 0
    budget = f"3 configurations, {seconds:.1f} s of fits"
    assert parent.data.tags["recoeval.budget.als"] == budget
    assert budget in proc.stdout
    ((dataset,),) = [[d] for o, _, d in jobs if "phase=test" in o]
    leak = leakage_line(dataset["leakage"])
    assert leak.startswith("leakage: ") and parent.data.tags["recoeval.leakage"] == leak
    assert leak in proc.stdout


def _job_folders(root: Path) -> list[tuple[str, dict, dict]]:
    """Each completed job of the sweeps under ``root``: its overrides (as text), its
    ``metrics.json`` and its ``dataset.json``."""
    out = []
    for metrics in sorted((root / "multirun").rglob("metrics.json")):
        overrides = (metrics.parent / ".hydra" / "overrides.yaml").read_text()
        dataset = json.loads((metrics.parent / "dataset.json").read_text())
        out.append((overrides, json.loads(metrics.read_text()), dataset))
    return out


@pytest.mark.slow
def test_a_failed_trial_is_counted_said_once_and_the_best_still_tested(tmp_path, local_store):
    """A trial whose job fails (ALS with 0 factors) is said by the job itself, never by
    Hydra's raw line; the search stops after its batch, tests its best completed trial, and
    the parent's protocol line and budget say the configurations the failure took away."""
    from mlflow import MlflowClient

    proc = run_command(
        [
            "-m",
            "hydra/sweeper=optuna",
            "model=als",
            "model.iterations=2",
            "model.factors=choice(0,4)",
            *TINY_DATA,
            *QUIET,
            "split.validation_fraction=0.15",
            "hydra.sweeper.seed=0",
            "hydra.sweeper.n_trials=3",
            "hydra.sweeper.n_jobs=3",
            "objective=ndcg_at_10",
        ],
        tmp_path,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "Error executing job with overrides" not in out
    assert "of the sweep failed: " in out
    launched = list((tmp_path / "multirun").rglob(".hydra/overrides.yaml"))
    jobs = _job_folders(tmp_path)
    failed = sum("phase=selection" in p.read_text() for p in launched) - sum(
        "phase=selection" in o for o, _, _ in jobs
    )
    assert 1 <= failed < 3  # the seeded search drew both values
    assert sum("phase=test" in o for o, _, _ in jobs) == 1
    client = MlflowClient(local_store)
    (parent,) = client.search_runs(
        [client.get_experiment_by_name("recoeval").experiment_id],
        filter_string="tags.`recoeval.sweep_parent` = 'true'",
    )
    line = f"failed jobs: als {failed} of 3 configurations on validation (not chosen from)"
    assert parent.data.tags["recoeval.protocol"].endswith(line)
    assert f"protocol: {parent.data.tags['recoeval.protocol']}" in proc.stdout
    seconds = sum(m.get("fit_seconds", 0.0) + m.get("refit_seconds", 0.0) for _, m, _ in jobs)
    lost = f"{failed} of 3 failed on validation"
    assert (
        parent.data.tags["recoeval.budget.als"]
        == f"3 configurations, {lost}, {seconds:.1f} s of fits"
    )
    assert parent.data.tags["recoeval.equal_budgets"] == "false"
