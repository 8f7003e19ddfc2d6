"""Comparability metric by metric, and seeds as replicates.

A sweep over models where some metrics exist only for factor models (``ils``, ``diversity``), and
a sweep over seeds (each seed draws its own split, and here its own synthetic data), both report
with exit 0: each metric is compared over the runs that define it alike, the runs it is missing
from are named, and seeds are aggregated with the spread between them. The sweep and the reports
run the commands' entry points in this process (:func:`commands.run_main`: their exit status and
output as the commands').
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from commands import run_main  # tests/ is on sys.path (tests/conftest.py)
from report_runs import synthetic_run

from recoeval_tracking import evaluate, load_dataset, make_model, make_split
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.reporting.render import render_markdown
from recoeval_tracking.reporting.replicates import default_group_by, guess_replicate_key
from recoeval_tracking.reporting.report import build_report
from recoeval_tracking.reporting.runs import RunData

FAST = {"n_bootstrap": 20, "n_permutations": 20}


def test_a_metric_missing_from_some_runs_is_compared_over_the_others():
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3, "ils_at_10": 0.4}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
        synthetic_run("rnd", {"ndcg_at_10": 0.1}, seed=3),
    ]
    rep = build_report(runs, "pop", **FAST)
    assert rep.comparable and rep.metrics == ["ndcg_at_10", "ils_at_10"]
    assert set(rep.summary.loc[rep.summary["metric"] == "ils_at_10", "run_id"]) == {"als"}
    assert len(rep.comparisons[rep.comparisons["metric"] == "ndcg_at_10"]) == 2
    assert rep.notes == [
        "ils_at_10 is in als only, so not compared (pop, rnd: not computed, needs item vectors)"
    ]
    page = render_markdown(rep)
    assert "NOT COMPARABLE" not in page  # the note is said once, at the top of the page
    assert "Not compared: ils_at_10 (only als has it; ils needs item vectors" in page
    left = rep.left_out.set_index(["metric", "system"])["reason"]
    assert (
        "ils needs item vectors (a factor model's item factors, or item_features=)"
        in (left[("ils_at_10", "pop")])
    )


def test_a_metric_defined_differently_is_left_out_for_that_run_only():
    runs = [
        synthetic_run(n, {"ndcg_at_10": 0.3, "p_at_10": 0.2}, seed=i) for i, n in enumerate("abc")
    ]
    for r in runs:
        r.metric_fingerprints = {"ndcg_at_10": "n1", "p_at_10": "p1"}
    runs[2].metric_fingerprints["p_at_10"] = "p2"
    runs[2].fingerprints["definitions"] = "f2"  # the whole record differs: no longer refused
    rep = build_report(runs, "a", **FAST)
    assert rep.comparable
    p = rep.summary[rep.summary["metric"] == "p_at_10"]
    assert list(p["run_id"]) == ["a", "b"]
    assert list(rep.summary.loc[rep.summary["metric"] == "ndcg_at_10", "run_id"]) == list("abc")
    assert rep.notes == ["p_at_10 is compared over a, b only (c: defined differently)"]


def _seed_runs():
    runs = []
    for model, mu in (("als", 0.4), ("pop", 0.2)):
        for seed in (0, 1, 2):
            r = synthetic_run(
                f"{model}{seed}",
                {"ndcg_at_10": mu + 0.01 * seed},
                seed=seed,
                fingerprints={"data": "d1", "split": f"s{seed}", "definitions": "f1"},
                params={
                    "model.name": model,
                    "seed": seed,
                    "split.seed": seed,
                    "model.seed": seed if model == "als" else None,
                },
            )
            runs.append(r)
    return runs


def test_seeds_are_replicates_aggregated_per_group():
    runs = _seed_runs()
    assert guess_replicate_key(runs) == "seed"
    assert default_group_by(runs, "seed") == ["model.name"]
    rep = build_report(runs, "pop", replicate_key="seed", group_by=["model.name"], **FAST)
    assert rep.comparable and [r.name for r in rep.runs] == ["pop", "als"]
    s = rep.summary.set_index("run")
    means = [np.mean(r.per_user["ndcg_at_10"]) for r in runs[:3]]
    assert s.loc["als", "mean"] == pytest.approx(np.mean(means))
    assert s.loc["als", "n"] == 3 and s.loc["als", "t_low"] < s.loc["als", "t_high"]
    c = rep.comparisons.iloc[0]
    assert c["run"] == "als" and c["n_pairs"] == 3 and c["mean_diff"] > 0.15
    assert "Replicates over `seed`" in render_markdown(rep)
    # Without a replicate key the different splits are still refused.
    with pytest.raises(Exception, match="split fingerprint differs"):
        build_report(runs, **FAST)


def test_replicate_reports_leave_the_user_slices_out_and_say_so():
    """A row of a replicate report is one seed's mean, so the report config's default slices
    (user activity, cold/warm) cannot apply: left out with a note, not an error (the seed sweep
    of examples/sweep.sh)."""
    slices = [{"kind": "activity", "q": 4}, {"kind": "cold_warm", "threshold": 5}]
    rep = build_report(_seed_runs(), "pop", replicate_key="seed", slices=slices, **FAST)
    assert rep.slices == []
    assert any(n.startswith("slices (activity, cold_warm) left out") for n in rep.notes)
    # groups are named by the model: model.seed (set for als only) is a grouping key, yet it
    # takes one value per model, so it is not part of the name
    assert [r.name for r in rep.runs] == ["pop", "als"]
    assert "left out: with replicates over seed" in render_markdown(rep)


def test_old_job_folders_with_one_fingerprint_still_load(tmp_path):
    data = load_dataset("synthetic", n_users=120, n_items=60, seed=0)
    split = make_split("random", data, test_fraction=0.2, seed=0)
    model = make_model("popularity").fit(split.train.matrix)
    res = evaluate(
        split.train, split.test, scores=model.score_source(), metrics=["ndcg", "p"], k=5, nthreads=1
    )
    job = write_job_dir(res, tmp_path / "job", plots=False)
    defs = json.loads((job / "definitions.json").read_text())
    recorded = defs["metric_fingerprints"]
    assert set(recorded) == {"ndcg_at_5", "p_at_5"} and len(set(recorded.values())) == 2
    assert RunData.from_job_dir(job).metric_fingerprints == recorded
    old = tmp_path / "old"
    shutil.copytree(job, old)
    del defs["metric_fingerprints"]
    (old / "definitions.json").write_text(json.dumps(defs))
    assert RunData.from_job_dir(old).metric_fingerprints == recorded  # derived the same way
    del defs["definitions"]
    (old / "definitions.json").write_text(json.dumps(defs))
    legacy = RunData.from_job_dir(old)
    assert legacy.metric_fingerprints == {}
    assert legacy.metric_fingerprint("p_at_5") == res.fingerprint


def _report(dirs: list[Path], out: Path, cwd: Path) -> subprocess.CompletedProcess:
    return run_main(
        [
            f"select.job_dirs=[{','.join(str(d) for d in dirs)}]",
            f"output.dir={out}",
            "output.log_to_mlflow=false",
            "n_bootstrap=20",
            "n_permutations=20",
            "slices=[]",
        ],
        cwd,
        command="recoeval-track-report",
    )


def test_sweeps_over_models_and_over_seeds_report_with_exit_0(tmp_path):
    proc = run_main(
        [
            "-m",
            "dataset.n_users=120",
            "dataset.n_items=60",
            "model=als,popularity",
            "seed=0,1",
            "tracking=none",
            "metrics.k=5",
            "plots=false",
            "progress=false",
            "nthreads=1",
            "hydra.sweep.dir=sweep",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    jobs = sorted((tmp_path / "sweep").glob("[0-9]*"), key=lambda p: int(p.name))
    assert len(jobs) == 4  # als s0, als s1, popularity s0, popularity s1 (Hydra's order)
    models = _report([jobs[0], jobs[2]], tmp_path / "models", tmp_path)
    assert models.returncode == 0, models.stderr
    page = (tmp_path / "models" / "report.md").read_text()
    assert "not comparable" not in (models.stderr + page).lower()
    text = page.replace("\\(", "(").replace("\\)", ")")
    assert (
        "Not compared: ils_at_5, diversity_at_5 (only synthetic als has them; each needs " in text
    )
    assert "item vectors (a factor model's item factors, or item\\_features=)" in text
    seeds = _report(jobs, tmp_path / "seeds", tmp_path)
    assert seeds.returncode == 0, seeds.stderr
    page = (tmp_path / "seeds" / "report.md").read_text()
    assert "not comparable" not in (seeds.stderr + page).lower()
    assert "Replicates over `seed`" in page


def test_a_fingerprint_recorded_for_some_runs_only_is_a_difference():
    """A run that does not record a fingerprint the others record is not taken as agreeing
    (a survivor of the hand mutants: such runs were skipped); a split fingerprint stands for
    the data's, which it hashes."""
    import pandas as pd

    from recoeval_tracking.reporting.comparability import check_comparable
    from recoeval_tracking.reporting.runs import RunData

    table = pd.DataFrame({"user_id": [1, 2], "ndcg_at_10": [0.1, 0.2]})

    def run(name, **fps):
        return RunData(run_id=name, name=name, per_user=table, fingerprints=dict(fps))

    out = check_comparable([run("a", data="d1"), run("b")])
    assert out == ["the data fingerprint differs: d1 (a) vs <not recorded> (b)"]
    out = check_comparable([run("a", data="d1", split="s1"), run("b", data="d1")])
    assert out == ["the split fingerprint differs: s1 (a) vs <not recorded> (b)"]
    # a split fingerprint covers the data: no data difference for a run that has only it
    assert check_comparable([run("a", data="d1", split="s1"), run("b", split="s1")]) == []
