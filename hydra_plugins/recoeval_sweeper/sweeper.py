"""The recoeval sweeper: Hydra's basic grid, the app's baselines beside it, every job checked
before any runs.

* **Baselines.** With ``baselines=[popularity,random]`` (the app's top-level setting) the sweep
  runs, after its grid, one job per baseline: ``model=<baseline>`` and the grid's overrides
  without any ``model`` ones (``model=...``, ``model.<key>=...``), so the baseline keeps its
  own defaults and the grid's data, split and seed. A key the grid sweeps outside ``model``
  (``seed=0,1``) gives one job per baseline and value. Each baseline job gets
  ``++baseline_rank=<i>`` (its place in the list; 0 is the baseline the leaderboard and the
  report compare against). In a Hydra app of the user's own, whose task builds the user's
  model, the baseline jobs run the app's own job (:func:`recoeval_tracking.app.task.run_task`:
  our model fitted and evaluated on the app's data, split, metrics and tracking).
* **Every job is composed first.** A job whose overrides do not compose (``model.neighbours``
  given to ``model=popularity``) stops the sweep before any job runs, with
  :class:`~recoeval_tracking.app.errors.SweepJobError`: the job's overrides and which options
  of the group declare the key (the user's ``--config-dir`` ones too). Only then does the
  app's sweep callback create the MLflow parent run
  (:func:`recoeval_tracking.app.callbacks.start_sweep_tracking`), so a sweep that cannot start
  leaves no run. Hydra's basic launcher, which runs the jobs in this process, is handed those
  configs instead of composing each job a second time (:func:`.jobs.compose_once`); launchers that
  run jobs elsewhere (joblib, submitit) compose them there, as before.
* Every job of the grid and the baselines runs even when one fails; the sweep then fails with
  the first failure, as Hydra's basic sweeper does.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from recoeval_tracking.app.study import StudyPlan, write_study

from .jobs import ComposedOnce, compose_once, raise_failures

__all__ = ["RecoevalSweeper", "baseline_jobs", "read_baselines"]

log = logging.getLogger(__name__)

#: The config group a baseline replaces.
GROUP = "model"
_ABSENT = object()


def _group_of(override: Override) -> str:
    return override.key_or_group.split(".", 1)[0].split("/", 1)[0]


def read_baselines(
    config: DictConfig, overrides: Sequence[Override], options: Sequence[str] | None = None
) -> list[str]:
    """The ``baselines`` setting of the composed config, checked: a list of distinct option
    names (``baselines=[popularity,random]``), given once (not swept), each one of
    ``options`` (the ``model`` group's options) when they are given."""
    import difflib

    from recoeval_tracking._validation import InputError

    for o in overrides:
        if o.key_or_group == "baselines" and o.is_sweep_override():
            raise InputError(
                "baselines: a list of model options, run once each beside the sweep's grid; "
                f"got the sweep {o.input_line!r}. Write it as one list, quoted for the shell: "
                "'baselines=[popularity,random]'."
            )
    value = OmegaConf.select(config, "baselines", default=None)
    if value is None:
        return []
    names = OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
    if (
        isinstance(names, str)
        or not isinstance(names, list)
        or not all(isinstance(n, str) and n for n in names)
    ):
        raise InputError(
            f"baselines must be a list of model option names, e.g. "
            f"'baselines=[popularity,random]'; got {names!r}."
        )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(
            f"baselines must name each model option once; got {names!r} ({', '.join(twice)} twice)."
        )
    known = sorted({str(o) for o in options or ()})
    unknown = [n for n in names if known and n not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=3, cutoff=0.6)
        shown = close + [o for o in known if o not in close]
        raise InputError(
            f"baselines must name options of the config group '{GROUP}' ({', '.join(shown)}); "
            f"got {names!r}, where {', '.join(map(repr, unknown))} is none of them."
        )
    return list(names)


def _refused(err: Exception, config: DictConfig) -> BaseException:
    """``err`` as a refusal of the sweep before any job: one line on standard error naming the
    command that ran (``train.py: baselines ...`` in a Hydra app of the user's own, not a
    traceback), and for ``recoeval-track``, whose entry point catches it, its usage error."""
    import sys

    from recoeval_tracking.app.job_name import StartRefused

    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] not in ("", "-c") else ""
    if not prog or prog == "__main__.py":
        prog = str(OmegaConf.select(config, "hydra.job.name", default=None) or "the app")
    refused = StartRefused(err)
    refused.code = f"{prog}: {' '.join(str(err).split())}"
    return refused


