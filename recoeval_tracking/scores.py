"""Score sources: the ways a model hands its scores to the evaluator.

Every source answers one question: "the scores of these users for every item", as a dense,
C-contiguous, writable ``(len(users), n_items)`` block of float32 or float64. The evaluator asks
for a bounded block of users at a time, so the users x items matrix is never materialised.

* :class:`FactorScores` -- user factors ``A`` (m x p), item factors ``B`` (n x p) and optional item
  biases: ``score(u, i) = <A[u], B[i]> + bias[i]``, computed with one BLAS GEMM per block.
* :class:`BiasScores` -- a non-personalised model: ``score(u, i) = bias[i]`` for every user.
* :class:`DenseScores` -- a precomputed dense ``(m, n)`` score array.
* :class:`CallableScores` -- any model: a function ``f(user_indices) -> (len, n)`` array.

Ranked top-K lists are a different kind of input (no score for items outside the list); they are
handled by :class:`RankedLists`, which gives the top-K metrics only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import InputError, describe, param_error

__all__ = [
    "ScoreSource",
    "FactorScores",
    "BiasScores",
    "DenseScores",
    "CallableScores",
    "RankedLists",
    "MISSING_USERS",
    "order_key",
    "id_order",
]


class ScoreSource:
    """Base class: something that scores blocks of users against every item."""

    n_items: int
    n_users: int | None = None
    dtype: np.dtype

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Scores of ``users`` (int64 row indices) for all items.

        Returns a C-contiguous writable array of shape ``(len(users), n_items)`` and dtype
        ``self.dtype``. When ``out`` is given (right shape and dtype), it is filled and returned.
        The caller owns the returned array and may overwrite it.
        """
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the source, for the definitions record."""
        return {"kind": type(self).__name__}

    def _buffer(self, users: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """``out``, or a new block of ``users`` x every item in the source's dtype."""
        if out is None:
            out = np.empty((len(users), self.n_items), dtype=self.dtype)
        return out


def _float_array(x: Any, name: str, func: str, ndim: int) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except Exception as exc:  # pragma: no cover - numpy raises many types
            raise param_error(name, func, f"a {ndim}-d numeric array", x) from exc
    if x.ndim != ndim:
        raise param_error(name, func, f"a {ndim}-d array", x)
    if x.dtype == np.float32 or x.dtype == np.float64:
        return x
    if x.dtype.kind == "c":
        raise param_error(
            name,
            func,
            "a real-valued array (a complex value's imaginary part would be dropped)",
            x,
            f"Pass {name}.real explicitly if that is meant.",
        )
    if x.dtype.kind in "biuf":
        return x.astype(np.float64)
    raise param_error(name, func, "a numeric (float32 or float64) array", x)


@dataclass
class FactorScores(ScoreSource):
    """Dot-product scores ``A @ B.T (+ item_biases)``; float32 when both factors are float32."""

    A: np.ndarray
    B: np.ndarray
    item_biases: np.ndarray | None = None
    func: str = field(default="evaluate", repr=False)

    def __post_init__(self) -> None:
        A = _float_array(self.A, "A", self.func, 2)
        B = _float_array(self.B, "B", self.func, 2)
        if A.shape[1] != B.shape[1]:
            raise InputError(
                f"The 'A' and 'B' parameters of {self.func} must have the same number of factors "
                f"(columns). Got A with shape {A.shape} and B with shape {B.shape} instead."
            )
        dtype = np.float32 if (A.dtype == np.float32 and B.dtype == np.float32) else np.float64
        bias = None
        if self.item_biases is not None:
            bias = _float_array(self.item_biases, "item_biases", self.func, 1)
            if bias.shape[0] != B.shape[0]:
                raise param_error(
                    "item_biases",
                    self.func,
                    f"a 1-d array with one value per item ({B.shape[0]})",
                    bias,
                )
        if bias is not None:
            # recometrics' rule: append the biases to B as a factor and a column of ones to A.
            B = np.hstack([B.astype(dtype, copy=False), bias.astype(dtype)[:, None]])
            self._ones = True
        else:
            self._ones = False
        self.A = A.astype(dtype, copy=False)
        self.B = np.ascontiguousarray(B, dtype=dtype)
        self.dtype = np.dtype(dtype)
        self.n_items = self.B.shape[0]
        self.n_users = self.A.shape[0]

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        Ablk = self.A[users]
        if self._ones:
            Ablk = np.hstack([Ablk, np.ones((Ablk.shape[0], 1), dtype=self.dtype)])
        out = self._buffer(users, out)
        np.matmul(Ablk, self.B.T, out=out)
        return out

    def _n_factors(self) -> int:
        return int(self.A.shape[1])

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "factors",
            "n_factors": self._n_factors(),
            "item_biases": bool(self._ones),
            "dtype": str(self.dtype),
        }


