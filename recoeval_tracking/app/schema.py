"""Structured-config schema of the ``recoeval-track`` application.

Every config group option in ``configs/`` starts its defaults list with the matching schema
node stored here (``/schema/<group>/<option>@_here_``), and ``configs/config.yaml`` starts with
``recoeval_schema`` (the :class:`Config` below). Hydra then checks every value against these
dataclasses when it composes the config: a misspelt key (``model.factor=32``) or a value of the
wrong type (``metrics.k=ten``) fails before any work starts, and ``recoeval-track`` turns the
error into a one-paragraph message (see :mod:`recoeval_tracking.app.cli`).

Registration happens once, when this module is imported (:func:`register_configs` is
idempotent). Only this package imports Hydra and OmegaConf; the job itself
(:func:`recoeval_tracking.app.pipeline.run_job`) receives the composed config as a plain dict.

Groups and options (the files in ``configs/``):

``dataset``
    ``synthetic`` (seeded generator, no file), ``movielens_100k``, ``movielens_1m``,
    ``movielens_latest``, ``csv``, ``parquet`` (these need ``dataset.path``). Every option also
    takes the preparation steps ``implicit`` (value conversion), ``min_user_interactions``,
    ``min_item_interactions`` and ``k_core``.
``split``
    one option per strategy of :data:`recoeval_tracking.splitting.SPLITS`; k-fold strategies
    evaluate fold ``split.fold`` (sweep it: ``split.fold=0,1,2,3,4``).
``model``
    one option per model of :data:`recoeval_tracking.models.MODELS`.
``metrics``
    ``default``, ``all`` and one per library profile of
    :data:`recoeval_tracking.metrics.profiles.PROFILES` (``recometrics``, ``hivemall``,
    ``recbole``, ``implicit``, ``ranx``, ``trec_eval``).
``tracking``
    ``local`` (SQLite ``mlflow.db`` in the directory the command was started from), ``server``
    (``MLFLOW_TRACKING_URI`` or ``http://127.0.0.1:5000``), ``none``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import Any, get_type_hints

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from ..options import EvalOptions, config_fields

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
    "TrackingConfig",
    "SCHEMAS",
    "register_configs",
]

# ---------------------------------------------------------------------------------------------
# dataset
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
    """Fields shared by every dataset option: the loader ``kind`` and the preparation steps.

    ``min_user_interactions`` / ``min_item_interactions`` run one filtering pass
    (:func:`~recoeval_tracking.data.filter_min_interactions`); ``k_core`` > 0 runs the iterated
    k-core (:func:`~recoeval_tracking.data.k_core`) with that threshold for users and items.
    """

    kind: str = MISSING
    name: str | None = None
    implicit: ImplicitConversionConfig = field(default_factory=ImplicitConversionConfig)
    min_user_interactions: int = 0
    min_item_interactions: int = 0
    k_core: int = 0


@dataclass
class SyntheticDatasetConfig(DatasetConfig):
    """:func:`recoeval_tracking.data.make_synthetic` arguments."""

    kind: str = "synthetic"
    n_users: int = 2000
    n_items: int = 1000
    n_interactions: int | None = None
    n_factors: int = 8
    popularity_exponent: float = 1.0
    activity_sigma: float = 1.0
    topic_concentration: float = 0.1
    noise: float = 0.1
    timestamps: bool = True
    seed: int = 0


@dataclass
class FileDatasetConfig(DatasetConfig):
    """A dataset read from a file: ``path`` is required (relative paths are taken from the
    directory the command was started from)."""

    path: str = MISSING
    duplicates: str = "error"


@dataclass
class CsvDatasetConfig(FileDatasetConfig):
    """:func:`recoeval_tracking.data.load_csv` arguments."""

    kind: str = "csv"
    columns: dict[str, Any] | None = None
    sep: str = ","
    header: bool = True
    encoding: str = "utf-8"


@dataclass
class ParquetDatasetConfig(FileDatasetConfig):
    """:func:`recoeval_tracking.data.load_parquet` arguments."""

    kind: str = "parquet"
    columns: dict[str, str] | None = None


# ---------------------------------------------------------------------------------------------
# split
# ---------------------------------------------------------------------------------------------

@dataclass
class SplitConfig:
    """Fields shared by every split option: the strategy ``name`` and its ``seed``."""

    name: str = MISSING
    seed: int = 0


@dataclass
class RandomSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.random_holdout`; ``test_fraction`` null means 0.2
    unless ``test_count`` is given."""

    name: str = "random"
    test_fraction: float | None = None
    test_count: int | None = None
    validation_fraction: float | None = None
    validation_count: int | None = None
    min_train: int = 1


