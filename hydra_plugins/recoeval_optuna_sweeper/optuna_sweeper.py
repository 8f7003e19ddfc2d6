"""The Optuna sweeper: ask a batch of trials, launch them as Hydra jobs, tell their objective.

Each trial is one job of the configured launcher with the trial's parameters as overrides; the
job returns the value of the top-level ``objective`` setting (``objective=ndcg_at_10``), which
Optuna maximises or minimises as the metric registry says
(:func:`recoeval_tracking.metrics.registry.greater_is_better`). A failed job (which says why
itself) is told to Optuna as FAIL and stops the search after its batch: the best completed trial
is still tested (with a validation part), then the sweep fails (as Hydra's basic sweeper does); a
NaN objective (an undefined metric) is a FAIL that the search goes on past.

The study's record (``recoeval_study.json``: the protocol line, the budget, the split's leakage)
is kept as the grid sweeper keeps it, a :class:`~recoeval_tracking.app.study.StudyPlan` of one
system (the model option) whose candidates are the trials, each attached to its job as it ends:
its fit seconds (and the test's fit and refit), its validation value, its failure. The app's
sweep callback states it on the terminal and the parent run, failed trials counted.

Tracking: every trial is a job of the multirun, so the app's sweep callback makes it a child of
the sweep's parent run, named after the trial's values of the searched keys (they are added to
the sweep record's ``swept_keys``). After each batch, when the study's best trial changed, the parent gets
``best_<objective>`` at step = trial number and the best parameters as tags
(:func:`recoeval_tracking.tracking.sweeps.record_sweep_best`). ``optimization_results.yaml`` in
the sweep directory holds the best trial and every trial of this command.
"""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path
from typing import Any

from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from .config import SAMPLERS
from .search_space import SearchSpaceError, format_override, search_space

__all__ = ["OptunaSweeper", "objective_value"]

log = logging.getLogger(__name__)
_DIRECTIONS = ("maximize", "minimize")


def objective_value(returned: Any) -> float:
    """The objective of a job's return value: the ``objective`` entry of the app's result, or
    the number a plain task function returned."""
    value = returned.get("objective") if isinstance(returned, dict) else returned
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"the job returned no objective value (got {value!r}); set the "
            "top-level objective (objective=ndcg_at_10)"
        )
    return float(value)


def _usage_error(message: str) -> Exception:
    from recoeval_tracking._validation import InputError

    return InputError(message)


