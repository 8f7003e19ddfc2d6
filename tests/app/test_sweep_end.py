"""What a sweep says when it ends, whatever it tracks, and what a study says of its failed jobs.

A newcomer's study: their own model (a class of theirs, through ``--config-dir``), one of whose
configurations scores NaN for every item (a bug of theirs), tuned against a tuned baseline on a
split with a validation part, with ``tracking=none``. The sweep must say at once that the job
failed, go on, end with the leaderboard a tracked sweep prints, and state on its protocol line
that the system chose among fewer configurations than its budget.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import QUIET, TINY_DATA, clean_env, run_main

MODEL = '''
import numpy as np


class Flaky:
    """Item popularity; with broken=True every score is NaN (the job then fails)."""

    def __init__(self, broken=False):
        self.broken = broken

    def fit(self, train):
        self.counts = np.asarray(train.sum(axis=0), dtype=float).ravel()
        return self

    def score_users(self, user_indices):
        scores = np.tile(self.counts, (len(user_indices), 1))
        return scores * np.nan if self.broken else scores
'''


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The untracked study above, run once as the console command would (a failed job fails
    the process, whose exit handlers print the end)."""
    root = tmp_path_factory.mktemp("newcomer")
    (root / "flaky_models.py").write_text(MODEL)
    (root / "conf" / "model").mkdir(parents=True)
    (root / "conf" / "model" / "flaky.yaml").write_text(
        "_target_: flaky_models.Flaky\nbroken: false\n"
    )
    proc = run_process(
        [
            sys.executable,
            "-m",
            "recoeval_tracking",
            "-m",
            "--config-dir",
            "conf",
            "model=flaky",
            "model.broken=true,false",
            "split.validation_fraction=0.2",
            "baselines=[popularity]",
            "hydra.sweep.dir=multirun/study",
            "tracking=none",
            *TINY_DATA,
            *QUIET,
        ],
        root,
    )
    return root, proc