@dataclass
class LeaveOneOutSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.leave_one_out`."""

    name: str = "leave_one_out"
    order: str = "random"
    min_train: int = 1
    validation: bool = False


@dataclass
class LeaveNOutSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.leave_n_out`."""

    name: str = "leave_n_out"
    n: int = 1
    order: str = "random"
    min_train: int = 1
    validation_n: int = 0


@dataclass
class TemporalGlobalSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.temporal_global`; ``quantile`` null means 0.8 unless
    ``cut`` is given."""

    name: str = "temporal_global"
    cut: int | None = None
    quantile: float | None = None
    validation_cut: int | None = None
    validation_quantile: float | None = None


@dataclass
class TemporalUserSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.temporal_user`."""

    name: str = "temporal_user"
    test_fraction: float | None = None
    test_count: int | None = None
    min_train: int = 1


@dataclass
class KFoldSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.kfold`; the job evaluates fold ``fold``."""

    name: str = "kfold"
    n_folds: int = 5
    fold: int = 0


@dataclass
class UserKFoldSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.user_kfold`; the job evaluates fold ``fold``."""

    name: str = "user_kfold"
    n_folds: int = 5
    fold: int = 0
    test_fraction: float | None = None
    test_count: int | None = None
    min_train: int = 1


@dataclass
class RecometricsSplitConfig(SplitConfig):
    """:func:`~recoeval_tracking.splitting.recometrics_split` (recometrics'
    ``split_reco_train_test``)."""

    name: str = "recometrics"
    seed: int = 1
    split_type: str = "separated"
    users_test_fraction: float | None = 0.1
    max_test_users: int | None = 10000
    items_test_fraction: float = 0.3
    min_items_pool: int = 2
    min_pos_test: int = 1
    consider_cold_start: bool = False


# ---------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------

@dataclass
class ModelConfig:
    """Fields shared by every model option: its ``name`` in
    :data:`recoeval_tracking.models.MODELS`."""

    name: str = MISSING


@dataclass
class ALSModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.ALSModel` (implicit-feedback ALS, Hu, Koren & Volinsky
    2008, conjugate-gradient updates)."""

    name: str = "als"
    factors: int = 16
    regularization: float = 0.1
    alpha: float = 1.0
    iterations: int = 15
    cg_steps: int = 3
    seed: int = 0
    compute_loss: bool = False


@dataclass
class PopularityModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.PopularityModel` (item biases only)."""

    name: str = "popularity"
    weighted: bool = False


@dataclass
class RandomModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.RandomModel`."""

    name: str = "random"
    seed: int = 0


@dataclass
class ItemKNNModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.ItemKNNModel` (cosine item-item neighbours)."""

    name: str = "item_knn"
    neighbours: int = 100
    shrinkage: float = 0.0


@dataclass
class FactorsFileModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.FactorsFileModel`: ``path`` (an ``.npz``) or
    ``user_factors`` + ``item_factors`` (``.npy``) and optional ``item_biases``."""

    name: str = "factors_file"
    path: str | None = None
    user_factors: str | None = None
    item_factors: str | None = None
    item_biases: str | None = None


@dataclass
class ImplicitModelConfig(ModelConfig):
    """:class:`~recoeval_tracking.models.ImplicitModel`: a model of the ``implicit`` library;
    ``params`` are its class's keyword arguments (``factors``, ``iterations``...)."""

    name: str = "implicit"
    model_name: str = "als"
    params: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# metrics, tracking, top level
