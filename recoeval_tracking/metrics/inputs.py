"""The inputs of an evaluation, checked: the train/test matrices with their id maps, the score
source, and the users whose metrics the NaN rules leave undefined before any scoring.

Policies, each stated in the warning or error it raises:

* id maps: a train and a test interactions container must have the same user and item id maps
  (rows and columns are paired by position); otherwise an error says how many ids differ and
  how to align them (:func:`recoeval_tracking.data.align`, or one split of one dataset);
* ``user_ids`` (given, or taken from a container) must be unique;
* duplicate (user, item) entries in a matrix are one entry whose value is their sum (scipy's
  rule, so the NDCG gain of a twice-listed test item doubles): a warning gives their count;
* ranked lists (an array, or a DataFrame of user, item, rank or score) are checked in
  :mod:`.ranked_input`;
* a pandas DataFrame of interactions (one row per (user, item[, value]), as ranx and LensKit
  take them) is accepted for ``train`` and ``test`` (:func:`frames_to_interactions`): its id
  columns are found by name (:data:`FRAME_COLUMNS`), and the two sides are put on shared id
  maps (:func:`recoeval_tracking.data.align` when both are frames; the other side's maps when
  one side is an interactions container; positions when it is a bare matrix).
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, as_csr, checked_sparse, param_error

if TYPE_CHECKING:  # imported where frames are read: a first evaluate() needs no pandas
    import pandas as pd
from ..engine.codes import Reason
from ..scores import (
    BiasScores,
    CallableScores,
    DenseScores,
    FactorScores,
    RankedLists,
    ScoreSource,
)
from . import beyond, device_inputs
from .ranked_input import ranked_lists

__all__ = [
    "Prepared",
    "prepare",
    "score_source",
    "user_reasons",
    "lists_without_train",
    "frames_to_interactions",
    "FRAME_COLUMNS",
    "check_factor_rows",
    "with_gains",
    "with_data_relevance",
]

#: Column names looked for, in order, in a DataFrame given as ``train`` or ``test``: the user
#: and item ids (required) and the value (optional; all ones without it).
FRAME_COLUMNS = {
    "user": ("user", "user_id", "userId", "userid", "uid"),
    "item": ("item", "item_id", "itemId", "itemid", "iid", "movieId", "movie_id"),
    "value": ("value", "rating", "relevance", "weight"),
}


def _frame_roles(df: pd.DataFrame, name: str, func: str) -> dict[str, str]:
    """The column of each role in ``df`` (:data:`FRAME_COLUMNS`)."""
    roles = {}
    for role, candidates in FRAME_COLUMNS.items():
        present = [c for c in candidates if c in df.columns]
        if role != "value" and len(present) > 1:
            raise param_error(
                name,
                func,
                f"a DataFrame with one {role} id column (one of {list(candidates)})",
                f"both {present[0]!r} and {present[1]!r} (which holds the ids is ambiguous)",
                got_is_text=True,
                fix=f"Keep the one that holds the ids, e.g. df.drop(columns={present[1]!r}).",
            )
        found = present[0] if present else None
        if found is None and role != "value":
            raise param_error(
                name,
                func,
                f"a DataFrame with a {role} id column named one of {list(candidates)}",
                f"a DataFrame with columns {list(df.columns)}",
                got_is_text=True,
                fix=f"Rename the column, e.g. df.rename(columns={{'my_{role}': '{role}'}}).",
            )
        if found is not None:
            roles[role] = found
    return roles


def _frame(df: pd.DataFrame, name: str, func: str):
    from ..data import from_dataframe

    return from_dataframe(df, _frame_roles(df, name, func), name=name)


def _onto(
    X: Any, user_ids: np.ndarray, item_ids: np.ndarray, name: str, other: str, func: str
) -> Any:
    """The interactions ``X`` on the id maps of the other side; every id must be known there."""
    from ..data._prepare import _reindexed

    for what, ids, known in (("user", X.user_ids, user_ids), ("item", X.item_ids, item_ids)):
        import pandas as pd

        missing = pd.Index(ids).difference(pd.Index(known))
        if len(missing):
            raise InputError(
                f"{len(missing)} {what} ids of the '{name}' DataFrame passed to {func} are not "
                f"in the id map of '{other}' (e.g. {list(missing[:3])}). Pass both '{name}' and "
                f"'{other}' as DataFrames (their ids are then merged), or align the containers "
                "with recoeval_tracking.data.align(train, test)."
            )
    return _reindexed(X, np.asarray(user_ids), np.asarray(item_ids))


def _positions(
    df: pd.DataFrame, shape: tuple[int, int] | None, name: str, other: str, func: str
) -> sp.csr_array:
    """A DataFrame whose ids are row and column positions of the bare matrix ``other``."""
    roles = _frame_roles(df, name, func)
    rows = df[roles["user"]].to_numpy()
    cols = df[roles["item"]].to_numpy()
    for what, ids, size in (
        ("user", rows, None if shape is None else shape[0]),
        ("item", cols, None if shape is None else shape[1]),
    ):
        if (
            not np.issubdtype(ids.dtype, np.integer)
            or (len(ids) and ids.min() < 0)
            or (size is not None and len(ids) and ids.max() >= size)
        ):
            top = f" up to {ids.max()}" if len(ids) and np.issubdtype(ids.dtype, np.integer) else ""
            raise InputError(
                f"The '{name}' DataFrame passed to {func} goes with a bare matrix '{other}', so "
                f"its {what} ids must be {what} positions (integers in [0, "
                f"{'n' if size is None else size})). Got {ids.dtype} ids{top}. "
                f"Pass '{other}' as a DataFrame or an interactions container too."
            )
    if shape is None:
        shape = (int(rows.max()) + 1 if len(rows) else 0, int(cols.max()) + 1 if len(cols) else 0)
    values = df[roles["value"]].to_numpy(dtype=np.float64) if "value" in roles else np.ones(len(df))
    return sp.csr_array(sp.coo_array((values, (rows, cols)), shape=shape))


def frames_to_interactions(train: Any, test: Any, func: str = "evaluate") -> tuple[Any, Any]:
    """``train`` and ``test`` with every pandas DataFrame turned into interactions on shared
    id maps; other inputs are returned as they are.

    * both DataFrames: each through :func:`recoeval_tracking.data.from_dataframe`, then
      :func:`recoeval_tracking.data.align` (the sorted union of the ids): score rows follow
      ``Results.per_user["user_id"]``;
    * one DataFrame, the other an interactions container: the frame is put on the container's
      id maps (an unknown id is an error);
    * one DataFrame, the other a bare matrix (or ``train=None``): the frame's ids are row and
      column positions.

    Columns are found by name (:data:`FRAME_COLUMNS`: ``user``/``user_id``/``userId``,
    ``item``/``item_id``/``itemId``/``movieId``, ``value``/``rating``); without a value column
    every row has value 1. Repeated (user, item) rows are an error (merge them first).
    """
    from ..data import align

    if "pandas" not in sys.modules:  # then neither is a DataFrame
        return train, test
    import pandas as pd

    train_df, test_df = isinstance(train, pd.DataFrame), isinstance(test, pd.DataFrame)
    if not train_df and not test_df:
        return train, test
    if train_df and test_df:
        return align(_frame(train, "train", func), _frame(test, "test", func))
    frame, other, fname, oname = (
        (train, test, "train", "test") if train_df else (test, train, "test", "train")
    )
    if other is not None and hasattr(other, "matrix") and not sp.issparse(other):
        converted = _onto(
            _frame(frame, fname, func), other.user_ids, other.item_ids, fname, oname, func
        )
    else:
        shape = None if other is None else getattr(other, "shape", None)
        converted = _positions(frame, shape, fname, oname, func)
    return (converted, test) if train_df else (train, converted)


@dataclass
class Prepared:
    train: sp.csr_array | None
    test: sp.csr_array
    n_items: int
    user_ids: np.ndarray
    item_ids: np.ndarray | None


def _unwrap(x: Any) -> tuple[Any, np.ndarray | None, np.ndarray | None]:
    """Accept an interactions container (``.matrix``, ``.user_ids``, ``.item_ids``) or a matrix."""
    if x is not None and hasattr(x, "matrix") and not sp.issparse(x):
        return x.matrix, getattr(x, "user_ids", None), getattr(x, "item_ids", None)
    return x, None, None


def _differ(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is not None and b is not None and not (a.shape == b.shape and np.array_equal(a, b))


def _check_id_maps(train: Any, test: Any, func: str) -> None:
    """Containers given for both train and test must share their id maps."""
    _, train_u, train_i = _unwrap(train)
    _, test_u, test_i = _unwrap(test)
    for what, a, b in (("user", train_u, test_u), ("item", train_i, test_i)):
        if not _differ(a, b):
            continue
        import pandas as pd

        only_test = pd.Index(b).difference(pd.Index(a))
        only_train = pd.Index(a).difference(pd.Index(b))
        detail = (
            f"train has {len(a)} {what} ids and test {len(b)}; {len(only_test)} test ids "
            f"are not in train{f' (e.g. {list(only_test[:3])})' if len(only_test) else ''}"
            f", {len(only_train)} train ids are not in test"
        )
        if not len(only_test) and not len(only_train):
            detail = f"the same {len(a)} {what} ids in another order"
        raise InputError(
            f"The train and test interactions passed to {func} have different {what} id maps "
            f"({detail}), so their rows and columns would be paired by position. Take both "
            "from one split of one dataset (recoeval_tracking.splitting keeps the id maps), or "
            "align them first with recoeval_tracking.data.align(train, test) and score the "
            "aligned ids."
        )


def _duplicates(X: Any) -> int:
    """Stored entries of a sparse input that repeat a (row, column) pair."""
    if not sp.issparse(X) or getattr(X, "has_canonical_format", True):
        return 0
    Y = sp.csr_array(X.tocsr(copy=True))
    Y.sum_duplicates()
    return int(X.nnz - Y.nnz)


def _matrix(X: Any, name: str, func: str, *, allow_none: bool = False) -> sp.csr_array | None:
    if sp.issparse(X):  # its structure checked before any scipy method reads it
        X = checked_sparse(X, name, func)
    n_dup = _duplicates(X)
    if n_dup:
        warnings.warn(
            f"The '{name}' matrix passed to {func} has {n_dup} duplicate (user, item) entries; "
            "each pair counts once, with the sum of its values as its value (scipy's rule: the "
            "NDCG gain of a repeated test item adds up). Merge them first to choose another "
            "rule (recoeval_tracking.data.from_dataframe(..., duplicates='max')).",
            UserWarning,
            stacklevel=5,
        )
    return as_csr(X, name, func, allow_none=allow_none)


def check_factor_rows(test: Any, A: Any, B: Any, func: str) -> None:
    """Refuse factors ``A`` or ``B`` whose row count does not match a sparse ``test``'s shape,
    read from the shape alone, before the matrix is checked and converted: a COO test of
    2**31 rows costs a 16 GiB row pointer, which a wrong ``A`` should not ask for."""
    matrix = test if sp.issparse(test) else getattr(test, "matrix", None)
    if not sp.issparse(matrix) or len(matrix.shape) != 2:
        return
    m, n = (int(d) for d in matrix.shape)
    for name, x, size, what in (
        ("A", A, m, f"one row per user ({m} rows, as the test matrix)"),
        ("B", B, n, f"one row per item ({n} rows, as the columns of the test matrix)"),
    ):
        shape = getattr(x, "shape", None)
        if x is None or not isinstance(shape, tuple) or len(shape) != 2:
            continue  # anything else is checked with the score source
        if int(shape[0]) != size:
            raise param_error(name, func, f"an array with {what}", x)


def _checked_user_ids(user_ids: Any, m: int, func: str) -> np.ndarray:
    user_ids = np.asarray(user_ids)
    if user_ids.shape != (m,):
        raise param_error("user_ids", func, f"an array with one id per test row ({m})", user_ids)
    if user_ids.dtype.kind in "iu":  # the common case, without pandas (0.8 s of an import)
        ids = np.sort(user_ids)  # numpy's sort of integers: a 30th of np.unique's hash pass
        if not (ids[1:] == ids[:-1]).any():
            return user_ids
    import pandas as pd

    index = pd.Index(user_ids)
    if not index.is_unique:
        dup = index[index.duplicated()].unique()
        raise param_error(
            "user_ids",
            func,
            "unique ids (one per test row)",
            f"{len(dup)} repeated ids, e.g. {list(dup[:3])}",
            got_is_text=True,
        )
    return user_ids


def with_gains(positives: sp.csr_array, gains: str | None) -> sp.csr_array:
    """The positives with their gains: as stored (``graded``, None) or 1 each (``binary``)."""
    if gains != "binary" or not positives.nnz:
        return positives
    out = positives.copy()
    out.data = np.ones_like(out.data)
    return out


def with_data_relevance(options: Any, train: Any, test: Any) -> Any:
    """``options`` (an :class:`~recoeval_tracking.options.EvalOptions`) with the data's
    relevance rule where they leave ``relevance_level`` or ``gains`` None: the rule of
    ``test`` (an interactions container's ``relevance``), else of ``train``. A profile that
    sets a relevance level (trec_eval, ranx) keeps its convention: the data's rule is then not
    applied. Bare matrices and DataFrames carry no rule (every entry a positive, its value its
    gain)."""
    from ..data import Relevance
    from .profiles import PROFILES

    rule = next(
        (
            r
            for r in (getattr(x, "relevance", None) for x in (test, train))
            if isinstance(r, Relevance)
        ),
        None,
    )
    # a bad profile (not a name) is refused later, by EvalOptions.checked
    profile_level = isinstance(options.profile, str) and "relevance_level" in PROFILES.get(
        options.profile, {}
    )
    if rule is not None and not profile_level:
        level = rule.level if options.relevance_level is None else options.relevance_level
        options = dataclasses.replace(
            options, relevance_level=level, gains=options.gains or rule.gains
        )
    if options.relevance_level is None and not profile_level:
        _warn_negative_gains(test)
    return options


def _stored_values(x: Any) -> np.ndarray | None:
    """The stored values of a test input (a sparse matrix, an interactions container or a
    DataFrame with a value column), or None when it has none to look at."""
    if sp.issparse(x):
        return _sparse_values(x)
    matrix = getattr(x, "matrix", None)
    if sp.issparse(matrix):
        return _sparse_values(matrix)
    if "pandas" in sys.modules and isinstance(x, sys.modules["pandas"].DataFrame):
        column = next((c for c in FRAME_COLUMNS["value"] if c in x.columns), None)
        return None if column is None else np.asarray(x[column])
    return None


def _sparse_values(x: Any) -> np.ndarray:
    """The stored values of any scipy sparse format: ``data`` of CSR, CSC, COO and BSR (read
    as is, before the structure check); DOK, LIL and DIA have no flat ``data`` (a dict, lists,
    padded diagonals) and are read through COO, as the structure check converts them."""
    if x.format in ("csr", "csc", "coo", "bsr"):
        return np.asarray(x.data)
    return np.asarray(x.tocoo().data)


def _warn_negative_gains(test: Any, func: str = "evaluate") -> None:
    """Without a relevance level every stored test entry is a positive whose value is its gain
    (recometrics' rule): a negative value (a dislike on a -1/+1 scale, a centred rating) counts
    as a hit for P@K and leaves NDCG NaN where no value is > 0. Said in a warning that counts
    them, since it is rarely what data with negative values means."""
    values = _stored_values(test)
    if values is None or values.dtype.kind not in "iuf" or not values.size:
        return
    negative = values < 0
    if not negative.any():
        return
    warnings.warn(
        f"The 'test' data passed to {func} has {int(negative.sum())} stored entries with a "
        f"negative value (the smallest {float(values[negative].min())}) and no relevance level: "
        "each counts as a relevant item (a hit for P@K, recall...) with its value as its NDCG "
        "gain, and NDCG is NaN for a user with no value > 0. Give relevance_level (entries "
        "below it are judged non-relevant; in recoeval-track: dataset.relevance_level) to "
        "treat them as dislikes.",
        UserWarning,
        stacklevel=4,
    )


def prepare(train: Any, test: Any, user_ids: Any, func: str) -> Prepared:
    train, test = frames_to_interactions(train, test, func)
    _check_id_maps(train, test, func)
    test_m, test_uids, test_iids = _unwrap(test)
    train_m, train_uids, _ = _unwrap(train)
    X_test = _matrix(test_m, "X_test" if func == "calc_reco_metrics" else "test", func)
    X_train = _matrix(
        train_m, "X_train" if func == "calc_reco_metrics" else "train", func, allow_none=True
    )
    if X_train is not None and X_train.shape != X_test.shape:
        raise InputError(
            f"The train and test matrices passed to {func} must have the same shape (users x "
            f"items). Got train {X_train.shape} and test {X_test.shape} instead."
        )
    if X_train is not None:
        _check_disjoint(X_train, X_test, func)
    m, n = X_test.shape
    if user_ids is None:
        user_ids = test_uids if test_uids is not None else train_uids
    if user_ids is None:
        user_ids = np.arange(m)
    return Prepared(X_train, X_test, n, _checked_user_ids(user_ids, m, func), test_iids)


def _check_disjoint(X_train: sp.csr_array, X_test: sp.csr_array, func: str) -> None:
    a = sp.csr_array(
        (np.ones(X_train.nnz, dtype=np.int8), X_train.indices, X_train.indptr), shape=X_train.shape
    )
    b = sp.csr_array(
        (np.ones(X_test.nnz, dtype=np.int8), X_test.indices, X_test.indptr), shape=X_test.shape
    )
    both = a.multiply(b).tocoo()
    if both.nnz:
        u, i = int(both.row[0]), int(both.col[0])
        raise InputError(
            f"The train and test matrices passed to {func} must not share entries: an item in a "
            f"user's train row cannot also be a test item. Got {both.nnz} shared entries, e.g. "
            f"user (row) {u} and item (column) {i}. Remove test entries that are in train."
        )


def score_source(
    prep: Prepared,
    A: Any,
    B: Any,
    item_biases: Any,
    scores: Any,
    scorer: Any,
    ranked: Any,
    func: str,
    backend: str = "cpu",
    missing_users: str | None = None,
) -> ScoreSource | RankedLists:
    """The checked score source of exactly one of the inputs.

    Factors or item biases on a GPU (CuPy, PyTorch CUDA, ``__cuda_array_interface__`` or CUDA
    DLPack arrays) are taken without a host copy with ``backend="cuda"`` and refused with
    ``backend="cpu"`` (:mod:`.device_inputs`, which says what is checked on them)."""
    given = [
        name
        for name, v in (
            ("A/B", A if A is not None else B),
            ("scores", scores),
            ("scorer", scorer),
            ("ranked", ranked),
        )
        if v is not None
    ]
    if item_biases is not None and not given:
        given = ["item_biases"]
    if missing_users is not None and ranked is None:
        raise InputError(
            f"The 'missing_users' parameter of {func} goes with 'ranked' lists "
            f"(users a ranked DataFrame gives no list); got it with {given or 'no'}"
            " score source."
        )
    if len(given) != 1:
        raise InputError(
            f"{func} needs exactly one source of scores: user and item factors 'A' and 'B' "
            f"(optionally with 'item_biases'), 'item_biases' alone, a dense 'scores' array, a "
            f"'scorer' callable or 'ranked' top-K lists. Got {given or 'none'} instead."
        )
    m, n = prep.test.shape
    kind = given[0]
    paired = kind == "item_biases" or (A is not None and B is not None)
    if paired and device_inputs.any_on_device(A, B, item_biases):
        return device_inputs.device_factors(A, B, item_biases, m, n, backend, func)
    if kind == "scores":
        device_inputs.refuse_device_scores(scores, func)
    if kind == "A/B":
        if A is None or B is None:
            raise InputError(
                f"The 'A' and 'B' parameters of {func} must be given together "
                f"(user factors m x p and item factors n x p). Got only "
                f"{'A' if B is None else 'B'}."
            )
        src = FactorScores(A, B, item_biases, func=func)
        if src.A.shape[0] != m:
            raise param_error("A", func, f"an array with one row per user ({m} rows, as X_test)", A)
        if src.B.shape[0] != n:
            raise param_error(
                "B", func, f"an array with one row per item ({n} rows, as the columns of X_test)", B
            )
        return src
    if item_biases is not None and kind != "item_biases":
        raise InputError(
            f"The 'item_biases' parameter of {func} goes with factors 'A' and 'B' "
            f"or alone; it cannot be combined with '{kind}'."
        )
    if kind == "item_biases":
        src = BiasScores(item_biases, func=func)
        if src.n_items != n:
            raise param_error(
                "item_biases", func, f"a 1-d array with one value per item ({n})", item_biases
            )
        return src
    if kind == "scores":
        if isinstance(scores, ScoreSource):
            src = scores
        elif hasattr(scores, "score_users") or hasattr(scores, "recommend"):
            kind_of = type(scores).__name__
            raise InputError(
                f"The 'scores' parameter of {func} must be a 2-d array of scores (users x items) "
                f"or a score source. Got a {kind_of}, a model object, instead: pass "
                f"scorer=model.score_users, or the model through "
                f"recoeval_tracking.models.UserModel(model).eval_inputs(k), which also takes a "
                f"recommend() method ({func}(train, test, **UserModel(model).eval_inputs(10), k=10))."
            )
        else:
            src = DenseScores(scores, func=func)
            if src.scores.shape != (m, n):
                raise param_error(
                    "scores", func, f"an array of shape (users, items) = {(m, n)}", scores
                )
        if src.n_items != n:
            raise InputError(
                f"The score source passed to {func} scores {src.n_items} items, but "
                f"the test matrix has {n} items (columns)."
            )
        return src
    if kind == "scorer":
        if isinstance(scorer, ScoreSource):
            return scorer
        return CallableScores(scorer, n, func=func)
    return ranked_lists(ranked, prep, func, missing_users)


def user_reasons(
    prep: Prepared, min_pos_test: int, min_items_pool: int, consider_cold_start: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_test = np.diff(prep.test.indptr).astype(np.int64)
    m = n_test.shape[0]
    if prep.train is not None:
        n_train = np.diff(prep.train.indptr).astype(np.int64)
    else:
        n_train = np.zeros(m, dtype=np.int64)
    reason = np.zeros(m, dtype=np.int8)
    pool = prep.n_items - n_train
    # checked in reverse order of precedence so that the first rule wins
    reason[pool < min_items_pool] = Reason.MIN_ITEMS_POOL
    if prep.train is not None and not consider_cold_start:
        reason[n_train == 0] = Reason.COLD_START
    reason[n_test < min_pos_test] = Reason.MIN_POS_TEST
    reason[n_test == 0] = Reason.NO_TEST
    return reason, n_train, n_test


def lists_without_train(lists: np.ndarray, train: sp.csr_array, k: int) -> np.ndarray:
    """The first k items of each ranked list that are not in the user's train row."""
    m, L = lists.shape
    rows = np.repeat(np.arange(m), L)
    flat = lists.ravel()
    keep = flat >= 0
    keep[keep] = ~beyond._contains(train, rows[keep], flat[keep])
    out = np.full((m, k), -1, dtype=np.int64)
    rank = np.cumsum(keep.reshape(m, L), axis=1) - 1
    sel = keep.reshape(m, L) & (rank < k)
    r, c = np.nonzero(sel)
    out[r, rank[r, c]] = lists[r, c]
    return out
