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
        raise param_error(name, func, "a real-valued array (a complex value's imaginary part "
                          "would be dropped)", x, f"Pass {name}.real explicitly if that is meant.")
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
                raise param_error("item_biases", self.func,
                                  f"a 1-d array with one value per item ({B.shape[0]})", bias)
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
        if out is None:
            out = np.empty((len(users), self.n_items), dtype=self.dtype)
        np.matmul(Ablk, self.B.T, out=out)
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "factors", "n_factors": int(self.A.shape[1]),
                "item_biases": bool(self._ones), "dtype": str(self.dtype)}


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
        if out is None:
            out = np.empty((len(users), self.n_items), dtype=self.dtype)
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
        if out is None:
            out = np.empty((len(users), self.n_items), dtype=self.dtype)
        np.take(self.scores, users, axis=0, out=out)
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "dense", "dtype": str(self.dtype)}


@dataclass
class CallableScores(ScoreSource):
    """Scores from any model: ``scorer(user_indices) -> array of shape (len(user_indices), n_items)``."""

    scorer: Callable[[np.ndarray], Any]
    n_items: int
    dtype: Any = np.float64
    func: str = field(default="evaluate", repr=False)

    def __post_init__(self) -> None:
        if not callable(self.scorer):
            raise param_error("scorer", self.func, "a callable f(user_indices) -> scores", self.scorer)
        self.dtype = np.dtype(self.dtype)
        if self.dtype not in (np.float32, np.float64):
            raise param_error("dtype", self.func, "float32 or float64", self.dtype)

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
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
                f"{describe(got)} instead.")
        if out is None:
            return np.array(got, dtype=self.dtype, order="C", copy=True)
        out[...] = got
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "callable", "dtype": str(self.dtype)}


@dataclass
class RankedLists:
    """Ranked top-K recommendation lists: ``items[u, r]`` is the item at rank ``r + 1`` for user ``u``.

    Rows shorter than K are padded with ``-1``. Only the top-K metrics can be computed from such
    input; whole-ranking metrics (ROC-AUC, PR-AUC) are not defined for it.
    """

    items: np.ndarray
    func: str = field(default="evaluate", repr=False)

    def __post_init__(self) -> None:
        items = np.asarray(self.items)
        if items.ndim != 2 or not np.issubdtype(items.dtype, np.integer):
            raise param_error("ranked", self.func,
                              "a 2-d integer array of item indices (users x K, -1 for padding)", items)
        self.items = np.ascontiguousarray(items, dtype=np.int64)
        self.n_users, self.k = self.items.shape

    @classmethod
    def from_pairs(cls, users: np.ndarray, items: np.ndarray, key: np.ndarray, n_users: int,
                   min_width: int = 1, func: str = "evaluate") -> RankedLists:
        """Lists from (user row, item index, key) triples: each user's items in ascending
        ``key`` (a rank, or a negated score; ties keep the given order), padded with -1 to the
        longest list and at least ``min_width`` ranks."""
        users = np.asarray(users, dtype=np.int64)
        order = np.lexsort((np.asarray(key), users))
        users, items = users[order], np.asarray(items, dtype=np.int64)[order]
        counts = np.bincount(users, minlength=n_users)
        width = max(int(counts.max()) if counts.size else 0, int(min_width), 1)
        lists = np.full((n_users, width), -1, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        lists[users, np.arange(users.shape[0]) - starts[users]] = items
        return cls(lists, func=func)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the input, for the definitions record."""
        return {"kind": "ranked_lists", "list_length": int(self.k)}
