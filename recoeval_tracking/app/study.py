"""A sweep as a fair study: configurations chosen on validation, each system tested once, every
baseline tuned with the same budget as the grid's model.

The recoeval sweeper (``hydra/sweeper=recoeval``) plans the jobs with :func:`plan_study` and
runs them in two phases when the split has a validation part (otherwise every job is a test
job, as before, and :func:`~recoeval_tracking.app.protocol.protocol_line` says the choice was
made on test):

1. **Selection.** Every configuration of every system (each model option of the grid, the
   user's model included, and each baseline) fits on train and is evaluated on validation
   (``++phase=selection``: metrics ``val_<metric>`` only). A system with one configuration skips
   this phase: there is nothing to choose.
2. **Test.** Per system (and per value of any other swept key: ``seed=0,1``, ``split.fold=0,1,2``
   are replicates, each chosen on its own), the configuration with the best validation
   ``objective`` (``ndcg_at_<metrics.k>`` when unset; the direction from the metric registry;
   ties to the first in grid order) refits on train + validation and is evaluated once on test
   (``++phase=test``).

**Budgets.** The grid's systems keep the configurations the command line gave them. With
``tune_baselines=true`` (default) each baseline gets as many configurations as the grid's
largest system, drawn from its ``model.search_space`` (a mapping of parameter to the list of its
values, in the model's config): all of them when the space holds no more, else that many drawn
uniformly without replacement (seeded by the top-level ``seed``), in the space's order. A
baseline without a space runs its defaults (one configuration) and the budgets are then unequal,
which every surface says. ``tune_baselines=false`` runs every baseline at its defaults.

The sweep writes :data:`STUDY_FILE` into its folder: the protocol line, the objective, and per
system its configurations, fit seconds (selection and test fits), chosen overrides and chosen
validation value; the sweep callback records it on the parent run.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import InputError
from ..tracking.sweeps import STUDY_FILE, read_study, replicate_of, write_study
from .protocol import protocol_line

__all__ = [
    "STUDY_FILE",
    "Candidate",
    "space_configurations",
    "tuned_overrides",
    "draw_configurations",
    "choose",
    "study_record",
    "read_study",
    "write_study",
]


@dataclass
class Candidate:
    """One configuration of one system in a sweep.

    ``overrides``: the job's overrides (without ``phase``); ``system``: the system's name
    (the model option, or the config's ``label``); ``replicate``: the overrides of the other
    swept keys, which a choice is made within; ``baseline_rank``: its place in ``baselines``
    (None for the grid's systems). ``value`` (the validation objective) and ``fit_seconds`` are
    filled once the selection job ran; ``test_fit_seconds`` once the test job ran. ``failed``:
    its selection job failed (it is never chosen); ``test_failed``: its test job failed (its
    system has no test number).
    """

    overrides: list[str]
    system: str
    replicate: tuple[str, ...] = ()
    baseline_rank: int | None = None
    value: float | None = None
    fit_seconds: float = 0.0
    test_fit_seconds: float = 0.0
    failed: bool = False
    test_failed: bool = False

    @property
    def group(self) -> tuple[str, tuple[str, ...]]:
        """What a choice is made within: the system and the replicate."""
        return (self.system, self.replicate)


def space_configurations(space: Any, name: str) -> list[dict[str, Any]]:
    """Every configuration of a ``model.search_space`` (a mapping of parameter to a list of
    values), in the space's order (the last parameter varies fastest); ``[{}]`` for an empty
    or absent space.

    Raises
    ------
    InputError
        The space is not a mapping of names to non-empty lists.
    """
    if space is None or (isinstance(space, Mapping) and not space):
        return [{}]
    if not isinstance(space, Mapping):
        raise InputError(
            f"model.search_space of {name!r} must map each parameter to a list of values "
            f"(search_space: {{neighbours: [20, 50, 100]}}); got {space!r}."
        )
    keys, values = [], []
    for key, options in space.items():
        if isinstance(options, (str, bytes)) or not isinstance(options, Sequence) or not options:
            raise InputError(
                f"model.search_space.{key} of {name!r} must be a non-empty list of values "
                f"(e.g. [20, 50, 100]); got {options!r}."
            )
        keys.append(str(key))
        values.append(list(options))
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def draw_configurations(
    configs: list[dict[str, Any]], budget: int, seed: int
) -> list[dict[str, Any]]:
    """``budget`` configurations of ``configs``: all of them when there are no more, else
    ``budget`` drawn uniformly without replacement with ``random.Random(seed)``, kept in the
    space's order."""
    if budget >= len(configs):
        return list(configs)
    picks = sorted(random.Random(seed).sample(range(len(configs)), budget))
    return [configs[i] for i in picks]


def tuned_overrides(configs: list[dict[str, Any]], budget: int, seed: int) -> list[list[str]]:
    """The ``model.<key>=<value>`` overrides of :func:`draw_configurations`."""
    return [
        [f"model.{k}={_override_value(v)}" for k, v in c.items()]
        for c in draw_configurations(configs, budget, seed)
    ]


def _override_value(value: Any) -> str:
    """A value as Hydra's override grammar reads it back (lists and null included)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_override_value(v) for v in value) + "]"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value) if isinstance(value, float) else str(value)


def choose(
    candidates: Iterable[Candidate], objective: str, greater_is_better: bool
) -> dict[tuple[str, tuple[str, ...]], Candidate]:
    """The chosen candidate of each group: the best validation ``value`` (NaN and failed jobs
    never chosen; ties to the first in order). A group none of whose candidates has a value is
    left out."""
    best: dict[tuple[str, tuple[str, ...]], Candidate] = {}
    values: dict[tuple[str, tuple[str, ...]], float] = {}
    for c in candidates:
        if c.failed or c.value is None or math.isnan(c.value):
            continue
        held = values.get(c.group)
        if held is None or (c.value > held if greater_is_better else c.value < held):
            best[c.group], values[c.group] = c, c.value
    return best


def study_record(
    candidates: Sequence[Candidate],
    chosen: Mapping[tuple[str, tuple[str, ...]], Candidate],
    *,
    on_validation: bool,
    objective: str | None,
    refit: bool,
    space_sizes: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The study's record (:data:`STUDY_FILE`): the protocol line, and per system its budget
    (configurations per replicate, fit seconds over every fit), its chosen configurations and
    their validation values. ``space_sizes``: the size of each tuned baseline's search space;
    a baseline that ran all of a space smaller than the others' budget still counts as an
    equal budget (it tried everything it had), and the line says so."""
    systems: dict[str, dict[str, Any]] = {}
    per_group: dict[tuple[str, tuple[str, ...]], int] = {}
    for c in candidates:
        per_group[c.group] = per_group.get(c.group, 0) + 1
        entry = systems.setdefault(
            c.system,
            {
                "configurations": 0,
                "fit_seconds": 0.0,
                "baseline_rank": c.baseline_rank,
                "chosen": [],
                "jobs": 0,
                "failed": 0,
                "test_failed": 0,
            },
        )
        entry["fit_seconds"] += float(c.fit_seconds) + float(c.test_fit_seconds)
        entry["jobs"] += 1
        entry["failed"] += int(c.failed)
        entry["test_failed"] += int(c.test_failed)
    for (system, _), n in per_group.items():
        systems[system]["configurations"] = max(systems[system]["configurations"], n)
    for c in chosen.values():
        systems[c.system]["chosen"].append(
            {"overrides": list(c.overrides), "replicate": list(c.replicate), "value": c.value}
        )
    budgets = {name: entry["configurations"] for name, entry in systems.items()}
    sizes = dict(space_sizes or {})
    top = max(budgets.values(), default=0)
    whole = [n for n, b in budgets.items() if b < top and sizes.get(n) == b]
    for name in whole:
        systems[name]["whole_search_space"] = True
    # a configuration whose job failed was not chosen from: its system chose among fewer
    failures = {
        name: (entry["failed"], entry["jobs"], entry["test_failed"])
        for name, entry in systems.items()
        if entry["failed"] or entry["test_failed"]
    }
    return {
        "protocol": protocol_line(
            on_validation=on_validation,
            objective=objective,
            configurations=budgets,
            refit=refit,
            whole_space=whole,
            failures=failures,
        ),
        "on_validation": on_validation,
        "objective": objective,
        "refit": refit,
        "equal_budgets": not any(f for f, _, _ in failures.values())
        and all(b == top or n in whole for n, b in budgets.items()),
        "systems": systems,
    }


# ---------------------------------------------------------------------------------------------
# the plan of a sweep (used by hydra_plugins/recoeval_sweeper)
# ---------------------------------------------------------------------------------------------


def _system(cfg: Any) -> str:
    """A grid job's system: its model option (``hydra.runtime.choices.model``), else the
    model's ``name`` or ``_target_``'s last part."""
    from omegaconf import OmegaConf

    choice = OmegaConf.select(cfg, "hydra.runtime.choices.model", default=None)
    if choice:
        return str(choice)
    name = OmegaConf.select(cfg, "model.name", default=None)
    if name:
        return str(name)
    target = OmegaConf.select(cfg, "model._target_", default=None)
    return str(target).rsplit(".", 1)[-1] if target else "model"


class StudyPlan:
    """The jobs of a recoeval sweep as a study (see the module docstring): built from the
    grid's and the baselines' overrides and their composed configs; the sweeper launches
    :meth:`selection_candidates`, attaching each batch's results (:meth:`attach`), lets the
    plan :meth:`choose`, launches :meth:`test_candidates` and writes :meth:`record`."""

    def __init__(
        self,
        config: Any,
        grid: Sequence[Sequence[str]],
        baselines: Sequence[Sequence[str]],
        configs: Sequence[Any],
    ) -> None:
        from omegaconf import OmegaConf

        from ..metrics.registry import greater_is_better
        from .precheck import check_objective
        from .protocol import has_validation_setting

        def split_of(c: Any) -> dict[str, Any]:
            node = OmegaConf.select(c, "split", default=None)
            value = OmegaConf.to_container(node, resolve=False) if node is not None else {}
            return value if isinstance(value, dict) else {}

        self.on_validation = any(has_validation_setting(split_of(c)) for c in configs)
        k = OmegaConf.select(config, "metrics.k", default=10)
        chosen_objective = OmegaConf.select(config, "objective", default=None)
        self.objective = str(chosen_objective or f"ndcg_at_{k}").removeprefix("val_")
        if self.on_validation:
            check_objective(self.objective, k)
        self.greater = greater_is_better(self.objective)
        self.refit = bool(OmegaConf.select(config, "refit", default=True))
        tune = bool(OmegaConf.select(config, "tune_baselines", default=True))
        seed = OmegaConf.select(config, "seed", default=0)
        n_grid = len(grid)
        self.candidates: list[Candidate] = [
            Candidate(list(job), _system(cfg), replicate_of(job))
            for job, cfg in zip(grid, configs[:n_grid])
        ]
        counts: dict[tuple[str, tuple[str, ...]], int] = {}
        for c in self.candidates:
            counts[c.group] = counts.get(c.group, 0) + 1
        self.budget = max(counts.values(), default=1)
        systems = {c.system for c in self.candidates}
        named = [
            next(o.split("=", 1)[1] for o in job if o.startswith("model=")) for job in baselines
        ]
        same = sorted(systems & set(named))
        if same:
            raise InputError(
                f"baselines names {', '.join(same)}, which the sweep's grid already runs as "
                "its model: the study would hold two systems of that name. Drop it from "
                f"baselines (or from the grid's model=...); baselines={sorted(set(named))}, "
                f"grid: {sorted(systems)}."
            )
        self.tuned: list[Candidate] = []
        self.space_sizes: dict[str, int] = {}
        for job, cfg in zip(baselines, configs[n_grid:]):
            name = next(o.split("=", 1)[1] for o in job if o.startswith("model="))
            rank = int(OmegaConf.select(cfg, "baseline_rank", default=0) or 0)
            space = OmegaConf.select(cfg, "model.search_space", default=None)
            space = OmegaConf.to_container(space) if OmegaConf.is_config(space) else space
            extra: list[list[str]] = [[]]
            if self.on_validation and tune:
                configurations = space_configurations(space, name)
                extra = tuned_overrides(configurations, self.budget, int(seed or 0))
                if space:
                    self.space_sizes[name] = len(configurations)
            for more in extra:
                c = Candidate([*job, *more], name, replicate_of(job), baseline_rank=rank)
                self.candidates.append(c)
                if more:
                    self.tuned.append(c)
        self.chosen: dict[tuple[str, tuple[str, ...]], Candidate] = {}
        self.leakage: dict[str, Any] | None = None

    def tuned_keys(self) -> list[str]:
        """The ``model.<key>`` of every search space a baseline is tuned over."""
        keys: dict[str, None] = {}
        for c in self.tuned:
            for o in c.overrides:
                key = o.split("=", 1)[0]
                if key.startswith("model."):
                    keys[key] = None
        return list(keys)

    # -- the phases -------------------------------------------------------------------------
    def _groups(self) -> dict[tuple[str, tuple[str, ...]], list[Candidate]]:
        out: dict[tuple[str, tuple[str, ...]], list[Candidate]] = {}
        for c in self.candidates:
            out.setdefault(c.group, []).append(c)
        return out

    def selection_candidates(self) -> list[Candidate]:
        """The candidates of every group with more than one: each evaluated on validation."""
        return [c for group in self._groups().values() if len(group) > 1 for c in group]

    def test_candidates(self) -> list[Candidate]:
        """Per group, the chosen candidate (or the only one), in the plan's order."""
        out = []
        for key, group in self._groups().items():
            if len(group) == 1:
                self.chosen[key] = group[0]
                out.append(group[0])
            elif key in self.chosen:
                out.append(self.chosen[key])
        return out

    def opening_line(self) -> str:
        """What the sweep says before its first job."""
        groups = self._groups()
        sizes: dict[str, int] = {}
        for (system, _), group in groups.items():
            sizes[system] = max(sizes.get(system, 0), len(group))
        shown = ", ".join(f"{name} {n}" for name, n in sizes.items())
        n_sel = len(self.selection_candidates())
        return (
            f"fair study: {n_sel} selection jobs on validation (configurations per system: "
            f"{shown}), chosen by val_{self.objective}, then {len(groups)} test jobs, each "
            "system's choice tested once"
        )

    def attach(
        self, members: Sequence[Candidate], results: Sequence[Any], phase: str | None
    ) -> None:
        """Read each launched job's validation objective and fit seconds."""
        from hydra.core.utils import JobStatus

        for c, r in zip(members, results):
            if r.status != JobStatus.COMPLETED:
                c.failed = c.failed or phase == "selection"
                c.test_failed = phase != "selection"
                continue
            metrics = _job_metrics(r)
            fit = float(metrics.get("fit_seconds") or 0.0)
            if phase == "selection":
                c.fit_seconds = fit
                # a NaN value is written as null: an undefined metric, never chosen
                value = metrics.get(f"val_{self.objective}")
                if f"val_{self.objective}" not in metrics:
                    shown = ", ".join(sorted(k for k in metrics if k.startswith("val_"))[:10])
                    raise InputError(
                        f"objective {self.objective!r} is not among the results of the job "
                        f"{' '.join(c.overrides)} on validation ({shown}, ...). Pick a metric "
                        "the jobs compute (metrics.names) at metrics.k, e.g. "
                        "objective=ndcg_at_10."
                    )
                c.value = float(value) if value is not None else math.nan
            else:
                c.test_fit_seconds = fit + float(metrics.get("refit_seconds") or 0.0)
                if self.leakage is None:  # the split's, the same for every test job
                    self.leakage = _job_file(r, "dataset.json").get("leakage")
                if c.value is None and metrics.get(f"val_{self.objective}") is not None:
                    c.value = float(metrics[f"val_{self.objective}"])

    def choose(self, selection: Sequence[Candidate]) -> None:
        """Choose each group's configuration from the selection jobs' values."""
        self.chosen.update(choose(selection, self.objective, self.greater))

    def record(self) -> dict[str, Any]:
        """The study's record (:func:`study_record`)."""
        from ..splitting import leakage_line

        chosen = self.chosen if self.on_validation else {}
        record = study_record(
            self.candidates,
            chosen,
            on_validation=self.on_validation,
            objective=self.objective,
            refit=self.refit,
            space_sizes=self.space_sizes,
        )
        if self.leakage:
            record["leakage"] = leakage_line(self.leakage)
        return record


def _job_metrics(r: Any) -> dict[str, Any]:
    """A launched job's ``metrics.json`` (from its output folder), else {}."""
    return _job_file(r, "metrics.json")


def _job_file(r: Any, name: str) -> dict[str, Any]:
    """A JSON file of a launched job's output folder, else {}."""
    from omegaconf import OmegaConf

    out_dir = (
        OmegaConf.select(r.hydra_cfg, "hydra.runtime.output_dir", default=None)
        if (r.hydra_cfg is not None)
        else None
    )
    if not out_dir:
        return {}
    try:
        value = json.loads((Path(str(out_dir)) / name).read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
