"""The report command over job folders: a k-fold sweep reports by default (folds are
replicates), a sweep over two datasets gets the rank statistics, report.tex is written, and a
folder without a store is left as it was. The command's entry point runs in this process
(:func:`commands.run_main`: its exit status and output as the command's)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _report_process import assert_latex_compiles
from _rundata import evaluate_model
from commands import run_main

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.reporting.render.latex import structure_problems

MODELS = ("popularity", "random", "item_knn")


def _job(root: Path, name: str, data, split, dataset_name: str, model: str, split_cfg: dict) -> str:
    res = evaluate_model(split, model, metrics=["ndcg", "p"], k=5, cumulative=True)
    config = {"dataset": {"name": dataset_name}, "split": split_cfg, "model": {"name": model}}
    dataset = {
        "name": dataset_name,
        "data_fingerprint": data.fingerprint,
        "split_fingerprint": split.fingerprint,
    }
    return str(
        write_job_dir(
            res,
            root / name,
            config_yaml=config,
            dataset=dataset,
            overrides=[f"model={model}"],
            plots=False,
        )
    )


@pytest.fixture(scope="module")
def kfold_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kfold")
    data = rt.make_synthetic(n_users=120, n_items=60, seed=3)
    folds = rt.make_split("kfold", data, n_folds=3, seed=0)
    return [
        _job(
            root,
            f"{m}-{f}",
            data,
            folds[f],
            "synthetic",
            m,
            {"name": "kfold", "n_folds": 3, "fold": f, "seed": 0},
        )
        for m in MODELS[:2]
        for f in range(3)
    ]


@pytest.fixture(scope="module")
def dataset_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    out = []
    for d, seed in (("synth-a", 1), ("synth-b", 2), ("synth-c", 4)):
        data = rt.make_synthetic(n_users=100, n_items=50, seed=seed)
        split = rt.make_split("random", data, test_fraction=0.3, seed=0)
        out += [
            _job(
                root,
                f"{d}-{m}",
                data,
                split,
                d,
                m,
                {"name": "random", "test_fraction": 0.3, "seed": 0},
            )
            for m in MODELS
        ]
    return out


def _cmd(tmp_path: Path, dirs: list[str], *overrides: str) -> subprocess.CompletedProcess:
    cmd = [
        f"select.job_dirs=[{','.join(dirs)}]",
        f"output.dir={tmp_path / 'out'}",
        "output.log_to_mlflow=false",
        "n_bootstrap=50",
        "slices=[]",
        *overrides,
    ]
    return run_main(cmd, tmp_path, command="recoeval-track-report")


def test_kfold_sweep_reports_by_default_with_folds_as_replicates(kfold_dirs, tmp_path):
    proc = _cmd(tmp_path, kfold_dirs, "baseline=random")
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "2 groups (6 runs) compared" in md
    assert "Replicates over `split.fold`" in md
    assert "only 3 pairs, too few" in md  # three folds: no stars from a t-test alone
    assert "curves_ndcg_at_k.png" in md  # the groups keep their curves
    tex = (tmp_path / "out" / "report.tex").read_text()
    assert structure_problems(tex) == []
    assert r"\dagger" in tex
    if shutil.which("pdflatex"):
        assert_latex_compiles(tex, tmp_path, "doc")


def test_two_datasets_get_ranks_friedman_and_a_cd_diagram(dataset_dirs, tmp_path):
    from recoeval_tracking.app.report import run_report

    cfg = {
        "select": {"job_dirs": dataset_dirs},
        "baseline": "random",
        "n_bootstrap": 50,
        "slices": [],
        "output": {
            "dir": str(tmp_path),
            "html": "r.html",
            "markdown": "r.md",
            "latex": "r.tex",
            "log_to_mlflow": False,
        },
    }
    result = run_report(cfg)
    cmp = result["comparison"]
    assert cmp.multi_dataset and cmp.datasets == ["synth-a", "synth-b", "synth-c"]
    assert sorted(cmp.systems) == sorted(MODELS)
    # the page's numbers are the comparison's
    f = cmp.friedman("ndcg_at_5")
    md = result["paths"]["markdown"].read_text()
    assert f"p = {f.pvalue:.4f}" in md or f"p = {f.pvalue:.2e}" in md
    assert {"cd_ndcg_at_5.png", "cd_p_at_5.png"} <= {
        p.name for p in result["paths"]["figures"].iterdir()
    }
    tex = result["paths"]["latex"].read_text()
    assert structure_problems(tex) == [] and "Friedman" in tex
    # the same selection through rt.compare gives the same table
    again = rt.compare(dataset_dirs, baseline="random", n_bootstrap=50)
    assert again.dataset_table("ndcg_at_5").equals(cmp.dataset_table("ndcg_at_5"))


def test_no_store_leaves_the_folder_as_it_was(tmp_path):
    proc = run_main(["select.sweep_id=abc"], tmp_path, command="recoeval-track-report")
    assert proc.returncode == 2
    assert "no run matches" in proc.stderr and "no MLflow store" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_lists_the_settings(tmp_path):
    proc = run_main(["--help"], tmp_path, command="recoeval-track-report", env=dict(os.environ))
    assert proc.returncode == 0
    for key in (
        "select.sweep_id",
        "replicate_key",
        "dataset_key",
        "correction",
        "test",
        "output.latex",
    ):
        assert f"  {key}" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_rope_and_posthoc_from_the_command_line(dataset_dirs, tmp_path):
    # rope=5% is read as the string "5%" by Hydra's override grammar; posthoc=nemenyi brings
    # back the mean-rank post-hoc the diagrams default away from
    proc = _cmd(tmp_path, dataset_dirs, "baseline=random", "rope=5%", "posthoc=nemenyi")
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "Verdicts against random for the rope 5%" in md
    assert "Nemenyi critical difference at α = 0.05" in md
    assert "P\\(better\\)" in md


def test_a_bad_rope_or_posthoc_setting_names_its_key():
    from recoeval_tracking.app.report import check_settings

    with pytest.raises(InputError, match="^rope: expected a number >= 0"):
        check_settings({"rope": "five"})
    with pytest.raises(InputError, match="^rope: "):
        check_settings({"rope": {"ndcg_at_5": -1}})
    with pytest.raises(InputError, match="^posthoc: expected one of wilcoxon, sign, nemenyi"):
        check_settings({"posthoc": "tukey"})
    check_settings({"rope": "5%", "posthoc": "sign"})  # accepted


def test_a_long_step_of_the_report_says_it_is_still_at_work(monkeypatch):
    """Drawing the figures of a sweep takes 10 s: the command says so every tick instead of
    staying silent; a step shorter than a tick says its one line only."""
    import time

    from recoeval_tracking import _heartbeat
    from recoeval_tracking.app import report

    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    said: list[str] = []
    with report._step(said.append, "drawing the figures and writing the pages...", "writing"):
        deadline = time.monotonic() + 10  # a step as long as three ticks, however busy the CPU
        while len(said) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert said[0] == "drawing the figures and writing the pages..."
    assert len(said) >= 4 and all(s.startswith("... still writing (") for s in said[1:])
    said.clear()
    with report._step(said.append, "reading the selected runs...", "reading the runs"):
        pass
    assert said == ["reading the selected runs..."]
    with report._step(None, "nothing to say", "nothing"):  # run_report without progress
        time.sleep(0.1)
