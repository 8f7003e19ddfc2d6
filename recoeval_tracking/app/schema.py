"""Structured-config schema of the ``recoeval-track`` application.

Every config group option in ``configs/`` starts its defaults list with the matching schema
node stored here (``/schema/<group>/<option>@_here_``), and ``configs/config.yaml`` starts with
``recoeval_schema`` (the :class:`Config` below). Hydra then checks every value against these
dataclasses when it composes the config: a misspelt key (``model.factor=32``) or a value of the
wrong type (``metrics.k=ten``) fails before any work starts, and ``recoeval-track`` turns the
error into a one-paragraph message (see :mod:`recoeval_tracking.app.cli`).

The nodes of the ``dataset``, ``split`` and ``model`` groups are not written here: each is
derived from the signature of its entry in the registry (:func:`derive_schema`), so a
parameter is written once, in its class or function, and the option's YAML holds only what it
changes on purpose (``seed: ${seed}``, ALS's 16 factors). What is shared by every option of a
group is a base dataclass here: :class:`DatasetConfig` (the loader ``kind``, a ``name`` label
and the preparation steps), :class:`FileDatasetConfig` (``path``, ``duplicates``),
:class:`SplitConfig` (``name``, ``seed``), :class:`FoldedSplitConfig` (``n_folds`` and the
evaluated ``fold``), :class:`ModelConfig` (``name``).

Registration happens once, when this module is imported (:func:`register_configs` is
idempotent). Only this package imports Hydra and OmegaConf; the job itself
(:func:`recoeval_tracking.app.pipeline.run_job`) receives the composed config as a plain dict.

Groups and options (the files in ``configs/``):

``dataset``
    one option per kind of :data:`recoeval_tracking.data.DATASETS` that a config can describe:
    ``synthetic`` (seeded generator, no file), ``movielens_100k``, ``movielens_1m``,
    ``movielens_latest``, ``csv``, ``parquet``, ``parquet_partitioned`` (these need
    ``dataset.path``; the last is a stored split, read by reference on the workers with
    ``backend=dask``: :mod:`recoeval_tracking.app.stored`); not ``dataframe``, which needs a
    DataFrame in memory. Every option also takes the preparation
    steps ``implicit`` (value conversion), ``min_user_interactions``,
    ``min_item_interactions`` and ``k_core``.
``split``
    one option per strategy of :data:`recoeval_tracking.splitting.SPLITS`; k-fold strategies
    evaluate fold ``split.fold`` (sweep it: ``split.fold=0,1,2,3,4``).
``model``
    one option per model of :data:`recoeval_tracking.models.MODELS`, or a config of the
    user's own (``--config-dir my_configs model=ease``) whose ``_target_`` names their class;
    the ``model`` node is typed ``Any`` so that such a config is taken as written, while each
    of our options keeps the checks of its own schema node.
``metrics``
    ``default``, ``all`` and one per library profile of
    :data:`recoeval_tracking.metrics.profiles.PROFILES` (``recometrics``, ``hivemall``,
    ``recbole``, ``implicit``, ``ranx``, ``trec_eval``).
``tracking``
    ``local`` (SQLite ``mlflow.db`` in the directory the command was started from), ``server``
    (``MLFLOW_TRACKING_URI`` or ``http://127.0.0.1:5000``), ``none``.
``backend``
    where the evaluation runs: ``cpu`` (this process) or ``dask`` (a Dask cluster:
    :class:`BackendConfig`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, make_dataclass
from typing import Any, get_type_hints

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from ..options import EvalOptions, config_fields
from ._signatures import config_params

__all__ = [
    "Config",
    "DatasetConfig",
    "ImplicitConversionConfig",
    "SyntheticDatasetConfig",
    "FileDatasetConfig",
    "CsvDatasetConfig",
    "ParquetDatasetConfig",
    "SplitConfig",
    "ModelConfig",
    "MetricsConfig",
    "NegativesConfig",
    "TrackingConfig",
    "SCHEMAS",
    "derive_schema",
    "register_configs",
]

# ---------------------------------------------------------------------------------------------
# what every option of a group shares
# ---------------------------------------------------------------------------------------------


@dataclass
class ImplicitConversionConfig:
    """Value conversion applied after loading (:func:`recoeval_tracking.data.to_implicit`).

    ``method=None`` keeps the stored values (ratings become NDCG gains and ALS confidences
    ``1 + alpha * r``); ``binarize``, ``confidence`` or ``log`` convert them; ``threshold`` first
    drops entries whose value is below it (e.g. 4 for "liked" on a 1..5 scale).
    """

    method: str | None = None
    threshold: float | None = None
    alpha: float = 1.0
    epsilon: float = 1.0


@dataclass
class DatasetConfig:
    """Fields shared by every dataset option: the loader ``kind``, a ``name`` for the records
    (also passed to loaders that take one) and the preparation steps.

    ``min_user_interactions`` / ``min_item_interactions`` run one filtering pass
    (:func:`~recoeval_tracking.data.filter_min_interactions`); ``k_core`` > 0 runs the iterated
    k-core (:func:`~recoeval_tracking.data.k_core`) with that threshold for users and items.

    ``relevance_level`` and ``gains`` say how the data's values judge relevance, for the
    evaluation (``metrics.relevance_level`` and ``metrics.gains``, when set, win): test entries
    below the level are judged non-relevant, and a positive's gain is its value (``graded``)
    or 1 (``binary``). Explicit ratings (the MovieLens options) default to 4 and ``binary``:
    a 1-star rating is no positive, and NDCG, RBP... stay within [0, 1].
    """

    kind: str = MISSING
    name: str | None = None
    implicit: ImplicitConversionConfig = field(default_factory=ImplicitConversionConfig)
    min_user_interactions: int = 0
    min_item_interactions: int = 0
    k_core: int = 0
    relevance_level: float | None = None
    gains: str | None = None


@dataclass
class FileDatasetConfig(DatasetConfig):
    """Fields shared by the loaders that read a file (those with a ``path`` parameter):
    ``path`` is required (relative paths are taken from the directory the command was started
    from)."""

    path: str = MISSING
    duplicates: str = "error"


@dataclass
class SplitConfig:
    """Fields shared by every split option: the strategy ``name`` and its ``seed``."""

    name: str = MISSING
    seed: int = 0


@dataclass
class FoldedSplitConfig(SplitConfig):
    """Fields shared by the k-fold strategies (those returning a list of splits): the number
    of folds and the ``fold`` the job evaluates (sweep it: ``split.fold=0,1,2,3,4``)."""

    n_folds: int = 5
    fold: int = 0


@dataclass
class ModelConfig:
    """Fields shared by every model option: its ``name`` in
    :data:`recoeval_tracking.models.MODELS`, and the ``search_space`` a sweep with a
    validation part tunes it over when it is a baseline (``{neighbours: [20, 50, 100]}``:
    each key a parameter of the model, each value the list of values to try; empty: the
    model's defaults only). Not passed to the model."""

    name: str = MISSING
    search_space: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# options derived from the registries
# ---------------------------------------------------------------------------------------------


def derive_schema(
    target: Callable[..., Any],
    *,
    option: str,
    discriminator: str,
    base: type,
    class_name: str,
    inputs: int = 0,
) -> type | None:
    """The schema dataclass of one registered class or function, from its signature.

    The fields are, in order: those of ``base`` (shared by the group; the discriminator
    ``discriminator`` first, defaulting to ``option``), then the config values of ``target``
    (:func:`recoeval_tracking.app._signatures.config_params`): types from the annotations,
    defaults from the signature (a required parameter is ``???``, a mapping default a fresh
    dict). A parameter that is also a field of ``base`` keeps the base's position and takes the
    signature's default. The first ``inputs`` parameters (a split's data) are skipped. Returns
    None when ``target`` needs a value a config cannot hold (a DataFrame).

    This is a small helper on :func:`dataclasses.make_dataclass` and :func:`inspect.signature`
    rather than hydra-zen's ``builds(target, populate_full_signature=True)``, the maintained
    library for the same job: ``builds`` adds a ``_target_`` field to every node (it makes
    configs for ``hydra.utils.instantiate``), which would add ``dataset._target_``,
    ``split._target_`` and ``model._target_`` to the composed config, hence to the job
    directory's ``config.yaml``, to ``.hydra/config.yaml`` and to the MLflow params; the job
    calls the registries by name instead. It would also be one more dependency.
    """
    params = config_params(target, inputs=inputs)
    if params is None:
        return None
    fields: list[tuple[str, Any, Any]] = [(discriminator, str, field(default=option))]
    fields += [(p.name, p.type, _default(p.default)) for p in params]
    cls = dataclasses.make_dataclass(class_name, fields, bases=(base,))
    cls.__module__ = __name__  # importable as recoeval_tracking.app.schema.<class_name>
    cls.__doc__ = (
        f"Schema of ``{discriminator}={option}``, derived from the signature of "
        f"``{target.__module__}.{target.__qualname__}``."
    )
    return cls


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return field(default=MISSING)
    if isinstance(value, Mapping):
        return field(default_factory=dict(value).copy)
    if isinstance(value, (list, tuple)):
        return field(default_factory=list(value).copy)
    if isinstance(value, os.PathLike):
        return field(default=os.fspath(value))
    return field(default=value)


def _returns_folds(target: Callable[..., Any]) -> bool:
    returned = inspect.signature(target, eval_str=True).return_annotation
    return typing.get_origin(returned) is list or returned is list


def _camel(option: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in option.split("_"))


def _derive_group(
    registry: Mapping[str, Any],
    group: str,
    discriminator: str,
    pick_base: Callable[[Any], type],
    inputs: int = 0,
) -> dict[str, type]:
    """The schema of every entry of ``registry`` that a config can describe, by name. Each class
    is bound in this module under its name, so that configs holding it can be pickled (the
    joblib launcher sends them to its workers)."""
    out: dict[str, type] = {}
    for option, target in registry.items():
        class_name = (
            f"{target.__name__}Config"
            if isinstance(target, type)
            else f"{_camel(option)}{group.capitalize()}Config"
        )
        node = derive_schema(
            target,
            option=option,
            discriminator=discriminator,
            base=pick_base(target),
            class_name=class_name,
            inputs=inputs,
        )
        if node is not None:
            globals()[class_name] = out[option] = node
    return out


def _derived_schemas() -> dict[str, dict[str, type]]:
    from ..data import DATASETS
    from ..models import MODELS
    from ..splitting import SPLITS

    def file_or_not(loader: Any) -> type:
        takes_path = any(p.name == "path" for p in config_params(loader) or ())
        return FileDatasetConfig if takes_path else DatasetConfig

    return {
        "dataset": _derive_group(DATASETS, "dataset", "kind", file_or_not),
        "split": _derive_group(
            SPLITS,
            "split",
            "name",
            lambda strategy: FoldedSplitConfig if _returns_folds(strategy) else SplitConfig,
            inputs=1,
        ),
        "model": _derive_group(MODELS, "model", "name", lambda cls: ModelConfig),
    }


# ---------------------------------------------------------------------------------------------
# metrics, tracking, top level
# ---------------------------------------------------------------------------------------------


@dataclass
class NegativesConfig:
    """A sampled-negative protocol (``metrics.negatives``): each user's positives ranked among
    ``n`` sampled negatives drawn ``by`` ``uniform`` or ``popularity`` with ``seed``
    (``per_positive``: n per positive, as RecBole does). ``n`` null (the default) means the full
    catalogue; the other keys left null take the defaults of
    :class:`recoeval_tracking.options.EvalOptions` (``uniform``, 0, false).

    A node with null fields rather than a null node: Hydra merges a command line's
    ``metrics.negatives={n:100,by:uniform}`` or ``metrics.negatives.n=50`` into a node, and
    cannot merge into a null one (OmegaConf fails with an AttributeError).
    """

    n: int | None = None
    by: str | None = None
    seed: int | None = None
    per_positive: bool | None = None


#: Metrics settings whose schema is a node of its own rather than the option's type.
_METRICS_NODES: dict[str, type] = {"negatives": NegativesConfig}


def _metrics_schema() -> type:
    """The schema of the ``metrics`` group, derived from the config fields of
    :class:`recoeval_tracking.options.EvalOptions` (the options are declared once, there).

    ``names`` lists registered metrics (``[all]`` for every one); with a ``profile`` (a key of
    :data:`recoeval_tracking.metrics.profiles.PROFILES`), ``names`` and ``ties`` left null take
    the profile's; ``names`` null without a profile means every metric. ``ties`` null means
    ``noise``. ``cumulative`` adds the @1..K curves; ``backend`` picks the engine backend.
    """
    hints = get_type_hints(EvalOptions)
    fields = [
        (key, _METRICS_NODES[key] | None, field(default_factory=_METRICS_NODES[key]))
        if key in _METRICS_NODES
        else (key, f.metadata.get("config_type", hints[f.name]), field(default=f.default))
        for f, key in config_fields()
    ]
    return make_dataclass(
        "MetricsConfig",
        fields,
        namespace={"__doc__": _metrics_schema.__doc__, "__module__": __name__},
    )


#: Arguments of :func:`recoeval_tracking.evaluate` (a dataclass made from ``EvalOptions``).
MetricsConfig = _metrics_schema()


@dataclass
class TrackingConfig:
    """Where runs are logged. ``enabled=false`` keeps results in the job directory only.

    ``uri`` null means the local SQLite store ``mlflow.db`` in the directory the command was
    started from; any other MLflow tracking URI (a server) may be given. ``precision`` is kept
    for existing configs: ``auto`` and ``exact`` both log every value exactly as computed
    (rounding is for text: run names, descriptions, the terminal).
    """

    enabled: bool = True
    uri: str | None = None
    experiment: str = "recoeval"
    precision: str = "auto"


@dataclass
class BackendConfig:
    """Where the evaluation runs (not to be confused with ``metrics.backend``, the engine's
    device kernels): ``kind=cpu`` in this process; ``kind=dask`` on a Dask cluster, the
    scheduler at ``address`` or, when it is null, a new local cluster of ``n_workers`` processes
    with ``threads_per_worker`` threads. ``shards`` (null: two per worker thread) sets how many
    parts the users are cut into; ``per_user_parts`` lets the workers write ``per_user.parquet``
    as a folder of Parquet parts (a shared file system) instead of sending it back; ``timeout``
    is how long to wait for the scheduler at ``address`` (seconds)."""

    kind: str = "cpu"
    address: str | None = None
    n_workers: int = 2
    threads_per_worker: int = 1
    shards: int | None = None
    per_user_parts: bool = False
    timeout: float = 30.0


@dataclass
class Config:
    """The whole job config.

    ``seed`` feeds every seeded step through interpolations in the group options (``${seed}``):
    ``seed=3`` changes data generation, split, model initialisation and tie-breaking at once.
    ``label`` is the run's display name (``label="CosKNN (ours)"``): its MLflow run name, the
    tag ``recoeval.label`` and ``label`` in the job folder's ``job.json``.
    ``nthreads`` (-1: every core) sets numba and BLAS threads for training and evaluation; the
    per-user metrics do not depend on it. ``progress`` is ``auto`` (bars only when stderr is a
    terminal), ``true`` (the evaluation bar even off a terminal; the ALS bar on a terminal) or
    ``false`` (no bars). ``plots`` writes ``plots/*.png`` into the job directory.
    ``objective`` names the result a search optimises (``ndcg_at_10``; its direction comes from
    the metric registry); the job returns its value (``hydra/sweeper=optuna``).

    ``baselines`` names model options that a sweep (``-m``) runs once each, with their own
    defaults, beside its grid: ``-m model=item_knn model.neighbours=10,50
    'baselines=[popularity,random]'`` runs 2 + 2 jobs, the baselines on the same data and split
    and without the grid's ``model.*`` overrides (once per value of any other swept key, such
    as ``seed=0,1``). The sweep sets ``baseline_rank`` on their jobs (0: the first baseline,
    which the sweep's leaderboard and the report compare against); null on every other job.

    A split with a validation part runs the protocol of a fair study
    (:mod:`recoeval_tracking.app.protocol`): ``phase`` is ``auto`` (validation, then test),
    ``selection`` (validation only: a sweep's job of one configuration among several) or
    ``test`` (the configuration a sweep chose); ``refit`` (true) refits the model on train +
    validation before the test; ``tune_baselines`` (true) gives every baseline of a sweep with
    a validation part the same number of configurations as the grid's model, drawn from the
    baseline's ``model.search_space``.
    """

    dataset: DatasetConfig = MISSING
    split: SplitConfig = MISSING
    # Any: an option of ours is checked against its own schema node (ModelConfig and the
    # class's signature); a config of the user's own holds `_target_` and whatever keys their
    # class takes (hydra.utils.instantiate builds it).
    model: Any = MISSING
    metrics: MetricsConfig = MISSING
    tracking: TrackingConfig = MISSING
    backend: BackendConfig = field(default_factory=BackendConfig)
    seed: int = 0
    label: str | None = None
    nthreads: int = -1
    progress: str = "auto"
    plots: bool = True
    objective: str | None = None
    baselines: list[str] = field(default_factory=list)
    baseline_rank: int | None = None
    phase: str = "auto"
    refit: bool = True
    tune_baselines: bool = True
    # module prefixes a model's `_target_` may name (None: any); app/user_model.py enforces it
    model_allow: list[str] | None = None


#: Schema node per (group, option); each ``configs/<group>/<option>.yaml`` extends its node.
SCHEMAS: dict[str, dict[str, type]] = {
    **_derived_schemas(),
    "metrics": {"metrics": MetricsConfig},
    "tracking": {"tracking": TrackingConfig},
    "backend": {"backend": BackendConfig},
}

SyntheticDatasetConfig = SCHEMAS["dataset"]["synthetic"]
CsvDatasetConfig = SCHEMAS["dataset"]["csv"]
ParquetDatasetConfig = SCHEMAS["dataset"]["parquet"]

_registered = False


def register_configs() -> None:
    """Store :class:`Config` as ``recoeval_schema`` and every node of :data:`SCHEMAS` as
    ``schema/<group>/<option>`` in Hydra's ConfigStore (once per process)."""
    global _registered
    if _registered:
        return
    cs = ConfigStore.instance()
    cs.store(name="recoeval_schema", node=Config)
    for group, nodes in SCHEMAS.items():
        for option, node in nodes.items():
            cs.store(group=f"schema/{group}", name=option, node=node)
    _registered = True


register_configs()