def run_process(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``cmd`` in ``cwd``, its stderr merged into its stdout in the order written (what a
    terminal shows)."""
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )


def _tested(root: Path) -> dict[str, float]:
    """ndcg_at_10 of each tested job, read from its own metrics.json, by model option."""
    out = {}
    for folder in sorted((root / "multirun" / "study").iterdir()):
        overrides = folder / ".hydra" / "overrides.yaml"
        metrics = folder / "metrics.json"
        if not metrics.is_file() or "phase=test" not in overrides.read_text():
            continue
        model = re.search(r"model=(\w+)", overrides.read_text()).group(1)
        out[model] = json.loads(metrics.read_text())["ndcg_at_10"]
    return out


def test_an_untracked_sweep_ends_with_its_leaderboard(study):
    root, proc = study
    assert proc.returncode == 1  # the failed job fails the sweep, as Hydra's sweeps do
    end = proc.stdout[proc.stdout.index("(not tracked): ") :]
    assert end.splitlines()[0].endswith(
        "2 tested configurations (3 more evaluated on validation only), best first by "
        "ndcg_at_10 on test:"
    )
    tested = _tested(root)
    assert sorted(tested) == ["flaky", "popularity"]
    rows = end.splitlines()[2:4]  # after the line's end and the table's header
    assert [r.split()[0] for r in rows] == ["1", "2"]
    for model in tested:  # each tested job once, with the value its own folder holds
        (row,) = [r for r in rows if r.split()[1] == model]
        assert f"{tested[model]:.4f}" in row.split()
    assert "flaky broken=False" in end and "(baseline)" in end
    assert "against each baseline on ndcg_at_10:" in end
    assert "compare them with paired tests: recoeval-track-report 'select.job_dirs=[" in end


def test_a_failed_job_is_said_at_once_and_the_sweep_goes_on(study):
    _, proc = study
    out = proc.stdout
    said = out.index("recoeval-track: job #0 of the sweep failed: The evaluation evaluated none")
    assert out.index("#0 : ") < said < out.index("#1 : ")  # before the next job starts
    assert "#5 : " in out  # every job ran
    assert "failed: job #0 " in out
    # said once, in the job's words: not again as Hydra's raw line when the sweep fails,
    # nor as the first job's reason again: the sweep's failure names its failed jobs
    assert "Error executing job with overrides" not in out
    assert out.count("The evaluation evaluated none") == 1
    (last,) = [line for line in out.splitlines() if "jobs of the sweep failed" in line]
    assert last.startswith("recoeval-track: 1 of 6 jobs of the sweep failed: #0 (")
    # named by what sets it apart from the sweep's other jobs, not the overrides they share
    assert "model.broken=True" in last and "validation_fraction" not in last
    assert last.endswith("results are recorded.")


def test_the_protocol_says_the_failed_configurations_and_the_budgets_unequal(study):
    root, proc = study
    line = "failed jobs: flaky 1 of 2 configurations on validation (not chosen from)"
    assert "protocol: chosen on validation by val NDCG@10 among 2 configurations" in proc.stdout
    assert line in proc.stdout
    assert "budget per system (unequal: compare with care):" in proc.stdout
    record = json.loads((root / "multirun" / "study" / "recoeval_study.json").read_text())
    assert line in record["protocol"] and record["equal_budgets"] is False
    assert record["systems"]["flaky"]["failed"] == 1


def test_the_selection_runs_a_report_leaves_out_are_said_as_its_other_steps(tmp_path, local_store):
    """The report command prefixes every step it reports (``recoeval-track-report: ...``)
    through its progress callback; the selection runs it leaves out go there too."""
    from recoeval_tracking.app.report import load_runs

    sweep = run_main(
        [
            "-m",
            "model=item_knn",
            "model.neighbours=5,10",
            "split.validation_fraction=0.2",
            *TINY_DATA,
            *QUIET,
        ],
        tmp_path,
    )
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    sweep_id = re.search(r"select\.sweep_id=(\w+)", sweep.stdout).group(1)
    said: list[str] = []
    cfg = {"select": {"sweep_id": sweep_id}, "tracking": {"uri": local_store}}
    runs, _ = load_runs(cfg, tmp_path / "read", tmp_path, progress=said.append)
    assert len(runs) == 1
    assert said == [
        "left out 2 selection runs (evaluated on validation only); comparing the 1 "
        "configuration chosen on validation and tested once"
    ]


def test_a_failed_test_job_is_named_on_the_protocol_line():
    """A system whose chosen configuration fails on test has no test number: the line says so
    (and a system none of whose jobs failed is not named)."""
    from recoeval_tracking.app.study import Candidate, study_record

    mine = [Candidate([f"model.lam={v}"], "mine", value=v) for v in (1.0, 2.0)]
    base = [Candidate([f"model.k={v}"], "pop", baseline_rank=0, value=v) for v in (1.0, 2.0)]
    mine[1].test_failed = True
    record = study_record(
        mine + base,
        {("mine", ()): mine[1], ("pop", ()): base[1]},
        on_validation=True,
        objective="ndcg_at_10",
        refit=True,
    )
    assert record["protocol"] == (
        "chosen on validation by val NDCG@10 among 2 configurations per system, tested once "
        "(refit on train + validation); failed jobs: mine's tested one (no test number)"
    )
    assert record["equal_budgets"] is True  # both chose among their 2 configurations


def test_an_untracked_searchs_tested_job_is_named_after_its_values(tmp_path):
    """An Optuna search tests one configuration: its name on the board carries the values the
    search chose, as its MLflow run's does."""
    proc = run_main(
        [
            "-m",
            "hydra/sweeper=optuna",
            "hydra.sweeper.n_trials=2",
            "objective=ndcg_at_10",
            "model=item_knn",
            "model.neighbours=int(interval(5,50))",
            "split.validation_fraction=0.2",
            "tracking=none",
            *TINY_DATA,
            *QUIET,
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    end = proc.stdout[proc.stdout.index("(not tracked): ") + 15 :].splitlines()
    assert end[0].startswith("1 tested configuration (2 more evaluated on validation only)")
    tested = [f for f in (tmp_path / "multirun").glob("*/*/*") if (f / "metrics.json").is_file()]
    chosen = json.loads(
        sorted(tested, key=lambda f: int(f.name))[-1].joinpath("job.json").read_text()
    )
    assert end[2].split()[1:3] == [
        "item_knn",
        f"neighbours={chosen['model']['args']['neighbours']}",
    ]
