"""The inputs of the ``recoeval`` MLflow evaluator: interaction frames to the train and test
matrices and the score source that :func:`recoeval_tracking.evaluate` takes.

No MLflow here: :mod:`.evaluator` hands over plain frames and callables and turns the
:class:`~recoeval_tracking.InputError` raised here into an ``MlflowException``.

The contract (also in :mod:`.evaluator`):

* **data**: one row per (user, item) pair, ``user_col`` and ``item_col`` holding the original
  ids. A row is a test positive when its target is > 0 (its value is the NDCG gain); rows with a
  target of 0, a negative one or NaN are candidates only. Without a target column every row is a
  positive of gain 1 (model path only). The evaluated users are the users of ``data``.
* **static ranking** (``predictions`` column): a score (higher is better) or a rank (1 is best)
  for each listed pair. When every user's pool (the catalogue minus the user's train items) is
  scored, the whole ranking is evaluated; otherwise the scored pairs are evaluated as ranked
  top-K lists (the top-K metrics only), with a warning. The catalogue is every item of ``data``
  and of the evaluated users' train rows.
* **model**: ``predict(DataFrame({user_col: ids}))`` for a block of users returns one row of
  scores per user, in the same order: a DataFrame whose columns are the item ids (the
  catalogue), or a 2-d array whose columns follow ``item_ids``.
* **train**: pairs to exclude from each ranking (``user_col``, ``item_col``; other columns are
  ignored). Rows of users outside ``data`` are ignored, and so are items the model does not
  score.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, describe
from ..data import Interactions, factorize_sorted

__all__ = ["PREDICTION_TYPES", "EvalInputs", "model_inputs", "read_train", "static_inputs"]

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
