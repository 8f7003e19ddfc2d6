"""Baselines as part of a sweep: ``-m model=item_knn model.neighbours=10,50
'baselines=[popularity,random]'`` runs the grid and each baseline once, with its own defaults,
on the same split, under one MLflow parent; the terminal, the parent run and the report compare
every system against every baseline (tests/sweeps/test_study_agrees.py reads all of them). A sweep whose jobs do not compose names the job and where its key exists, and
leaves no run.

The commands run in a temporary directory with a SQLite store there (``tracking=local``), on a
small synthetic dataset: the sweep as a fresh process, the refusals and the single run (what it
says, the one job folder it writes) through the command's entry point in the test process.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from commands import SMALL_SWEEP, run_main, sweep_in_store, sweep_report_config
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from hydra_plugins.recoeval_sweeper.sweeper import baseline_jobs, read_baselines
from recoeval_tracking._validation import InputError

SMALL = SMALL_SWEEP
EXACT = ["-m", "model=item_knn", "model.neighbours=10,50", "baselines=[popularity,random]"]


def _parse(args: list[str]):
    return OverridesParser.create().parse_overrides(args)


# -- the jobs a sweep adds ------------------------------------------------------------------


def test_each_baseline_is_one_job_without_the_grids_model_overrides():
    jobs = baseline_jobs(
        _parse(["model=item_knn", "model.neighbours=10,50", "+model.x=1", "dataset.n_users=9"]),
        ["popularity", "random"],
    )
    assert jobs == [
        ["model=popularity", "dataset.n_users=9", "++baseline_rank=0"],
        ["model=random", "dataset.n_users=9", "++baseline_rank=1"],
    ]


def test_a_key_swept_outside_the_model_gives_each_baseline_one_job_per_value():
    jobs = baseline_jobs(_parse(["model.factors=8,16", "seed=0,1"]), ["popularity"])
    assert jobs == [
        ["model=popularity", "seed=0", "++baseline_rank=0"],
        ["model=popularity", "seed=1", "++baseline_rank=0"],
    ]
    assert baseline_jobs(_parse(["seed=0,1"]), []) == []


@pytest.mark.parametrize(
    ("baselines", "args", "says"),
    [
        ("popularity", [], "list of model option names"),
        (["popularity", "popularity"], [], "popularity twice"),
        ([], ["baselines=popularity,random"], "'baselines=[popularity,random]'"),
        (["random", "populrity"], [], "(popularity, als, random); got ['random', 'populrity']"),
    ],
)
def test_baselines_that_are_not_one_list_of_names_are_refused(baselines, args, says):
    options = ["als", "popularity", "random"]
    with pytest.raises(InputError, match="baselines") as info:
        read_baselines(OmegaConf.create({"baselines": baselines}), _parse(args), options)
    assert says in str(info.value)


def test_baselines_are_checked_against_the_options_only_when_they_are_known():
    config = OmegaConf.create({"baselines": ["mine"]})
    assert read_baselines(config, [], None) == ["mine"]  # composing the job decides
    assert read_baselines(config, [], ["mine", "random"]) == ["mine"]


# -- the exact command, end to end ----------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory, migrated_db):
    """The exact command of the guide, run once in a fresh process."""
    return sweep_in_store(
        tmp_path_factory, migrated_db, "baselines", [*EXACT, *SMALL], module=False
    )


def _runs(root: Path):
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exps = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(exps, max_results=100)


@pytest.mark.slow
def test_the_grid_and_each_baseline_once_under_one_parent(swept):
    root, _ = swept
    runs = _runs(root)
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and len(runs) == 5 and len(children) == 4
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert all(r.info.status == "FINISHED" for r in runs)
    by_model: dict[str, list] = {}
    for c in children:
        by_model.setdefault(c.data.params["model.name"], []).append(c)
    assert sorted((m, len(v)) for m, v in by_model.items()) == [
        ("item_knn", 2),
        ("popularity", 1),
        ("random", 1),
    ]
    assert sorted(c.data.params["model.neighbours"] for c in by_model["item_knn"]) == ["10", "50"]
    for rank, name in enumerate(["popularity", "random"]):
        (run,) = by_model[name]
        assert run.data.tags["recoeval.baseline"] == "true"
        assert run.data.tags["recoeval.baseline_rank"] == str(rank)
        assert "model.neighbours" not in run.data.tags["recoeval.overrides"]
    assert not any("recoeval.baseline" in c.data.tags for c in by_model["item_knn"])
    # one split: the same data and split fingerprints for every job
    assert len({c.data.tags["recoeval.split_fingerprint"] for c in children}) == 1
    assert len({c.data.tags["recoeval.data_fingerprint"] for c in children}) == 1


@pytest.mark.slow
def test_baselines_keep_their_own_defaults_in_their_job_folders(swept):
    from recoeval_tracking.app.cli import option_node

    root, _ = swept
    jobs = {
        yaml.safe_load((d / "config.yaml").read_text())["model"]["name"]: d
        for d in sorted((root / "multirun" / "s").glob("[0-9]*"))
    }
    assert sorted(jobs) == ["item_knn", "popularity", "random"]  # one folder per model name
    for rank, name in enumerate(["popularity", "random"]):
        config = yaml.safe_load((jobs[name] / "config.yaml").read_text())
        # the option's own config (its schema, then its YAML), with the top-level seed 0
        default = OmegaConf.merge({"seed": 0}, {"model": option_node("model", name)})
        assert config["model"] == OmegaConf.to_container(default, resolve=True)["model"]
        assert config["baseline_rank"] == rank
        overrides = yaml.safe_load((jobs[name] / "overrides.yaml").read_text())
        assert f"model={name}" in overrides and not any(o.startswith("model.") for o in overrides)


@pytest.mark.slow
def test_the_leaderboard_and_the_report_compare_against_the_first_baseline(swept):
    from recoeval_tracking.app.report import run_report

    root, proc = swept
    children = [r for r in _runs(root) if "mlflow.parentRunId" in r.data.tags]
    pop = next(r for r in children if r.data.params["model.name"] == "popularity")
    base = pop.data.metrics["ndcg_at_10"]
    out = proc.stdout
    # one block per baseline, the first first; one split: no replicates to pair or count
    assert "against each baseline on ndcg_at_10:" in out
    block = out[out.index(f"  popularity (baseline; ndcg_at_10 = {base:.4f}):") :]
    block = block[: block.index("  random (baseline;")]
    for run in children:
        if run is not pop:
            delta = run.data.metrics["ndcg_at_10"] - base
            assert re.search(
                re.escape(run.info.run_name) + r"( \(baseline\))?\s+" + re.escape(f"{delta:+.4f}"),
                block,
            ), out
    assert "replicate" not in block
    # the baseline lines sit between the leaderboard and the report command
    assert out.index("against each baseline") < out.index("recoeval-track-report")

    sweep_id = pop.data.tags["recoeval.sweep_id"]
    cfg = sweep_report_config(root, sweep_id)
    assert run_report(cfg)["report"].baseline == pop.info.run_id  # not the sweep's first run
    told = run_report({**cfg, "baseline": "random"})["report"]
    assert told.run(told.baseline).name == "random"


# -- a sweep whose jobs do not compose ------------------------------------------------------


def test_a_job_that_does_not_compose_is_named_and_leaves_no_run(tmp_path, store_uri):
    conf = tmp_path / "conf" / "model"
    conf.mkdir(parents=True)
    (conf / "cosknn.yaml").write_text("_target_: my_models.CosKNN\nneighbours: 20\n")
    proc = run_main(
        ["-m", "--config-dir", "conf", "model=cosknn,popularity", "model.neighbours=10,50", *SMALL],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    # the failing job by its number and overrides, and the options that do declare the key
    assert "job #2 of the sweep's 4 (model=popularity model.neighbours=10" in err, err
    assert "It is a setting of model=cosknn and model=item_knn" in err, err
    assert "'baselines=[popularity]'" in err and "No job was run" in err
    assert "Traceback" not in proc.stderr
    # nothing to report and nothing logged: no report command, no address, no parent run
    assert "recoeval-track-report" not in proc.stdout + proc.stderr
    assert "http://" not in proc.stdout + proc.stderr
    assert _runs(tmp_path) == []
    assert not (tmp_path / "multirun").exists()


def test_a_misspelt_baseline_is_named_before_any_job_runs(tmp_path, store_uri):
    proc = run_main(["-m", "model=popularity", "baselines=[random,populrity]", *SMALL], tmp_path)
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    # named with the group's options, the close one first, before any job is composed
    assert err.startswith(
        "recoeval-track: baselines must name options of the config group 'model' (popularity, "
    ), err
    assert "where 'populrity' is none of them" in err, err
    assert _runs(tmp_path) == [] and "Traceback" not in proc.stderr


def test_baselines_in_the_users_own_app_are_refused_in_one_line_naming_that_app(tmp_path):
    """Door 3 (docs/guides/own-model.md): a bad ``baselines=`` in the user's own Hydra app
    (examples/own_model/train.py) ends in one line naming that app, not a traceback naming
    recoeval-track."""
    import shutil
    import sys

    from commands import REPO_ROOT, run_process

    app = tmp_path / "own_model"
    shutil.copytree(
        REPO_ROOT / "examples" / "own_model",
        app,
        ignore=shutil.ignore_patterns("__pycache__", "outputs", "multirun", "mlflow.db"),
    )
    for bad, says in (
        ("baselines=[populrity]", "where 'populrity' is none of them"),
        ("baselines=popularity", "got 'popularity'"),
    ):
        proc = run_process([sys.executable, "train.py", "-m", bad, "tracking=none"], app)
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("train.py: baselines must "), lines[0]
        assert says in lines[0] and "recoeval-track" not in lines[0], lines[0]
    assert not (app / "multirun").exists()


def test_a_sweeper_that_cannot_run_baselines_refuses_them_before_any_job(tmp_path, store_uri):
    proc = run_main(
        [
            "-m",
            "hydra/sweeper=optuna",
            "objective=ndcg_at_10",
            "model=als",
            "model.factors=int(interval(8,16))",
            "baselines=[random]",
            *SMALL,
        ],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "baselines=['random']" in err and "OptunaSweeper" in err, err
    assert _runs(tmp_path) == [] and "Traceback" not in proc.stderr


def test_a_single_run_says_it_does_not_run_the_baselines(tmp_path):
    proc = run_main(["model=popularity", "baselines=[random]", "tracking=none", *SMALL], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "this single run evaluates its own model only. Add -m" in " ".join(proc.stderr.split())
    assert len(list((tmp_path / "outputs").rglob("per_user.parquet"))) == 1


def test_a_single_run_names_the_users_options_that_have_the_key(tmp_path):
    conf = tmp_path / "conf" / "model"
    conf.mkdir(parents=True)
    (conf / "cosknn.yaml").write_text("_target_: my_models.CosKNN\nneighbours: 20\n")
    (conf / "other.yaml").write_text("_target_: my_models.Other\nfactors: 8\n")
    proc = run_main(
        ["--config-dir", "conf", "model=popularity", "model.neighbours=10", "tracking=none"],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "It belongs to model=item_knn / cosknn:" in " ".join(proc.stderr.split())


def test_baseline_lines_list_the_baselines_in_the_order_given_and_mark_them():
    """The board is sorted by its metric, so the better second baseline comes first there; the
    text still names the baselines in the order of baselines=[...] and marks each as one."""
    import pandas as pd

    from recoeval_tracking.app.callbacks import baseline_lines

    board = pd.DataFrame(
        {
            "run_id": ["k", "m", "p"],
            "run_name": ["item_knn", "mine", "popularity"],
            "ndcg_at_10": [0.30, 0.25, 0.20],
        }
    )
    board.attrs["sort_by"] = "ndcg_at_10"
    tags = {
        "k": {"recoeval.baseline": "true", "recoeval.baseline_rank": "1"},
        "p": {"recoeval.baseline": "true", "recoeval.baseline_rank": "0"},
        "m": {},
    }
    lines = baseline_lines(board, tags)
    assert lines[0] == "against each baseline on ndcg_at_10:"
    assert lines[1] == "  popularity (baseline; ndcg_at_10 = 0.2000):"
    assert lines[2].split() == ["item_knn", "(baseline)", "+0.1000", "(+50.0%)"]
    assert lines[3].split() == ["mine", "+0.0500", "(+25.0%)"]
    # every baseline is compared, the second too
    assert lines[4] == "  item_knn (baseline; ndcg_at_10 = 0.3000):"
    assert lines[5].split() == ["mine", "-0.0500", "(-16.7%)"]
    assert lines[6].split() == ["popularity", "(baseline)", "-0.1000", "(-33.3%)"]


def test_baseline_lines_pair_each_fold_with_the_baselines_fold():
    """k-fold with a baseline: each run is paired with the baseline's run of its own fold, the
    difference averaged over the folds, their number said; the system is named without its
    fold (the issue: +0.0305 on fold 1 printed as +0.0005 against another fold)."""
    import pandas as pd

    from recoeval_tracking.app.callbacks import baseline_lines

    values = {
        ("mine", 0): 0.3305,
        ("mine", 1): 0.2505,
        ("popularity", 0): 0.3000,
        ("popularity", 1): 0.2500,
    }
    board = pd.DataFrame(
        {
            "run_id": [f"{m}{f}" for m, f in values],
            "run_name": [f"{m} fold={f}" for m, f in values],
            "ndcg_at_10": list(values.values()),
        }
    ).sort_values("ndcg_at_10", ascending=False)
    board.attrs["sort_by"] = "ndcg_at_10"
    tags = {}
    for m, f in values:
        model = "model=my.Model" if m == "mine" else "model=popularity"
        extra = " ++baseline_rank=0" if m == "popularity" else ""
        tags[f"{m}{f}"] = {"recoeval.overrides": f"{model} split=kfold split.fold={f}{extra}"}
        if extra:
            tags[f"{m}{f}"].update({"recoeval.baseline": "true", "recoeval.baseline_rank": "0"})
    lines = baseline_lines(board, tags)
    assert lines[0] == (
        "against each baseline on ndcg_at_10, each run paired with the baseline's run of the "
        "same split.fold:"
    )
    assert lines[1] == "  popularity (baseline; ndcg_at_10 = 0.2750, mean of 2 replicates):"
    assert lines[2].split() == ["mine", "+0.0155", "(+5.6%)", "2", "replicates"]
    assert len(lines) == 3