def baseline_jobs(overrides: Sequence[Override], baselines: Sequence[str]) -> list[list[str]]:
    """The overrides of the baseline jobs: per combination of the values of the overrides
    outside the ``model`` group (the grid's data, split, seed...), one job per baseline with
    ``model=<baseline>`` and ``++baseline_rank=<i>``."""
    if not baselines:
        return []
    lists: list[list[str]] = []
    for o in overrides:
        if _group_of(o) == GROUP:
            continue
        key = o.get_key_element()
        if o.is_sweep_override():
            lists.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            lists.append([f"{key}={o.get_value_element_as_str()}"])
    return [
        [f"{GROUP}={name}", *combo, f"++baseline_rank={rank}"]
        for combo in itertools.product(*lists)
        for rank, name in enumerate(baselines)
    ]


def _chunks(jobs: list[list[str]], size: int | None) -> list[list[list[str]]]:
    if not jobs:
        return []
    size = len(jobs) if size is None or size == -1 else size
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


class RecoevalSweeper(Sweeper):
    """Hydra's basic sweeper with baselines and an up-front check of every job; see the module
    docstring. (Not a subclass of Hydra's ``BasicSweeper``: Hydra's plugin scan loads a second
    copy of that class, which its own ``super(BasicSweeper, self)`` then refuses; its grid
    expansion, a static method, is used as is.)"""

    def __init__(
        self, max_batch_size: int | None = None, params: dict[str, str] | None = None
    ) -> None:
        super().__init__()
        self.max_batch_size = max_batch_size
        self.params = dict(params or {})
        self.hydra_context: HydraContext | None = None
        self.config: DictConfig | None = None
        self.launcher: Any = None
        self._task_function: TaskFunction | None = None
        self._index = 0
        self._composed: ComposedOnce | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )
        self._task_function = task_function
        self._composed = compose_once(self.launcher, hydra_context)

    # -- the sweep --------------------------------------------------------------------------
    def sweep(self, arguments: list[str]) -> Any:
        from recoeval_tracking.app.callbacks import start_sweep_tracking

        assert self.config is not None and self.launcher is not None
        assert self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        params = [f"{k}={v}" for k, v in self.params.items()]
        overrides = parser.parse_overrides([*params, *arguments])
        grid = BasicSweeper.split_arguments(overrides, None)[0]
        from recoeval_tracking._validation import InputError

        try:
            names = read_baselines(self.config, overrides, self._group_options())
        except InputError as err:  # before any job: a one-line refusal, not a traceback
            raise _refused(err, self.config) from None
        baselines = baseline_jobs(overrides, names)
        tic = time.perf_counter()
        configs = self._check_jobs(grid + baselines, overrides)
        if self._composed is not None:
            self._composed.keep(self.config, grid + baselines, configs)
        plan = StudyPlan(self.config, grid, baselines, configs)
        if plan.on_validation:
            self._check_jobs([c.overrides for c in plan.tuned], overrides, space=True)
        log.debug(
            "composed the %d jobs of the sweep in %.2f s",
            len(grid) + len(baselines),
            time.perf_counter() - tic,
        )
        start_sweep_tracking()  # the MLflow parent run, now that every job composes
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        returns: list[Sequence[Any]] = []
        self._index = 0
        if plan.on_validation:
            from recoeval_tracking.tracking.sweeps import note_swept_keys

            note_swept_keys(sweep_dir, plan.tuned_keys())  # runs named after their values
            log.info("%s", plan.opening_line())
            selection = plan.selection_candidates()
            returns += self._launch_candidates(selection, "selection", plan)
            plan.choose(selection)
            returns += self._launch_candidates(plan.test_candidates(), "test", plan)
        else:
            returns += self._launch_candidates(plan.candidates, None, plan)
        if self._composed is not None:
            self._composed.forget()
        write_study(sweep_dir, plan.record())
        # a failed job fails the sweep, as Hydra's do: all named once; the sweep's record says
        # first that every job ran, so its parent run closes as finished, its failures named
        raise_failures(returns, sweep_dir=sweep_dir)
        return returns

    def _group_options(self) -> list[str] | None:
        """The options of the ``model`` group on the primary config's search path (a user's
        app's own and, through its ``hydra.searchpath``, ours); None when they cannot be
        listed (then the baselines are checked when their jobs are composed)."""
        assert self.hydra_context is not None and self.config is not None
        try:
            return list(
                self.hydra_context.config_loader.get_group_options(
                    GROUP,
                    config_name=OmegaConf.select(self.config, "hydra.job.config_name"),
                    overrides=list(OmegaConf.select(self.config, "hydra.overrides.hydra") or []),
                )
            )
        except Exception:  # noqa: BLE001 - a best-effort list; composing each job decides
            return None

    def _launch_candidates(self, candidates: list[Any], phase: str | None, plan: Any) -> list:
        """Launch ``candidates`` (the grid's first, then the baselines'), ``++phase=<phase>``
        added, in batches of ``max_batch_size``; returns each batch's results."""
        out: list[Sequence[Any]] = []
        extra = [f"++phase={phase}"] if phase else []
        for launcher, group in (
            (self.launcher, [c for c in candidates if c.baseline_rank is None]),
            (
                self._baseline_launcher(
                    [c.overrides for c in candidates if c.baseline_rank is not None]
                ),
                [c for c in candidates if c.baseline_rank is not None],
            ),
        ):
            jobs = [[*c.overrides, *extra] for c in group]
            for batch, members in zip(
                _chunks(jobs, self.max_batch_size), _chunks(group, self.max_batch_size)
            ):
                results = launcher.launch(batch, initial_job_idx=self._index)
                self._index += len(batch)
                plan.attach(members, results, phase)
                out.append(results)
        return out

    def _baseline_launcher(self, jobs: list[list[str]]) -> Any:
        """The launcher of the baseline jobs: the sweep's own when its task is the app's job
        (``recoeval-track``), else one that runs the app's job (a user's own Hydra app, whose
        task builds the user's model)."""
        from recoeval_tracking.app.task import run_task

        if not jobs or self._task_function is run_task:
            return self.launcher
        assert self.hydra_context is not None and self.config is not None
        return Plugins.instance().instantiate_launcher(
            hydra_context=self.hydra_context, task_function=run_task, config=self.config
        )

    # -- the check --------------------------------------------------------------------------
    def _check_jobs(
        self, jobs: list[list[str]], overrides: Sequence[Override], space: bool = False
    ) -> list[DictConfig]:
        """Compose every job and return their configs; raise :class:`SweepJobError` naming
        those that do not compose (``space``: jobs drawn from a baseline's
        ``model.search_space``, whose error names the space)."""
        from recoeval_tracking.app.errors import SweepJobError, composition_key
        from recoeval_tracking.app.job_name import check_config_job_name

        assert self.hydra_context is not None and self.config is not None
        loader = self.hydra_context.config_loader
        failures = []
        configs = []
        for index, job in enumerate(jobs):
            try:
                job_config = loader.load_sweep_config(
                    master_config=self.config, sweep_overrides=list(job)
                )
                check_config_job_name(job_config, "its config")  # names its log file
                configs.append(job_config)
            except Exception as err:  # noqa: BLE001 - every composition error is reported
                failures.append((index, list(job), err))
        if not failures:
            return configs
        if space:
            from recoeval_tracking._validation import InputError

            index, job, err = failures[0]
            model = next((o.split("=", 1)[1] for o in job if o.startswith("model=")), "?")
            tuned = [o for o in job if o.startswith("model.")]
            raise InputError(
                f"model.search_space of the baseline {model!r} does not compose: the job "
                f"{' '.join(tuned)} fails ({type(err).__name__}: "
                f"{str(err).splitlines()[0] if str(err) else ''}). Name only parameters the "
                f"model takes (recoeval-track model={model} --cfg job lists them)."
            ) from err
        key = composition_key(failures[0][2])
        owners = self._options_having(key, overrides) if key else None
        raise SweepJobError(failures, len(jobs), key=key, owners=owners) from failures[0][2]

    def _options_having(self, key: str, overrides: Sequence[Override]) -> list[str] | None:
        """The options of ``key``'s config group whose config has ``key`` (those the sweep
        names first), found by composing each; None when ``key`` is not in a config group."""
        assert self.hydra_context is not None and self.config is not None
        loader = self.hydra_context.config_loader
        group = key.split(".", 1)[0]
        try:
            options = loader.get_group_options(group)
        except Exception:  # noqa: BLE001 - no such group
            return None
        if not options or "." not in key:
            return None
        having = []
        for option in options:
            try:
                cfg = loader.load_sweep_config(
                    master_config=self.config, sweep_overrides=[f"{group}={option}"]
                )
            except Exception:  # noqa: BLE001 - an option that does not compose alone
                continue
            if OmegaConf.select(cfg, key, default=_ABSENT, throw_on_missing=False) is not _ABSENT:
                having.append(option)
        named = [
            v
            for o in overrides
            if o.key_or_group == group
            for v in (
                o.sweep_string_iterator()
                if o.is_sweep_override()
                else [o.get_value_element_as_str()]
            )
        ]
        return sorted(having, key=lambda h: (h not in named, h))
