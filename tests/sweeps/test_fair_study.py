"""A sweep with a validation part is a fair study: every configuration of every system (the
grid's model and each baseline, tuned over its ``model.search_space`` with the grid's budget) is
evaluated on validation, the best of each system by the validation objective is refit and
tested once, and the leaderboard, the parent run and the terminal compare those on test and say
so in one line.

The expected choices are read back from each selection job's own folder (its
``metrics.json``), independently of the sweeper's record; the expected test values of the
chosen configuration come from the Python API on the same split (fit on train + validation,
evaluated on test), not from the job.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from commands import SMALL_SWEEP, run_main, sweep_report_config

import recoeval_tracking as rt
from recoeval_tracking.app.protocol import protocol_line
from recoeval_tracking.app.study import (
    Candidate,
    choose,
    space_configurations,
    tuned_overrides,
)

from .conftest import study_here

SMALL = [
    *(o for o in SMALL_SWEEP if not o.startswith("dataset.n_users=")),
    "dataset.n_users=150",
    "split.validation_fraction=0.15",
]
STUDY = ["-m", "model=item_knn", "model.neighbours=5,20", "baselines=[popularity,als]"]


# -- the plan, on its own -------------------------------------------------------------------


def test_a_search_space_is_the_product_of_its_lists_in_order():
    space = {"factors": [8, 16], "regularization": [0.1, 1.0, 10.0]}
    configs = space_configurations(space, "als")
    assert configs[:2] == [
        {"factors": 8, "regularization": 0.1},
        {"factors": 8, "regularization": 1.0},
    ]
    assert len(configs) == 6 and len({tuple(c.values()) for c in configs}) == 6
    assert space_configurations({}, "x") == [{}] and space_configurations(None, "x") == [{}]
    with pytest.raises(rt.InputError, match=r"model.search_space.factors of 'als'"):
        space_configurations({"factors": 8}, "als")


def test_a_baseline_gets_the_grids_budget_drawn_from_its_space():
    configs = space_configurations({"n": list(range(10))}, "m")
    drawn = tuned_overrides(configs, 3, seed=7)
    assert len(drawn) == 3 and len({tuple(d) for d in drawn}) == 3
    values = [int(d[0].split("=")[1]) for d in drawn]
    assert values == sorted(values)  # the space's order
    assert drawn == tuned_overrides(configs, 3, seed=7)  # seeded
    assert tuned_overrides(configs, 3, seed=8) != drawn
    # a space with no more configurations than the budget runs all of them
    assert tuned_overrides(configs[:2], 3, seed=7) == [["model.n=0"], ["model.n=1"]]


def _plan(validation=True, tune=True):
    from omegaconf import OmegaConf

    from recoeval_tracking.app.study import StudyPlan

    split = {"name": "random", "validation_fraction": 0.1 if validation else None}
    config = OmegaConf.create(
        {"metrics": {"k": 10}, "objective": None, "tune_baselines": tune, "seed": 0}
    )
    grid = [["model.neighbours=5", "seed=0"], ["model.neighbours=20", "seed=0"]]
    knn = {"split": split, "model": {"name": "item_knn"}}
    als = {
        "split": split,
        "model": {"name": "als", "search_space": {"factors": [8, 16, 32], "regularization": [1]}},
        "baseline_rank": 0,
    }
    configs = [OmegaConf.create(knn), OmegaConf.create(knn), OmegaConf.create(als)]
    return StudyPlan(config, grid, [["model=als", "seed=0", "++baseline_rank=0"]], configs)


def test_a_plan_gives_each_baseline_the_grids_budget_only_with_a_validation_part():
    plan = _plan()
    als = [c for c in plan.candidates if c.system == "als"]
    assert len(als) == 2 and len({tuple(c.overrides) for c in als}) == 2  # 2 of its 3
    assert all(c.replicate == ("seed=0",) and c.baseline_rank == 0 for c in als)
    assert {tuple(c.overrides) for c in plan.selection_candidates()} >= {
        tuple(c.overrides) for c in als
    }
    assert plan.objective == "ndcg_at_10" and plan.greater
    assert len([c for c in _plan(tune=False).candidates if c.system == "als"]) == 1
    assert len([c for c in _plan(validation=False).candidates if c.system == "als"]) == 1


def test_the_choice_is_the_best_validation_value_per_system_and_replicate():
    cands = [
        Candidate(["a=1"], "knn", ("seed=0",), value=0.2),
        Candidate(["a=2"], "knn", ("seed=0",), value=0.3),
        Candidate(["a=3"], "knn", ("seed=0",), value=0.3),  # a tie: the first one stays
        Candidate(["a=1"], "knn", ("seed=1",), value=0.5),
        Candidate(["a=2"], "knn", ("seed=1",), value=math.nan),
        Candidate(["b=1"], "pop", ("seed=0",), value=0.9, failed=True),
        Candidate(["b=2"], "pop", ("seed=0",), value=0.1),
    ]
    best = choose(cands, "ndcg_at_10", greater_is_better=True)
    assert best[("knn", ("seed=0",))].overrides == ["a=2"]
    assert best[("knn", ("seed=1",))].overrides == ["a=1"]
    assert best[("pop", ("seed=0",))].overrides == ["b=2"]  # a failed job is never chosen
    lower = choose(cands[:3], "mpr", greater_is_better=False)
    assert lower[("knn", ("seed=0",))].overrides == ["a=1"]


def test_a_baseline_that_ran_its_whole_smaller_space_had_an_equal_budget():
    from recoeval_tracking.app.study import study_record

    cands = [Candidate([f"n={i}"], "knn") for i in range(5)]
    cands += [Candidate([f"w={i}"], "pop", baseline_rank=0) for i in range(2)]
    cands += [Candidate(["x"], "rand", baseline_rank=1)]  # no space: its defaults only
    record = study_record(
        cands, {}, on_validation=True, objective="ndcg_at_10", refit=True, space_sizes={"pop": 2}
    )
    assert record["systems"]["pop"]["whole_search_space"] is True
    assert "pop 2: its whole search space" in record["protocol"]
    assert record["equal_budgets"] is False  # rand ran 1 of no space: unequal, and said so
    fair = study_record(
        cands[:7],
        {},
        on_validation=True,
        objective="ndcg_at_10",
        refit=True,
        space_sizes={"pop": 2},
    )
    assert fair["equal_budgets"] is True


def test_a_budget_line_counts_the_configurations_whose_job_failed():
    """A system that ran 6 configurations, 2 of whose jobs failed, chose among 4: its budget
    line says so on every surface (terminal, the parent run's tag, the report)."""
    from recoeval_tracking.tracking.sweeps import budget_lines

    entry = {"configurations": 6, "fit_seconds": 2.34, "jobs": 6, "failed": 2, "test_failed": 0}
    ok = {"configurations": 6, "fit_seconds": 5.1, "jobs": 6, "failed": 0, "test_failed": 1}
    lines = budget_lines({"systems": {"cosine": entry, "als": ok}, "equal_budgets": False})
    assert (
        lines[1].split(None, 1)[1] == "6 configurations, 2 of 6 failed on validation, 2.3 s of fits"
    )
    assert lines[2].split(None, 1)[1] == "6 configurations, 1 failed on test, 5.1 s of fits"
    # a protocol line that names the failed jobs says them once, for every surface that prints
    # these lines (the terminal, the parent run's description)
    protocol = "chosen on validation; failed jobs: cosine 2 of 6 configurations on validation"
    study = {"systems": {"cosine": entry, "als": ok}, "protocol": protocol}
    assert [line.split(None, 1)[1] for line in budget_lines(study)[1:]] == [
        "6 configurations, 2.3 s of fits",
        "6 configurations, 5.1 s of fits",
    ]


def test_the_protocol_line_says_how_the_winner_was_chosen():
    fair = protocol_line(
        on_validation=True, objective="ndcg_at_10", configurations={"knn": 3, "als": 3}
    )
    assert fair == (
        "chosen on validation by val NDCG@10 among 3 configurations per system, tested once "
        "(refit on train + validation)"
    )
    optimistic = protocol_line(
        on_validation=False, objective="ndcg_at_10", configurations={"knn": 4, "pop": 1}
    )
    assert optimistic.startswith("chosen on the test split (optimistic: the best of")
    assert "up to 4 configurations per system (knn 4, pop 1)" in optimistic
    single = protocol_line(on_validation=False, objective=None, configurations={"a": 1, "b": 1})
    assert "nothing was chosen" in single


# -- the sweep, end to end ------------------------------------------------------------------


@pytest.fixture(scope="module")
def study(tmp_path_factory, migrated_db):
    root, proc = study_here(tmp_path_factory, migrated_db, "fair", [*STUDY, *SMALL])
    jobs = []
    for d in sorted((root / "multirun" / "s").glob("[0-9]*"), key=lambda p: int(p.name)):
        config = yaml.safe_load((d / "config.yaml").read_text())
        metrics = json.loads((d / "metrics.json").read_text())
        jobs.append((d, config, metrics))
    record = json.loads((root / "multirun" / "s" / "recoeval_study.json").read_text())
    return root, proc, jobs, record


def _system(config) -> str:
    return config["model"]["name"]


@pytest.mark.slow
def test_every_system_is_chosen_on_validation_and_tested_once(study):
    root, proc, jobs, record = study
    selection = [j for j in jobs if j[1]["phase"] == "selection"]
    tests = [j for j in jobs if j[1]["phase"] == "test"]
    # the grid has 2 configurations: each baseline is tuned over 2 of its space
    assert sorted(_system(c) for _, c, _ in selection) == sorted(
        ["item_knn"] * 2 + ["popularity"] * 2 + ["als"] * 2
    )
    assert sorted(_system(c) for _, c, _ in tests) == ["als", "item_knn", "popularity"]
    for _, _, metrics in selection:  # validation numbers only
        assert "val_ndcg_at_10" in metrics and "ndcg_at_10" not in metrics
    for name in ("item_knn", "popularity", "als"):
        values = [(m["val_ndcg_at_10"], c["model"]) for _, c, m in selection if _system(c) == name]
        best = max(values, key=lambda v: v[0])  # no ties on these data
        (tested,) = [c for _, c, _ in tests if _system(c) == name]
        assert {k: v for k, v in tested["model"].items() if k != "search_space"} == {
            k: v for k, v in best[1].items() if k != "search_space"
        }
        assert record["systems"][name]["configurations"] == 2
    assert record["equal_budgets"] is True
    assert record["protocol"] == (
        "chosen on validation by val NDCG@10 among 2 configurations per system, tested once "
        "(refit on train + validation)"
    )


@pytest.mark.slow
def test_the_tested_number_is_the_refit_on_train_and_validation(study):
    root, _, jobs, _ = study
    (job,) = [j for j in jobs if j[1]["phase"] == "test" and _system(j[1]) == "item_knn"]
    d, config, metrics = job
    from recoeval_tracking.app.pipeline import load_data, split_data

    split = split_data(load_data(config["dataset"]), config["split"])
    test = split.test_split()
    neighbours = config["model"]["neighbours"]
    model = rt.make_model("item_knn", neighbours=neighbours).fit(test.train.matrix)
    res = rt.evaluate(test.train, test.test, scores=model.score_source(), k=10, seed=0)
    assert metrics["ndcg_at_10"] == pytest.approx(res.means["ndcg_at_10"], abs=1e-12)
    # and its validation number is the first fit's, on train, against the validation part
    first = rt.make_model("item_knn", neighbours=neighbours).fit(split.train.matrix)
    val = split.validation_split()
    vres = rt.evaluate(val.train, val.test, scores=first.score_source(), k=10, seed=0)
    assert metrics["val_ndcg_at_10"] == pytest.approx(vres.means["ndcg_at_10"], abs=1e-12)
    assert (d / "per_user_validation.parquet").is_file()


@pytest.mark.slow
def test_the_leaderboard_and_the_parent_compare_the_chosen_on_test(study):
    from mlflow import MlflowClient

    root, proc, jobs, record = study
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    (parent,) = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    phases = sorted(r.data.tags.get("recoeval.phase") for r in children)
    assert phases == ["selection"] * 6 + ["test"] * 3
    assert parent.data.tags["recoeval.protocol"] == record["protocol"]
    assert parent.data.tags["recoeval.budget.als"].startswith("2 configurations, ")
    best_test = max(
        r.data.metrics["ndcg_at_10"] for r in children if r.data.tags["recoeval.phase"] == "test"
    )
    assert parent.data.metrics["best_ndcg_at_10"] == best_test
    # the saved table view of the jobs shows the tested runs only
    exp = client.get_experiment(parent.info.experiment_id)
    sweep_id = parent.data.tags["recoeval.sweep_id"]
    view = exp.tags[f"mlflow.sharedViewState.recoeval-sweep-{sweep_id}"]
    assert "tags.`recoeval.phase` = 'test'" in json.loads(view)["searchFilter"]
    out = proc.stdout
    assert "3 tested configurations (6 more evaluated on validation only)" in out
    assert f"protocol: {record['protocol']}" in out
    assert out.index("protocol:") < out.index("recoeval-track-report")


@pytest.mark.slow
def test_the_report_compares_the_chosen_on_test_and_says_how(study):
    from recoeval_tracking.app.report import run_report

    root, _, jobs, record = study
    sweep_id = json.loads((root / "multirun" / "s" / "recoeval_sweep.json").read_text())["sweep_id"]
    cfg = sweep_report_config(root, sweep_id, latex="report.tex")
    report = run_report(cfg)["report"]
    assert sorted(r.name.split()[0] for r in report.runs) == ["als", "item_knn", "popularity"]
    assert report.settings["protocol"] == record["protocol"]
    assert report.settings["budgets"]["als"].startswith("2 configurations")
    page = (root / "report" / "report.md").read_text()
    assert "**Protocol:** chosen on validation by val NDCG@10 among 2 configurations" in page
    tex = (root / "report" / "report.tex").read_text()
    assert "Protocol: chosen on validation by val NDCG@10" in tex and "Budgets: " in tex


@pytest.mark.slow
def test_the_notebook_call_gives_the_apps_numbers(study):
    from recoeval_tracking.app.pipeline import load_data, split_data

    _, _, jobs, _ = study
    (test_job,) = [c for _, c, _ in jobs if c["phase"] == "test" and _system(c) == "item_knn"]
    split = split_data(load_data(test_job["dataset"]), test_job["split"])
    sel = rt.select_and_test(
        split,
        {f"knn {n}": (lambda n=n: rt.make_model("item_knn", neighbours=n)) for n in (5, 20)},
        objective="ndcg_at_10",
        metrics=["ndcg"],
    )
    by_neighbours = {
        c["model"]["neighbours"]: m["val_ndcg_at_10"]
        for _, c, m in jobs
        if c["phase"] == "selection" and _system(c) == "item_knn"
    }
    for n in (5, 20):
        row = sel.validation.set_index("configuration").loc[f"knn {n}"]
        assert row["val_ndcg_at_10"] == pytest.approx(by_neighbours[n], abs=1e-12)
    assert sel.chosen == f"knn {test_job['model']['neighbours']}"
    ((folder, tested),) = [
        (d, m) for d, c, m in jobs if c["phase"] == "test" and _system(c) == "item_knn"
    ]
    assert sel.test.means["ndcg_at_10"] == pytest.approx(tested["ndcg_at_10"], abs=1e-12)
    # the fingerprint the job records: rt.compare pairs the notebook's result with the job
    recorded = json.loads((folder / "dataset.json").read_text())["split_fingerprint"]
    assert sel.test.split_fingerprint == recorded
    assert sel.protocol.startswith("chosen on validation by val NDCG@10 among 2 configurations")


def test_the_notebook_call_refuses_a_split_without_validation_and_a_bad_objective():
    X = rt.make_synthetic(n_users=60, n_items=30, n_interactions=700, seed=1)
    configs = {"pop": lambda: rt.make_model("popularity")}
    with pytest.raises(rt.InputError, match="validation_fraction=0.1"):
        rt.select_and_test(rt.make_split("random", X, seed=0), configs)
    split = rt.make_split("random", X, validation_fraction=0.2, seed=0)
    with pytest.raises(rt.InputError, match="objective"):
        rt.select_and_test(split, configs, objective="ndgc_at_10")
    with pytest.raises(rt.InputError, match="configurations"):
        rt.select_and_test(split, {})


# -- refusals -------------------------------------------------------------------------------


def test_an_objective_that_is_not_a_metric_stops_the_study_before_any_job(tmp_path):
    proc = run_main([*STUDY, "objective=ndgc_at_10", *SMALL, "tracking=none"], tmp_path)
    assert proc.returncode != 0
    assert "objective" in proc.stderr and "ndgc_at_10" in proc.stderr
    assert not list(Path(tmp_path).glob("multirun/*/*/0/metrics.json"))


def test_a_search_space_naming_an_unknown_parameter_is_refused(tmp_path):
    configs = tmp_path / "my_configs" / "model"
    configs.mkdir(parents=True)
    (configs / "pop_bad.yaml").write_text(
        "defaults:\n  - popularity\n  - _self_\nsearch_space:\n  nope: [1, 2]\n"
    )
    proc = run_main(
        [
            "--config-dir",
            str(tmp_path / "my_configs"),
            *STUDY[:3],
            "baselines=[pop_bad]",
            *SMALL,
            "tracking=none",
        ],
        tmp_path,
    )
    assert proc.returncode != 0
    assert "model.search_space of the baseline 'pop_bad'" in proc.stderr, proc.stderr
    assert "model.nope=" in proc.stderr and "Could not override" in proc.stderr
    assert not list(tmp_path.glob("multirun/*/*/*/metrics.json"))  # before any job


def test_a_baseline_that_is_the_grids_model_is_refused_by_name(tmp_path):
    proc = run_main(
        ["-m", "model=popularity", "baselines=[random,popularity]", *SMALL, "tracking=none"],
        tmp_path,
    )
    assert proc.returncode != 0
    assert "baselines names popularity, which the sweep's grid already runs" in proc.stderr
    assert not list(tmp_path.glob("multirun/*/*/*/metrics.json"))  # before any job


def test_phase_selection_needs_a_validation_part(tmp_path):
    proc = run_main(
        ["model=popularity", "phase=selection", "tracking=none", "plots=false"], tmp_path
    )
    assert proc.returncode != 0
    assert "phase=selection" in proc.stderr and "validation_fraction" in proc.stderr


def test_users_without_validation_entries_are_counted(tmp_path):
    from recoeval_tracking.app.protocol import check_validation_users

    X = rt.make_synthetic(n_users=80, n_items=40, n_interactions=900, seed=2)
    split = rt.make_split("random", X, test_fraction=0.3, validation_fraction=0.03, seed=0)
    missing = (split.test.user_counts() > 0) & (split.validation.user_counts() == 0)
    assert check_validation_users(split) == int(np.count_nonzero(missing)) > 0