class OptunaSweeper(Sweeper):
    """A Hydra sweeper on Optuna; see the module docstring and
    :class:`~.config.OptunaSweeperConf` for the settings."""

    def __init__(
        self,
        n_trials: int = 20,
        n_jobs: int = 1,
        sampler: str = "tpe",
        seed: int | None = None,
        n_startup_trials: int | None = None,
        direction: str | None = None,
        storage: str | None = None,
        study_name: str = "recoeval",
        params: Any = None,
    ) -> None:
        self.n_trials, self.n_jobs, self.sampler = n_trials, n_jobs, sampler
        self.seed, self.n_startup_trials, self.direction = seed, n_startup_trials, direction
        self.storage, self.study_name = storage, study_name
        self.params = dict(
            OmegaConf.to_container(params) if OmegaConf.is_config(params) else params or {}
        )
        self.config: DictConfig | None = None
        self.launcher: Any = None
        self.hydra_context: HydraContext | None = None
        self.job_idx = 0
        self._composed: Any = None
        #: This command's trials (by number) as candidates of the study's record.
        self.trial_candidates: dict[int, Any] = {}

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )
        from hydra_plugins.recoeval_sweeper.jobs import compose_once

        self._composed = compose_once(self.launcher, hydra_context)
        self.sweep_dir = Path(str(config.hydra.sweep.dir))
        if not self.sweep_dir.is_absolute():
            self.sweep_dir = Path(str(config.hydra.runtime.cwd)) / self.sweep_dir

    # -- checks -----------------------------------------------------------------------------
    def validate_batch_is_legal(self, batch: Any) -> None:
        """Compose every trial of ``batch`` (a failure stops the search before it launches),
        as Hydra's sweepers do; an in-process launcher is then handed these configs rather than
        composing each trial again."""
        if self._composed is None:
            super().validate_batch_is_legal(batch)
            return
        assert self.hydra_context is not None and self.config is not None
        loader = self.hydra_context.config_loader
        for overrides in batch:
            config = loader.load_sweep_config(
                master_config=self.config, sweep_overrides=list(overrides)
            )
            self._composed.keep(self.config, [overrides], [config])

    def _objective_and_direction(self) -> tuple[str, str]:
        from recoeval_tracking.app.precheck import check_objective
        from recoeval_tracking.metrics.registry import greater_is_better

        assert self.config is not None
        objective = OmegaConf.select(self.config, "objective", default=None)
        if objective is None:
            raise _usage_error(
                "objective must be set for hydra/sweeper=optuna: the metric "
                "the search optimises, e.g. objective=ndcg_at_10; got None."
            )
        check_objective(objective, OmegaConf.select(self.config, "metrics.k", default=None))
        for name, value, allowed in (
            ("n_trials", self.n_trials, None),
            ("n_jobs", self.n_jobs, None),
            ("sampler", self.sampler, SAMPLERS),
            ("direction", self.direction, (None, *_DIRECTIONS)),
        ):
            if allowed is None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise _usage_error(f"hydra.sweeper.{name} must be an int >= 1; got {value!r}.")
            if allowed is not None and value not in allowed:
                raise _usage_error(
                    f"hydra.sweeper.{name} must be one of "
                    f"{[a for a in allowed if a]}; got {value!r}."
                )
        direction = self.direction or ("maximize" if greater_is_better(objective) else "minimize")
        return str(objective), direction

    def _study(self, direction: str) -> Any:
        import optuna

        samplers = {
            "tpe": lambda: optuna.samplers.TPESampler(
                seed=self.seed,
                **(
                    {"n_startup_trials": self.n_startup_trials}
                    if self.n_startup_trials is not None
                    else {}
                ),
            ),
            "random": lambda: optuna.samplers.RandomSampler(seed=self.seed),
            "cmaes": lambda: optuna.samplers.CmaEsSampler(seed=self.seed),
            "qmc": lambda: optuna.samplers.QMCSampler(seed=self.seed),
        }
        # Optuna's own line ("[I ...] A new study created in memory ...") would say in another
        # format what the sweep's opening line says, resumed or not: its log is quiet meanwhile
        verbosity = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        try:
            return optuna.create_study(
                study_name=self.study_name,
                storage=self.storage,
                sampler=samplers[self.sampler](),
                direction=direction,
                load_if_exists=True,
            )
        except ValueError as err:  # a stored study with the other direction
            raise _usage_error(
                f"hydra.sweeper.study_name: the study {self.study_name!r} in "
                f"{self.storage} cannot be resumed: {err} Pick another "
                "study_name."
            ) from err
        finally:
            optuna.logging.set_verbosity(verbosity)

    # -- the sweep --------------------------------------------------------------------------
    def sweep(self, arguments: list[str]) -> Any:
        objective, direction = self._objective_and_direction()
        try:
            space, fixed = search_space(arguments, self.params)
        except SearchSpaceError as err:
            raise _usage_error(str(err)) from err
        if not space:
            raise _usage_error(
                "hydra/sweeper=optuna needs a search space: give at least one "
                "setting as interval(...), int(interval(...)), "
                "tag(log,interval(...)), range(...) or choice(...); got "
                f"{arguments}."
            )
        study = self._study(direction)
        self.sweep_dir.mkdir(parents=True, exist_ok=True)
        from recoeval_tracking.tracking.sweeps import note_swept_keys

        note_swept_keys(self.sweep_dir, list(space))
        plan = self._plan()
        # on a split with a validation part every trial is read on validation, and so named
        read_as = f"val_{objective}" if plan.on_validation else objective
        tracker = _BestTracker(self.sweep_dir, read_as, study)
        stored = len(study.get_trials(deepcopy=False))
        log.info(
            "Optuna study %r (%s %s, sampler %s, seed %s): %d trials in batches of %d%s",
            study.study_name,
            direction,
            objective,
            self.sampler,
            self.seed,
            self.n_trials,
            self.n_jobs,
            f", resuming its {stored} stored trials" if stored else "",
        )
        errors: dict[int, BaseException | None] = {}  # each trial's job error, read once
        returns, trials, failure = self._search(study, plan, space, fixed, tracker, errors)
        _write_results(
            self.sweep_dir / "optimization_results.yaml", study, trials, read_as, direction
        )
        _log_best(study, read_as)
        if plan.on_validation:
            returns.append(self._test_best(study, fixed, plan))
        from recoeval_tracking.app.study import write_study

        write_study(self.sweep_dir, plan.record())
        if failure is not None:  # the search stopped at its batch; its record is written
            from hydra_plugins.recoeval_sweeper.jobs import raise_failures

            tested = " Its best completed trial was tested." if plan.on_validation else ""
            raise_failures(
                returns,
                after=f"The search stopped after that batch.{tested}",
                errors=errors,
                sweep_dir=self.sweep_dir,
            )
        return returns

    def _plan(self) -> Any:
        """The study's record as the grid sweeper keeps it: one system (the model option),
        one candidate per trial, added as the trials are launched (:meth:`_search`)."""
        from recoeval_tracking.app.study import StudyPlan

        assert self.config is not None
        return StudyPlan(self.config, [], [], [self.config])

    def _search(
        self,
        study: Any,
        plan: Any,
        space: dict[str, Any],
        fixed: list[str],
        tracker: Any,
        errors: dict[int, BaseException | None],
    ) -> tuple[list, list, BaseException | None]:
        """Ask, launch and tell the trials batch by batch, each trial's job attached to the
        plan (its fit seconds, its value; a failed job counted); a failed job stops the
        search after its batch. Returns the batches' results, the trials and that failure;
        ``errors`` gets each job's error (None when it completed), by ``id(result)``."""
        from recoeval_tracking.app.study import Candidate

        assert self.config is not None
        system = str(OmegaConf.select(self.config, "hydra.runtime.choices.model", default="model"))
        phase = ("++phase=selection",) if plan.on_validation else ()
        done, returns, trials = 0, [], []
        failure: BaseException | None = None
        while done < self.n_trials and failure is None:
            batch = [
                study.ask(fixed_distributions=space)
                for _ in range(min(self.n_jobs, self.n_trials - done))
            ]
            chosen = [
                [*fixed, *(format_override(k, v) for k, v in t.params.items())] for t in batch
            ]
            overrides = [tuple(c) + phase for c in chosen]
            self.validate_batch_is_legal(overrides)
            results = self.launcher.launch(overrides, initial_job_idx=self.job_idx)
            self.job_idx += len(results)
            members = [Candidate(c, system) for c in chosen]
            self.trial_candidates.update({t.number: c for t, c in zip(batch, members)})
            plan.candidates += members
            plan.attach(members, results, "selection" if plan.on_validation else None)
            failure = _tell(study, batch, results, errors)
            trials.extend(batch)
            returns.append(results)
            done += len(batch)
            tracker.update()
        return returns, trials, failure

    def _test_best(self, study: Any, fixed: list[str], plan: Any) -> Any:
        """The best trial's configuration refit on train + validation and tested once; its
        job attached to the plan as the chosen candidate's test."""
        from recoeval_tracking.app.study import Candidate

        try:
            best = study.best_trial
        except ValueError:  # no trial completed: nothing to test
            return []
        chosen = [*fixed, *(format_override(k, v) for k, v in best.params.items())]
        overrides = (*chosen, "++phase=test")
        log.info("testing the best trial (#%d) once: %s", best.number, " ".join(overrides))
        results = self.launcher.launch([overrides], initial_job_idx=self.job_idx)
        self.job_idx += len(results)
        candidate = self.trial_candidates.get(best.number)
        if candidate is None:  # the best trial of a stored study, run by an earlier command
            system = plan.candidates[0].system if plan.candidates else "model"
            candidate = Candidate(chosen, system, value=float(best.value))
            plan.candidates.append(candidate)
        plan.chosen[candidate.group] = candidate
        plan.attach([candidate], results, "test")
        return results