@dataclass
class BiasScores(ScoreSource):
    """A non-personalised model: every user gets ``item_biases`` as scores."""

    item_biases: np.ndarray
    func: str = field(default="evaluate", repr=False)

    def __post_init__(self) -> None:
        b = _float_array(self.item_biases, "item_biases", self.func, 1)
        self.item_biases = b
        self.dtype = b.dtype
        self.n_items = b.shape[0]

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = self._buffer(users, out)
        out[...] = self.item_biases[None, :]
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "item_biases", "dtype": str(self.dtype)}


@dataclass
class DenseScores(ScoreSource):
    """A precomputed dense ``(n_users, n_items)`` score array."""

    scores: np.ndarray
    func: str = field(default="evaluate", repr=False)

    def __post_init__(self) -> None:
        S = _float_array(self.scores, "scores", self.func, 2)
        self.scores = S
        self.dtype = S.dtype
        self.n_users, self.n_items = S.shape

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return np.take(self.scores, users, axis=0, out=self._buffer(users, out))

    def describe(self) -> dict[str, Any]:
        return {"kind": "dense", "dtype": str(self.dtype)}


@dataclass
class CallableScores(ScoreSource):
    """Scores from any model: ``scorer(user_indices) -> array of shape (len(user_indices), n_items)``.

    A scorer with a parameter named ``out`` (detected from its signature unless ``accepts_out``
    says) is called as ``scorer(user_indices, out=buffer)`` with the engine's block buffer, a
    C-contiguous ``dtype`` array of shape (len(user_indices), n_items); when it returns that
    buffer (or None), its values are used as they are, without a copy."""

    scorer: Callable[..., Any]
    n_items: int
    dtype: Any = np.float64
    func: str = field(default="evaluate", repr=False)
    accepts_out: bool | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.scorer):
            raise param_error(
                "scorer", self.func, "a callable f(user_indices) -> scores", self.scorer
            )
        self.dtype = np.dtype(self.dtype)
        if self.dtype not in (np.float32, np.float64):
            raise param_error("dtype", self.func, "float32 or float64", self.dtype)
        if self.accepts_out is None:
            self.accepts_out = takes_out(self.scorer)

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if (
            out is not None
            and self.accepts_out
            and out.dtype == self.dtype
            and out.flags.c_contiguous
            and out.shape == (len(users), self.n_items)
        ):
            got = self.scorer(users, out=out)
            if got is None or got is out:  # written in place: the engine's own buffer
                return out
        else:
            got = self.scorer(users)
        if hasattr(got, "toarray"):
            got = got.toarray()
        got = np.asarray(got)
        if got.shape != (len(users), self.n_items):
            raise InputError(
                f"The 'scorer' passed to {self.func} must return an array of shape "
                f"(len(user_indices), n_items) = {(len(users), self.n_items)}. "
                f"Got {describe(got)} instead."
            )
        if got.dtype.kind not in "biuf":
            raise InputError(
                f"The 'scorer' passed to {self.func} must return real numbers (a bool, int or "
                f"float array; a complex value's imaginary part would be dropped). Got "
                f"{describe(got)} instead."
            )
        if out is None:
            return np.array(got, dtype=self.dtype, order="C", copy=True)
        out[...] = got
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "callable", "dtype": str(self.dtype)}


def takes_out(method: Any) -> bool:
    """Whether ``method`` has a parameter named ``out`` (a keyword the engine can pass its score
    buffer as); False when its signature cannot be read."""
    import inspect

    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    p = params.get("out")
    return p is not None and p.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def order_key(values: Any, *, is_score: bool) -> tuple[np.ndarray, int | None, str]:
    """The ascending sort key of ranked pairs from the column that orders them: a rank
    (smaller = better) or a score (higher = better; the key is its negation).

    Returns ``(key, bad, expected)``: ``bad`` is the position of the first value that cannot
    order a list (None when every value can), ``expected`` says what was expected, for the
    caller's error (which names the file and line, or the frame's row). A rank must be a finite
    number >= 0 (a negative rank would move its item above the best one); a score any number
    but NaN (+-inf rank first or last); neither may be text or complex (a complex value's
    imaginary part would be dropped)."""
    expected = (
        "a finite number >= 0 (a rank: 1 = best)"
        if not is_score
        else "a number, not NaN (a score: higher = better)"
    )
    arr = np.asarray(values)
    if arr.dtype.kind in "iuf":
        num = arr.astype(np.float64)
    elif arr.dtype.kind == "c":
        return np.zeros(0), 0, "a real number (a complex value's imaginary part would be lost)"
    else:
        import pandas as pd  # only here: off the import path of evaluate (0.8 s)

        num_s = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce")
        if num_s.dtype.kind in "cO":
            return np.zeros(0), 0, "a real number (a complex value's imaginary part would be lost)"
        num = num_s.to_numpy(dtype=np.float64)
    bad = np.isnan(num) if is_score else ~(np.isfinite(num) & (num >= 0))
    if bad.any():
        return np.zeros(0), int(np.flatnonzero(bad)[0]), expected
    return (-num if is_score else num), None, expected