# ---------------------------------------------------------------------------------------------

def _metrics_schema() -> type:
    """The schema of the ``metrics`` group, derived from the config fields of
    :class:`recoeval_tracking.options.EvalOptions` (the options are declared once, there).

    ``names`` lists registered metrics (``[all]`` for every one); with a ``profile`` (a key of
    :data:`recoeval_tracking.metrics.profiles.PROFILES`), ``names`` and ``ties`` left null take
    the profile's; ``names`` null without a profile means every metric. ``ties`` null means
    ``noise``. ``cumulative`` adds the @1..K curves; ``backend`` picks the engine backend.
    """
    hints = get_type_hints(EvalOptions)
    fields = [(key, f.metadata.get("config_type", hints[f.name]), field(default=f.default))
              for f, key in config_fields()]
    return make_dataclass("MetricsConfig", fields,
                          namespace={"__doc__": _metrics_schema.__doc__, "__module__": __name__})


#: Arguments of :func:`recoeval_tracking.evaluate` (a dataclass made from ``EvalOptions``).
MetricsConfig = _metrics_schema()


@dataclass
class TrackingConfig:
    """Where runs are logged. ``enabled=false`` keeps results in the job directory only.

    ``uri`` null means the local SQLite store ``mlflow.db`` in the directory the command was
    started from; any other MLflow tracking URI (a server) may be given.
    """

    enabled: bool = True
    uri: str | None = None
    experiment: str = "recoeval"


@dataclass
class Config:
    """The whole job config.

    ``seed`` feeds every seeded step through interpolations in the group options (``${seed}``):
    ``seed=3`` changes data generation, split, model initialisation and tie-breaking at once.
    ``nthreads`` (-1: every core) sets numba and BLAS threads for training and evaluation; the
    per-user metrics do not depend on it. ``progress`` is ``auto`` (bars only when stderr is a
    terminal), ``true`` (the evaluation bar even off a terminal; the ALS bar on a terminal) or
    ``false`` (no bars). ``plots`` writes ``plots/*.png`` into the job directory.
    """

    dataset: DatasetConfig = MISSING
    split: SplitConfig = MISSING
    model: ModelConfig = MISSING
    metrics: MetricsConfig = MISSING
    tracking: TrackingConfig = MISSING
    seed: int = 0
    nthreads: int = -1
    progress: str = "auto"
    plots: bool = True


#: Schema node per (group, option); each ``configs/<group>/<option>.yaml`` extends its node.
SCHEMAS: dict[str, dict[str, type]] = {
    "dataset": {
        "synthetic": SyntheticDatasetConfig,
        "movielens_100k": FileDatasetConfig,
        "movielens_1m": FileDatasetConfig,
        "movielens_latest": FileDatasetConfig,
        "csv": CsvDatasetConfig,
        "parquet": ParquetDatasetConfig,
    },
    "split": {
        "random": RandomSplitConfig,
        "leave_one_out": LeaveOneOutSplitConfig,
        "leave_n_out": LeaveNOutSplitConfig,
        "temporal_global": TemporalGlobalSplitConfig,
        "temporal_user": TemporalUserSplitConfig,
        "kfold": KFoldSplitConfig,
        "user_kfold": UserKFoldSplitConfig,
        "recometrics": RecometricsSplitConfig,
    },
    "model": {
        "als": ALSModelConfig,
        "popularity": PopularityModelConfig,
        "random": RandomModelConfig,
        "item_knn": ItemKNNModelConfig,
        "factors_file": FactorsFileModelConfig,
        "implicit": ImplicitModelConfig,
    },
    "metrics": {"metrics": MetricsConfig},
    "tracking": {"tracking": TrackingConfig},
}

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