def _log_best(study: Any, objective: str) -> None:
    """The best trial's value and parameters, as Hydra's own Optuna sweeper logs them."""
    try:
        best = study.best_trial
    except ValueError:
        log.info("Optuna study %r: no trial completed", study.study_name)
        return
    params = ", ".join(
        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in best.params.items()
    )
    log.info(
        "Best trial %d of %d: %s = %.4f", best.number, len(study.trials), objective, best.value
    )
    log.info("Best parameters: %s", params)


def _tell(
    study: Any, batch: list, results: list, errors: dict[int, BaseException | None]
) -> BaseException | None:
    """Tell each trial's outcome to the study; the first job failure, if any. Each job's
    error is read once, kept in ``errors`` by ``id(result)`` for the sweep's last word."""
    import optuna

    from hydra_plugins.recoeval_sweeper.jobs import job_error

    failure = None
    for trial, result in zip(batch, results):
        error = errors[id(result)] = job_error(result)  # the job has said why, in its words
        if error is not None:  # told to Optuna, then raised by the sweeper
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            failure = failure or error
            continue
        returned = result.return_value
        if isinstance(returned, dict):
            for key in ("run_id", "job_dir"):
                if returned.get(key):
                    trial.set_user_attr(key, returned[key])
        value = objective_value(returned)
        if math.isnan(value):
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, value)
    return failure