def id_order(ids: Any) -> np.ndarray | None:
    """Each id's position in the ids' sorted order (ascending), the tie key of ranked pairs:
    a tied score goes to the lower item id. None when the ids are already ascending (the
    index order is then the id order: every loader numbers ids so) or cannot be compared
    (ids of mixed types: the index order then breaks ties)."""
    arr = np.asarray(ids)
    try:
        if arr.shape[0] < 2 or bool(np.all(arr[1:] > arr[:-1])):
            return None
        rank = np.empty(arr.shape[0], dtype=np.int64)
        rank[np.argsort(arr, kind="stable")] = np.arange(arr.shape[0], dtype=np.int64)
    except TypeError:
        return None
    return rank


#: What a user that ranked pairs (a file, a DataFrame) give no list gets
#: (``missing_users=``): an empty list, so every metric 0 (with a warning); NaN with reason
#: ``no_list``, left out of the means; or an error.
MISSING_USERS = ("zero", "skip", "error")


@dataclass
class RankedLists:
    """Ranked top-K recommendation lists: ``items[u, r]`` is the item at rank ``r + 1`` for user ``u``.

    Rows shorter than K are padded with ``-1``. Only the top-K metrics can be computed from such
    input; whole-ranking metrics (ROC-AUC, PR-AUC) are not defined for it.

    ``listed`` (set by :meth:`from_pairs`) says which users the pairs gave a list; the others
    are *missing* and treated by ``missing_users`` (:data:`MISSING_USERS`). An array given
    directly has a row for every user (an empty row is an empty list), so nobody is missing.
    """

    items: np.ndarray
    func: str = field(default="evaluate", repr=False)
    listed: np.ndarray | None = field(default=None, repr=False)
    missing_users: str = field(default="zero", repr=False)
    #: ``{"users_without_list": n, "evaluated_users": N, ...}`` once the evaluation counted them.
    missing_count: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        items = np.asarray(self.items)
        if items.ndim != 2 or not np.issubdtype(items.dtype, np.integer):
            raise param_error(
                "ranked",
                self.func,
                "a 2-d integer array of item indices (users x K, -1 for padding)",
                items,
            )
        self.items = np.ascontiguousarray(items, dtype=np.int64)
        self.n_users, self.k = self.items.shape
        if self.missing_users not in MISSING_USERS:
            raise param_error(
                "missing_users", self.func, f"one of {list(MISSING_USERS)}", self.missing_users
            )
        if self.listed is not None:
            self.listed = np.asarray(self.listed, dtype=bool)
            if self.listed.shape != (self.n_users,):
                raise param_error(
                    "listed", self.func, f"a bool per user ({self.n_users})", self.listed
                )

    @classmethod
    def from_pairs(
        cls,
        users: np.ndarray,
        items: np.ndarray,
        key: np.ndarray,
        n_users: int,
        min_width: int = 1,
        func: str = "evaluate",
        missing_users: str = "zero",
        tie: np.ndarray | None = None,
    ) -> RankedLists:
        """Lists from (user row, item index, key) triples: each user's items in ascending
        ``key`` (a rank, or a negated score), equal keys in ascending ``tie`` (default: the item
        index; pass :func:`id_order` of the item ids, per pair, when the index order is not the
        ids' sorted order), so a tied score goes to the lower item id whatever the pairs' order,
        as in :func:`~recoeval_tracking.spark.evaluate_spark`. Padded with -1 to the longest
        list and at least ``min_width`` ranks. Users with no pair are recorded as without a
        list (``listed``), for the ``missing_users`` rule."""
        users = np.asarray(users, dtype=np.int64)
        items = np.asarray(items, dtype=np.int64)
        second = items if tie is None else np.asarray(tie)
        order = np.lexsort((second, np.asarray(key), users))
        users, items = users[order], items[order]
        counts = np.bincount(users, minlength=n_users)
        width = max(int(counts.max()) if counts.size else 0, int(min_width), 1)
        lists = np.full((n_users, width), -1, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        lists[users, np.arange(users.shape[0]) - starts[users]] = items
        return cls(lists, func=func, listed=counts > 0, missing_users=missing_users)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the input, for the definitions record: the list length,
        and for lists built from pairs the ``missing_users`` rule and how many of the evaluated
        users had no list."""
        out: dict[str, Any] = {"kind": "ranked_lists", "list_length": int(self.k)}
        if self.listed is not None:
            out["missing_users"] = self.missing_users
            if self.missing_count is not None:
                out.update(self.missing_count)
        return out
