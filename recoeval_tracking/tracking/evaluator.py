"""``mlflow.models.evaluate(..., model_type="recommender", evaluators="recoeval")``.

:class:`RecoevalEvaluator` is registered with MLflow under the name ``recoeval`` through the
``mlflow.model_evaluator`` entry-point group (``pyproject.toml``), so installing this package is
enough for MLflow to find it. It evaluates a full-catalogue ranking with
:func:`recoeval_tracking.evaluate` and logs into the evaluation's run exactly what a
``recoeval-track`` job logs, through the same code: the results are written to a job directory
(:func:`recoeval_tracking.jobdir.write_job_dir`, in a temporary folder) and uploaded by
:func:`recoeval_tracking.tracking.runs.log_results` into the run MLflow opened.

**data** (a DataFrame, or an MLflow dataset made from one): one row per (user, item) pair, with
the ids in ``user_col`` and ``item_col`` (default ``user`` and ``item``) and the relevance in the
``targets`` column: a row whose target is > 0 is a test positive (the value is its NDCG gain),
other rows are candidates only. The evaluated users are the users of ``data``. Scores come from
either

* a **static ranking**: ``predictions=`` names a column of scores (higher is better) or, with
  ``evaluator_config["prediction_type"] = "rank"``, of ranks (1 is best). List every item a user
  did not train on to evaluate the whole ranking; when some are missing, the listed pairs are
  evaluated as ranked top-K lists (top-K metrics only) and a warning says so; or
* a **model** (a pyfunc model, its URI, or a function of a DataFrame): its ``predict`` receives
  ``DataFrame({user_col: [ids of a block of users]})`` and returns one row of scores per user, in
  the same order, for every item: a DataFrame whose columns are the item ids, or a 2-d array whose
  columns follow ``evaluator_config["item_ids"]``. The catalogue is those items; scores of a
  user's train items are ignored. Without ``targets`` every row of ``data`` is a positive of
  gain 1.

**evaluator_config**: the evaluation options of :class:`recoeval_tracking.options.EvalOptions`
under their field names (``k``, ``metrics``, ``profile``, ``ties``, ``cumulative``, ``seed``...,
as :func:`recoeval_tracking.evaluate` takes them), and ``train`` (the pairs to exclude from each
ranking: a DataFrame or the path of a CSV or Parquet file with ``user_col`` and ``item_col``),
``user_col``, ``item_col``, ``prediction_type``, ``item_ids`` and ``plots`` (default True).
Unknown keys are refused with the list of known ones.

**Result**: ``metrics`` holds ``metrics.json`` (means at K, their 95% bounds, catalogue metrics,
users evaluated and NaN by reason, seconds), the keys and values logged at step 0; the @1..K
curves are logged with ``step = k`` and returned as the ``curves`` artifact. ``artifacts`` holds
``per_user``, ``curves``, ``metrics``, ``definitions``, ``dataset``, ``config``, ``job`` and the
plots (``plots/curves``...), each with its URI in the run and its content.
:func:`metric_threshold` builds MLflow's ``MetricThreshold`` with the registry's direction, for
``mlflow.validate_evaluation_results`` (thresholds, and comparison with a baseline's result).

The evaluator in two parts, one concept: **the inputs** (:func:`static_inputs`,
:func:`model_inputs`, :func:`read_train`: frames to the train and test matrices and the score
source; rows with a target of 0, a negative one or NaN are candidates only, a static ranking's
catalogue is every item of ``data`` and of the evaluated users' train rows, train rows of users
outside ``data`` and items the model does not score are ignored), which raise
:class:`~recoeval_tracking.InputError`; and **the MLflow evaluator** (:class:`RecoevalEvaluator`,
:func:`read_config`), which turns those errors into an ``MlflowException`` naming the key.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from mlflow.exceptions import MlflowException
from mlflow.models.evaluation.artifacts import (
    CsvEvaluationArtifact,
    ImageEvaluationArtifact,
    JsonEvaluationArtifact,
    ParquetEvaluationArtifact,
    TextEvaluationArtifact,
)
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from .._validation import InputError, describe, param_error
from ..data import Interactions, factorize_sorted
from ..options import EvalOptions, config_fields

__all__ = [
    "MODEL_TYPE",
    "NAME",
    "EvaluatorConfig",
    "RecoevalEvaluator",
    "metric_threshold",
    "read_config",
    # its inputs
    "PREDICTION_TYPES",
    "EvalInputs",
    "model_inputs",
    "read_train",
    "static_inputs",
]

# ---------------------------------------------------------------------------------------------
# The inputs: frames to the train and test matrices and a score source (InputError, no MLflow)
# ---------------------------------------------------------------------------------------------

#: How a ``predictions`` column is read: a score (higher is better) or a rank (1 is best).
PREDICTION_TYPES = ("score", "rank")


@dataclass
class EvalInputs:
    """What :func:`recoeval_tracking.evaluate` receives, and the ``dataset.json`` record."""

    train: Interactions
    test: Interactions
    source: dict[str, Any]
    record: dict[str, Any] = field(default_factory=dict)


def _bad(what: str, expected: str, got: str, fix: str = "") -> InputError:
    return InputError(f"{what} must be {expected}. Got {got} instead." + (f" {fix}" if fix else ""))


def _pair(user: Any, item: Any) -> str:
    """``(user, item)`` as plain Python values."""
    plain = [x.item() if isinstance(x, np.generic) else x for x in (user, item)]
    return f"({plain[0]!r}, {plain[1]!r})"


def id_column(frame: pd.DataFrame, col: str, key: str, where: str) -> np.ndarray:
    """The ids of column ``col`` of ``frame`` (named by the config ``key``), without missing."""
    if col not in frame.columns:
        raise _bad(
            f"evaluator_config['{key}']",
            f"a column of {where}",
            f"{col!r} with columns {[str(c) for c in frame.columns]}",
        )
    values = frame[col]
    if values.isna().any():
        raise _bad(
            f"The '{col}' column of {where}",
            "free of missing ids",
            f"{int(values.isna().sum())} missing ids",
        )
    return values.to_numpy()


def numbers(values: Any, what: str) -> np.ndarray:
    """``values`` as float64, or the error naming ``what``."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise _bad(what, "numeric", f"values of dtype {arr.dtype}")
    return arr.astype(np.float64)