class _BestTracker:
    """Records the study's best trial on the sweep's parent run whenever it changes."""

    def __init__(self, sweep_dir: Path, objective: str, study: Any) -> None:
        from recoeval_tracking.tracking.sweeps import read_sweep_record

        self.record = read_sweep_record(sweep_dir)  # written by the app's sweep callback
        self.objective, self.study = objective, study
        self.best_number: int | None = None

    def update(self) -> None:
        try:
            best = self.study.best_trial
        except ValueError:  # no completed trial yet
            return
        if best.number == self.best_number or self.record is None:
            return
        self.best_number = best.number
        try:
            self._record(best)
        except Exception as err:  # noqa: BLE001 - the search goes on; the close retries
            print(
                f"recoeval: WARNING: could not record the best trial on the sweep parent "
                f"({type(err).__name__}: {str(err)[:200]}).",
                file=sys.stderr,
                flush=True,
            )

    def _record(self, best: Any) -> None:
        from recoeval_tracking.tracking.sweeps import (
            find_or_create_sweep_parent,
            record_sweep_best,
        )

        rec = self.record
        parent = rec.get("parent_run_id") or find_or_create_sweep_parent(
            rec["sweep_id"],
            tracking_uri=rec.get("tracking_uri"),
            experiment=rec.get("experiment") or "recoeval",
        )
        tags = {
            "recoeval.optuna.study": self.study.study_name,
            "recoeval.optuna.direction": self.study.direction.name.lower(),
        }
        if best.user_attrs.get("run_id"):
            tags["recoeval.best.run_id"] = best.user_attrs["run_id"]
        record_sweep_best(
            parent,
            self.objective,
            best.value,
            best.params,
            step=best.number,
            tracking_uri=rec.get("tracking_uri"),
            tags=tags,
        )


def _write_results(path: Path, study: Any, trials: list, objective: str, direction: str) -> None:
    """``optimization_results.yaml``: the study's best trial and this command's trials."""
    by_number = {t.number: t for t in study.get_trials(deepcopy=False)}
    rows = []
    for trial in trials:
        frozen = by_number.get(trial.number)
        rows.append(
            {
                "number": trial.number,
                "params": dict(trial.params),
                "value": None if frozen is None or frozen.value is None else float(frozen.value),
                "state": frozen.state.name if frozen is not None else "UNKNOWN",
            }
        )
    out: dict[str, Any] = {
        "name": "optuna",
        "study_name": study.study_name,
        "objective": objective,
        "direction": direction,
        "n_trials_in_study": len(by_number),
        "trials": rows,
    }
    try:
        best = study.best_trial
        out["best_trial"] = best.number
        out["best_value"] = float(best.value)
        out["best_params"] = dict(best.params)
    except ValueError:
        out["best_trial"] = None
    OmegaConf.save(OmegaConf.create(out), path)
