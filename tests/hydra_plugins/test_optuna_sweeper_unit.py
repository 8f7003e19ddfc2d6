"""The Optuna sweeper, run in-process on a fake launcher (no jobs, no Hydra app). It reads a
failed trial's error once: ``JobReturn.return_value`` (which re-raises the job's error) is read
when the trial is told to Optuna, and the sweep's last word
(:func:`hydra_plugins.recoeval_sweeper.jobs.raise_failures`) reuses that reading. It opens with
one line of its own, saying whether a stored study resumes, without Optuna's."""

from __future__ import annotations

import pytest
from hydra.core.utils import JobReturn, JobStatus
from omegaconf import OmegaConf

from hydra_plugins.recoeval_optuna_sweeper.optuna_sweeper import OptunaSweeper
from recoeval_tracking.app.errors import SweepJobsFailed


class _CountedReturn(JobReturn):
    """A launched job's result that counts how often its outcome is read."""

    reads: int = 0

    @property  # type: ignore[override]
    def return_value(self):
        self.reads += 1
        return JobReturn.return_value.fget(self)  # type: ignore[attr-defined]


class _Launcher:
    """Every trial's job fails except the second of each batch."""

    def __init__(self) -> None:
        self.results: list[_CountedReturn] = []

    def launch(self, job_overrides, initial_job_idx):
        out = []
        for i, overrides in enumerate(job_overrides):
            r = _CountedReturn(overrides=list(overrides))
            if i == 1:
                r.status, r._return_value = JobStatus.COMPLETED, {"objective": 0.25}
            else:
                r.status = JobStatus.FAILED
                r._return_value = ValueError(f"trial {initial_job_idx + i} broke")
            r.reads = 0
            out.append(r)
        self.results += out
        return out


def test_a_failed_trials_error_is_read_once(tmp_path):
    sweeper = OptunaSweeper(n_trials=2, n_jobs=2, seed=0)
    sweeper.config = OmegaConf.create(
        {
            "objective": "ndcg_at_10",
            "metrics": {"k": 10},
            "hydra": {"runtime": {"choices": {"model": "als"}}},
        }
    )
    sweeper.launcher = _Launcher()
    sweeper.sweep_dir = tmp_path
    sweeper.validate_batch_is_legal = lambda batch: None  # no Hydra config loader here
    with pytest.raises(SweepJobsFailed, match="1 of 2 jobs") as caught:
        sweeper.sweep(["model.regularization=interval(0.01,1.0)"])
    failed, completed = sweeper.launcher.results
    assert str(caught.value.__cause__) == "trial 0 broke"
    assert failed.reads == 1  # told to Optuna; the sweep's error reuses it
    assert completed.reads == 1  # its objective


def test_the_search_opens_with_one_line_of_its_own(tmp_path, capfd, caplog):
    """Optuna's own "A new study created in memory" line (another format, the same news) is not
    printed; the sweeper's opening line says whether a stored study resumes."""
    import logging

    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    for run in (1, 2):
        sweeper = OptunaSweeper(n_trials=2, n_jobs=2, seed=0, storage=storage)
        sweeper.config = OmegaConf.create(
            {"objective": "ndcg_at_10", "hydra": {"runtime": {"choices": {"model": "als"}}}}
        )
        sweeper.launcher, sweeper.sweep_dir = _Launcher(), tmp_path / str(run)
        sweeper.validate_batch_is_legal = lambda batch: None
        caplog.clear()
        with caplog.at_level(logging.INFO), pytest.raises(SweepJobsFailed):
            sweeper.sweep(["model.regularization=interval(0.01,1.0)"])
        opening = [r.getMessage() for r in caplog.records if "Optuna study" in r.getMessage()]
        resumed = ", resuming its 2 stored trials"
        assert len(opening) == 1 and opening[0].endswith(resumed) == (run == 2), opening
    printed = capfd.readouterr()
    assert "study created" not in printed.err + printed.out
    assert "Using an existing study" not in printed.err + printed.out