def read_train(train: Any, user_col: str, item_col: str) -> pd.DataFrame | None:
    """``evaluator_config['train']`` as a frame of ``user_col`` and ``item_col`` (or None)."""
    if train is None:
        return None
    if isinstance(train, (str, Path)):
        path = Path(train)
        if not path.is_file():
            raise _bad(
                "evaluator_config['train']",
                "a DataFrame or the path of a CSV or Parquet file",
                f"{str(train)!r}, which is not a file",
            )
        suffix = path.suffix.lower()
        if suffix in (".parquet", ".pq"):
            train = pd.read_parquet(path, columns=[user_col, item_col])
        elif suffix in (".csv", ".tsv", ".txt"):
            train = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
        else:
            raise _bad(
                "evaluator_config['train']",
                "a path ending in .csv, .tsv, .parquet or .pq",
                repr(str(train)),
            )
    if not isinstance(train, pd.DataFrame):
        raise _bad(
            "evaluator_config['train']",
            "a pandas DataFrame or the path of a CSV or Parquet file",
            describe(train),
        )
    users = id_column(train, user_col, "user_col", "evaluator_config['train']")
    items = id_column(train, item_col, "item_col", "evaluator_config['train']")
    return pd.DataFrame({"user": users, "item": items})


def _positives(targets: np.ndarray | None, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Mask of the positive rows and their gains (all rows, gain 1, without targets)."""
    if targets is None:
        return np.ones(n_rows, dtype=bool), np.ones(n_rows, dtype=np.float64)
    values = numbers(targets, "The targets column of data")
    mask = values > 0  # NaN compares False: a candidate
    return mask, values[mask]


def _train_rows(
    train: pd.DataFrame | None, user_ids: np.ndarray, items: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices and item ids of the train pairs of the evaluated users."""
    if train is None or not len(train):
        return np.zeros(0, dtype=np.int64), items[:0]
    rows = pd.Index(user_ids).get_indexer(train["user"].to_numpy())
    keep = rows >= 0
    if not keep.any():
        raise _bad(
            "The user ids of evaluator_config['train']",
            "ids of users in data",
            f"no id in common (data has e.g. {describe(user_ids[0])}, train has e.g. "
            f"{describe(train['user'].iloc[0])})",
            "Give both the same id type.",
        )
    return rows[keep].astype(np.int64), train["item"].to_numpy()[keep]


def _catalogue(items: np.ndarray, tr_items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted item ids of data and train, and the item index of each of their rows."""
    both = pd.concat([pd.Series(items), pd.Series(tr_items)], ignore_index=True).to_numpy()
    try:
        return factorize_sorted(both)
    except TypeError:
        raise _bad(
            "The item ids of data and evaluator_config['train']",
            "of one type",
            f"e.g. {describe(items[0])} and {describe(tr_items[0])}",
        ) from None


def _csr(
    rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> sp.csr_array:
    m = sp.csr_array((values, (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.sort_indices()
    return m


def _build(
    user_ids: np.ndarray,
    item_ids: np.ndarray,
    pos: tuple[np.ndarray, np.ndarray, np.ndarray],
    tr: tuple[np.ndarray, np.ndarray],
    name: str,
) -> tuple[Interactions, Interactions]:
    """Train and test interactions on one id map; duplicate positives and positives that are in
    train are refused."""
    m, n = len(user_ids), len(item_ids)
    pu, pi, pv = pos
    key = pu * np.int64(n) + pi
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        k = int(uniq[np.argmax(counts > 1)])
        raise _bad(
            "The positive rows of data (target > 0)",
            "one per (user, item) pair",
            f"{int((counts > 1).sum())} repeated pairs, e.g. "
            + _pair(user_ids[k // n], item_ids[k % n]),
        )
    tkey = np.unique(tr[0] * np.int64(n) + tr[1])
    clash = np.isin(key, tkey)
    if clash.any():
        k = int(key[np.argmax(clash)])
        raise _bad(
            "The positive rows of data (target > 0)",
            "pairs that are not in evaluator_config['train']",
            f"{int(clash.sum())} pairs in train, e.g. " + _pair(user_ids[k // n], item_ids[k % n]),
            "An item a user was trained on cannot be a test positive.",
        )
    train = _csr(tkey // n, tkey % n, np.ones(len(tkey)), (m, n))
    test = _csr(pu, pi, pv, (m, n))
    return (
        Interactions(train, user_ids, item_ids, name=f"{name} (train)"),
        Interactions(test, user_ids, item_ids, name=name),
    )


def _record(train: Interactions, test: Interactions, **extra: Any) -> dict[str, Any]:
    return {
        "name": test.name,
        "source": "mlflow.models.evaluate",
        "n_users": test.n_users,
        "n_items": test.n_items,
        "test_interactions": test.nnz,
        "train_interactions": train.nnz,
        "data_fingerprint": test.fingerprint(),
        "train_fingerprint": train.fingerprint(),
        **extra,
    }


def static_inputs(
    users: np.ndarray,
    items: np.ndarray,
    targets: np.ndarray | None,
    predictions: Any,
    prediction_type: str,
    train: pd.DataFrame | None,
    name: str,
) -> EvalInputs:
    """Inputs for a static ranking: the ``predictions`` of each listed (user, item) pair."""
    if targets is None:
        raise _bad(
            "The targets argument of mlflow.models.evaluate",
            "the name of the relevance "
            "column of data for a static ranking (target > 0: a test positive)",
            "None",
        )
    preds = numbers(predictions, "The predictions column of data")
    score = -preds if prediction_type == "rank" else preds
    u, user_ids = factorize_sorted(users)
    tr_u, tr_items = _train_rows(train, user_ids, np.asarray(items))
    codes, item_ids = _catalogue(np.asarray(items), tr_items)
    i, tr_i = codes[: len(users)], codes[len(users) :]
    m, n = len(user_ids), len(item_ids)
    key = u * np.int64(n) + i
    if len(np.unique(key)) < len(key):
        raise _bad(
            "The rows of data",
            "one per (user, item) pair for a static ranking",
            f"{len(key) - len(np.unique(key))} repeated pairs",
        )
    mask, gains = _positives(targets, len(users))
    tr_, te_ = _build(user_ids, item_ids, (u[mask], i[mask], gains), (tr_u, tr_i), name)
    dense = np.zeros((m, n), dtype=np.float64)
    scored = np.zeros((m, n), dtype=bool)
    dense[u, i] = score
    scored[u, i] = True
    scored[tr_.row_of_entries(), tr_.matrix.indices] = True
    missing = int((~scored).sum())
    if not missing:
        return EvalInputs(
            tr_, te_, {"scores": dense}, _record(tr_, te_, input="predictions", whole_ranking=True)
        )
    warnings.warn(
        f"recoeval evaluator: {missing} (user, item) pairs of the catalogue "
        f"({n} items) have no prediction and are not in train, for "
        f"{int((~scored).any(axis=1).sum())} of {m} users: the predictions are "
        "evaluated as ranked top-K lists (top-K metrics only). List every item a user "
        "did not train on to evaluate the whole ranking.",
        UserWarning,
        stacklevel=3,
    )
    has = ~np.isnan(preds)
    ranked = pd.DataFrame(
        {"user": user_ids[u[has]], "item": item_ids[i[has]], prediction_type: preds[has]}
    )
    return EvalInputs(
        tr_,
        te_,
        {"ranked": ranked},
        _record(
            tr_, te_, input="predictions", whole_ranking=False, pairs_without_prediction=missing
        ),
    )


class _ModelScorer:
    """``scorer(user_indices)`` for the engine: the model's ``predict`` on a block of users.

    One first call on one user tells the catalogue: the columns of the DataFrame it returns, or
    ``item_ids`` when given.
    """

    def __init__(
        self,
        predict: Callable[[pd.DataFrame], Any],
        user_ids: np.ndarray,
        user_col: str,
        item_ids: Sequence[Any] | None,
    ):
        self.predict, self.user_ids, self.user_col = predict, user_ids, user_col
        first = self.predict(pd.DataFrame({user_col: user_ids[:1]}))
        self.columns = None
        if item_ids is not None:
            self.items = np.asarray(list(item_ids))
        elif isinstance(first, pd.DataFrame):
            self.items, self.columns = np.asarray(first.columns), first.columns
        else:
            raise _bad(
                "The output of the model's predict",
                "a DataFrame whose columns are the item ids",
                describe(first),
                "Or set evaluator_config['item_ids'] to the item id of each column.",
            )
        if pd.Index(self.items).has_duplicates:
            raise _bad("The item ids of the model's output", "distinct", "repeated ids")
        self._scores(first, 1)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        out = self.predict(pd.DataFrame({self.user_col: self.user_ids[rows]}))
        return self._scores(out, len(rows))

    def _scores(self, out: Any, n_rows: int) -> np.ndarray:
        if (
            self.columns is not None
            and isinstance(out, pd.DataFrame)
            and not out.columns.equals(self.columns)
        ):
            if set(out.columns) != set(self.columns):
                raise _bad(
                    "Every output of the model's predict",
                    "a DataFrame with the same item columns",
                    f"columns {list(out.columns)[:5]}... after {list(self.columns)[:5]}...",
                )
            out = out[self.columns]
        arr = np.asarray(out)
        if arr.shape != (n_rows, len(self.items)) or arr.dtype.kind not in "biuf":
            raise _bad(
                "The output of the model's predict",
                "one row of numeric item scores per "
                f"user of its input: shape ({n_rows}, {len(self.items)})",
                describe(arr),
            )
        return arr.astype(np.float64, copy=False)


def model_inputs(
    users: np.ndarray,
    items: np.ndarray,
    targets: np.ndarray | None,
    predict: Callable[[pd.DataFrame], Any],
    user_col: str,
    item_ids: Sequence[Any] | None,
    train: pd.DataFrame | None,
    name: str,
) -> EvalInputs:
    """Inputs for a model scoring every item of its catalogue for blocks of users."""
    u, user_ids = factorize_sorted(users)
    scorer = _ModelScorer(predict, user_ids, user_col, item_ids)
    catalogue = pd.Index(scorer.items)
    mask, gains = _positives(targets, len(users))
    i = catalogue.get_indexer(np.asarray(items)[mask])
    if (i < 0).any():
        bad = np.asarray(items)[mask][np.argmax(i < 0)]
        raise _bad(
            "The items of the positive rows of data",
            "items that the model scores (the columns of its output)",
            f"{int((i < 0).sum())} unknown items, e.g. {describe(bad)}",
        )
    tr_u, tr_items = _train_rows(train, user_ids, scorer.items)
    tr_i = catalogue.get_indexer(tr_items)
    known = tr_i >= 0  # train items the model does not score are in no pool anyway
    if len(tr_i) and not known.any():
        raise _bad(
            "The item ids of evaluator_config['train']",
            "items the model scores (the columns of its output)",
            f"no item in common (e.g. {describe(tr_items[0])} and {describe(scorer.items[0])})",
            "Give both the same id type.",
        )
    tr_, te_ = _build(user_ids, scorer.items, (u[mask], i, gains), (tr_u[known], tr_i[known]), name)
    return EvalInputs(
        tr_, te_, {"scorer": scorer}, _record(tr_, te_, input="model", whole_ranking=True)
    )


# ---------------------------------------------------------------------------------------------
# The MLflow evaluator
# ---------------------------------------------------------------------------------------------

#: The evaluator's name in ``mlflow.models.evaluate(evaluators=...)``.
NAME = "recoeval"
#: The ``model_type`` it evaluates.
MODEL_TYPE = "recommender"
#: The evaluation options ``evaluator_config`` may set: the fields of EvalOptions.
OPTION_KEYS = tuple(f.name for f in dataclasses.fields(EvalOptions))
#: MLflow's own key (it renames ``targets`` and ``predictions`` before the evaluator runs).
_MLFLOW_KEYS = ("col_mapping",)
_FUNC = "evaluate"


@dataclasses.dataclass(frozen=True)
class EvaluatorConfig:
    """``evaluator_config`` read: the evaluation options and the keys about the data."""

    options: EvalOptions
    train: Any = None
    user_col: str = "user"
    item_col: str = "item"
    prediction_type: str = "score"
    item_ids: Sequence[Any] | None = None
    plots: bool = True


#: The keys of ``evaluator_config`` about the data (the fields of EvaluatorConfig).
DATA_KEYS = tuple(f.name for f in dataclasses.fields(EvaluatorConfig) if f.name != "options")


def _error(message: str) -> MlflowException:
    return MlflowException.invalid_parameter_value(f"recoeval evaluator: {message}")


def _config_message(message: str) -> str:
    """``The 'k' parameter of evaluate must be...`` -> ``evaluator_config['k'] must be...``."""

    def name(match: re.Match) -> str:
        key = match[1]
        return f"evaluator_config['{key}']" if key in (*OPTION_KEYS, *DATA_KEYS) else match[0]

    return re.sub(rf"The '(\w+)' parameter of {_FUNC}\b", name, message)


@contextlib.contextmanager
def _as_mlflow_errors() -> Iterator[None]:
    """The project's input errors as ``MlflowException`` (INVALID_PARAMETER_VALUE)."""
    try:
        yield
    except InputError as exc:
        raise _error(_config_message(str(exc))) from exc


def _check_data_keys(values: Mapping[str, Any]) -> None:
    for key in ("user_col", "item_col"):
        if key in values and not (isinstance(values[key], str) and values[key]):
            raise param_error(key, _FUNC, "a column name (a non-empty str)", values[key])
    if values.get("prediction_type", "score") not in PREDICTION_TYPES:
        raise param_error(
            "prediction_type", _FUNC, f"one of {list(PREDICTION_TYPES)}", values["prediction_type"]
        )
    item_ids = values.get("item_ids")
    if item_ids is not None and (
        isinstance(item_ids, (str, bytes, Mapping)) or not hasattr(item_ids, "__len__")
    ):
        raise param_error(
            "item_ids",
            _FUNC,
            "a list of item ids (one per column of the model's output) or None",
            item_ids,
        )
    if not isinstance(values.get("plots", True), bool):
        raise param_error("plots", _FUNC, "a bool", values["plots"])


def read_config(evaluator_config: Mapping[str, Any] | None) -> EvaluatorConfig:
    """Read and check ``evaluator_config``: unknown keys and bad values raise an
    ``MlflowException`` naming the key, what was expected and what was got."""
    config = {} if evaluator_config is None else evaluator_config
    if not isinstance(config, Mapping):
        raise _error(f"evaluator_config must be a dict of options. Got {describe(config)} instead.")
    unknown = sorted(str(k) for k in config if k not in (*OPTION_KEYS, *DATA_KEYS, *_MLFLOW_KEYS))
    if unknown:
        raise _error(
            f"evaluator_config has unknown keys {unknown}. Known keys: the evaluation "
            f"options {list(OPTION_KEYS)} (as recoeval_tracking.evaluate takes them) "
            f"and {list(DATA_KEYS)} about the data."
        )
    with _as_mlflow_errors():
        _check_data_keys(config)
        options = EvalOptions(**{k: v for k, v in config.items() if k in OPTION_KEYS})
        _check_options(options)
    return EvaluatorConfig(options=options, **{k: config[k] for k in DATA_KEYS if k in config})


def _check_options(options: EvalOptions) -> None:
    """What can be checked before the data is known (``k`` against the catalogue comes later)."""
    from ..metrics.evaluate import TIE_POLICIES
    from ..metrics.profiles import apply_profile
    from ..metrics.registry import resolve_metrics

    resolved = apply_profile(options.checked(_FUNC), _FUNC)
    resolve_metrics(resolved.metrics, _FUNC)
    if resolved.ties not in TIE_POLICIES:
        raise param_error("ties", _FUNC, f"one of {list(TIE_POLICIES)}", resolved.ties)


def metric_threshold(
    key: str,
    *,
    threshold: float | None = None,
    min_absolute_change: float | None = None,
    min_relative_change: float | None = None,
):
    """MLflow's ``MetricThreshold`` for the logged metric ``key`` (``ndcg_at_10``, ``mpr``,
    ``coverage_at_10``...), with ``greater_is_better`` from the metric registry.

    Use it with ``mlflow.validate_evaluation_results({key: metric_threshold(key, ...)},
    candidate_result, baseline_result)``.
    """
    from mlflow.models import MetricThreshold

    from ..metrics.registry import greater_is_better

    return MetricThreshold(
        threshold=threshold,
        min_absolute_change=min_absolute_change,
        min_relative_change=min_relative_change,
        greater_is_better=greater_is_better(key),
    )


# ---------------------------------------------------------------------------------------------
# the evaluation
# ---------------------------------------------------------------------------------------------


def _check_call(
    model: Any, dataset: Any, predictions: Any, extra_metrics: Any, custom_artifacts: Any
) -> None:
    """Arguments of ``mlflow.models.evaluate`` that this evaluator cannot honour."""
    for name, value in (("extra_metrics", extra_metrics), ("custom_artifacts", custom_artifacts)):
        if value:
            raise _error(
                f"{name} must be None: MLflow's per-row metrics and artifacts do not "
                f"apply to full rankings. Got {describe(value)} instead. Compute more "
                "from result.artifacts['per_user'].content."
            )
    if model is not None and predictions is not None:
        raise _error(
            "predictions must be None when a model is given (the model scores every "
            f"item). Got {predictions!r} instead."
        )
    if model is None and not getattr(dataset, "has_predictions", False):
        raise _error(
            "a source of scores is needed: a model, or predictions= naming the column "
            "of data that holds the scores (or ranks) of a static ranking. Got neither."
        )
    if not isinstance(getattr(dataset, "features_data", None), pd.DataFrame):
        raise _error(
            "data must be a pandas DataFrame (or an MLflow dataset made from one) with "
            "user and item columns. Got "
            f"{describe(getattr(dataset, 'features_data', dataset))} instead."
        )


def _inputs(dataset: Any, model: Any, cfg: EvaluatorConfig) -> EvalInputs:
    """The train and test interactions and the score source, from MLflow's dataset."""
    frame = dataset.features_data
    users = id_column(frame, cfg.user_col, "user_col", "data")
    items = id_column(frame, cfg.item_col, "item_col", "data")
    if not len(users):
        raise InputError("data must hold at least one row. Got an empty DataFrame instead.")
    targets = dataset.labels_data if dataset.has_targets else None
    train = read_train(cfg.train, cfg.user_col, cfg.item_col)
    name = str(dataset.name)
    if model is None:
        return static_inputs(
            users, items, targets, dataset.predictions_data, cfg.prediction_type, train, name
        )
    return model_inputs(
        users, items, targets, model.predict, cfg.user_col, cfg.item_ids, train, name
    )


def _plain(value: Any) -> Any:
    """A config value as YAML and params take it (tuples and arrays as lists)."""
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return list(value.tolist() if hasattr(value, "tolist") else value)
    return value


def _config_record(cfg: EvaluatorConfig, dataset: Any, inputs: EvalInputs) -> dict[str, Any]:
    """The job's ``config.yaml`` (and params): the ``metrics`` section under the app's config
    keys, and how the evaluator read the data."""
    options = cfg.options
    metrics = {key: _plain(getattr(options, f.name)) for f, key in config_fields()}
    train = cfg.train
    if isinstance(train, pd.DataFrame):
        train = f"DataFrame ({len(train)} rows)"
    evaluator = {
        "name": NAME,
        "input": inputs.record.get("input"),
        "user_col": cfg.user_col,
        "item_col": cfg.item_col,
        "targets": dataset.targets_name,
        "predictions": dataset.predictions_name
        if inputs.record.get("input") == "predictions"
        else None,
        "prediction_type": cfg.prediction_type,
        "train": None if train is None else str(train),
        "nthreads": options.nthreads,
    }
    return {"metrics": metrics, "evaluator": evaluator}


_ARTIFACT_TYPES = {
    ".parquet": ParquetEvaluationArtifact,
    ".csv": CsvEvaluationArtifact,
    ".json": JsonEvaluationArtifact,
    ".png": ImageEvaluationArtifact,
    ".yaml": TextEvaluationArtifact,
}


def _artifacts(job_path: Path, artifact_uri: str) -> dict[str, Any]:
    """The uploaded files of the job directory as MLflow evaluation artifacts, named by their
    path without suffix (``per_user``, ``plots/curves``), with their content loaded."""
    from ..jobdir.markers import FILES, UPLOADED_FILES

    files = [job_path / name for name in UPLOADED_FILES]
    plots = job_path / FILES["plots"]
    files += sorted(plots.glob("*.png")) if plots.is_dir() else []
    out = {}
    for path in files:
        if not path.is_file() or path.suffix not in _ARTIFACT_TYPES:
            continue
        rel = path.relative_to(job_path).as_posix()
        artifact = _ARTIFACT_TYPES[path.suffix](uri=f"{artifact_uri.rstrip('/')}/{rel}")
        artifact._load(str(path))
        out[rel.rsplit(".", 1)[0]] = artifact
    return out


def _log(
    results: Any, run_id: str, cfg: EvaluatorConfig, dataset: Any, inputs: EvalInputs
) -> EvaluationResult:
    """Write the job directory, log it into ``run_id`` as the app logs a job, and return what
    was logged as an ``EvaluationResult``."""
    import mlflow

    from ..jobdir import read_job_dir
    from .client import _client
    from .runs import log_results

    uri = mlflow.get_tracking_uri()
    with tempfile.TemporaryDirectory(prefix="recoeval-eval-") as tmp:
        # exact: MLflow logs the returned metrics into the same run again, as computed
        log_results(
            results,
            run_id=run_id,
            tracking_uri=uri,
            config=_config_record(cfg, dataset, inputs),
            dataset=inputs.record,
            job_dir=tmp,
            plots=cfg.plots,
            precision="exact",
        )
        job = read_job_dir(tmp, per_user=False)
        artifact_uri = _client(uri).get_run(run_id).info.artifact_uri
        artifacts = _artifacts(Path(tmp), artifact_uri)
    # the means only, as logged (the bounds are in the recoeval.ci95 tag): MLflow logs these
    # again into the run
    return EvaluationResult(
        metrics={
            k: v for k, v in job.metrics.items() if not k.endswith(("_ci95_low", "_ci95_high"))
        },
        artifacts=artifacts,
        run_id=run_id,
    )


class RecoevalEvaluator(ModelEvaluator):
    """Full-catalogue ranking metrics for ``mlflow.models.evaluate(...,
    model_type="recommender", evaluators="recoeval")`` (see the module docstring)."""

    name = NAME

    @classmethod
    def can_evaluate(cls, *, model_type, evaluator_config, **kwargs) -> bool:
        """True for ``model_type="recommender"`` (other types belong to other evaluators)."""
        return model_type == MODEL_TYPE

    def evaluate(
        self,
        *,
        model_type,
        dataset,
        run_id,
        evaluator_config,
        model=None,
        extra_metrics=None,
        custom_artifacts=None,
        predictions=None,
        **kwargs,
    ):
        """Evaluate, log into ``run_id`` and return the logged metrics and artifacts."""
        from ..metrics import evaluate

        _check_call(model, dataset, predictions, extra_metrics, custom_artifacts)
        cfg = read_config(evaluator_config)
        with _as_mlflow_errors():
            inputs = _inputs(dataset, model, cfg)
            results = evaluate(inputs.train, inputs.test, options=cfg.options, **inputs.source)
        return _log(results, run_id, cfg, dataset, inputs)
