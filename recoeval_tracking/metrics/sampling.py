"""Sampled-negative protocols: each user ranks its positives among ``n`` sampled negatives.

``negatives={"n": 100, "by": "uniform", "seed": 0}`` (``uni100``; ``by="popularity"`` is
``pop100``, negatives drawn with probability proportional to their train count; NCF's
leave-one-out protocol, He et al. WWW 2017; RecBole's ``uni100``/``pop100`` with
``per_positive=True``, ``n`` negatives per positive). The full catalogue stays the default.

The negatives of user ``u`` are drawn without replacement from the items in neither ``u``'s
train nor test row, by one seeded generator walking the users in order, before any scoring:
the same seed gives the same candidates whatever the thread count or block size. Users with
fewer such items than asked get all of them.

The engine is not changed: the evaluation runs on a *candidate matrix*. User ``u``'s
candidates ``C_u`` (positives and negatives, by increasing item index, so that index tie
policies keep the catalogue's order) become columns ``0 .. |C_u| - 1`` of a ``W = max |C_u|``
wide problem; the columns past ``|C_u|`` are padding, entered as train items so that they leave
the pool; scores are gathered from the model's catalogue scores, a bounded block at a time. Every
kernel metric is then the metric over the candidates. Metrics of the top-K lists (novelty,
coverage, ...) are not defined over sampled candidates and are left out (and recorded).

References
----------
.. [1] W. Krichene and S. Rendle, "On sampled metrics for item recommendation", KDD 2020
   (sampled metrics are not consistent with full-catalogue ones: never compare them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError
from ..engine.driver import BLOCK_BYTES
from ..scores import RankedLists, ScoreSource

__all__ = ["describe_negatives", "sample_candidates", "CandidateScores", "candidate_problem"]


def describe_negatives(neg: dict[str, Any] | None) -> dict[str, Any] | str:
    """The definitions entry of the candidate protocol."""
    if neg is None:
        return "full catalogue: every item not in the user's train row"
    each = "per positive" if neg["per_positive"] else "per user"
    return {
        **neg,
        "candidates": f"the user's positives and {neg['n']} negatives {each}, "
        f"drawn without replacement ({neg['by']}) from the items in neither its train nor "
        "its test row; sampled metrics are not comparable to full-catalogue ones",
    }


def _draw(
    rng: np.random.Generator, want: int, excluded: np.ndarray, n_items: int, p: np.ndarray | None
) -> np.ndarray:
    """``want`` distinct items outside the sorted ``excluded``, by rejection (all the allowed
    items when there are fewer)."""
    allowed = n_items - excluded.shape[0]
    if p is not None:
        allowed = int(np.count_nonzero(p)) - int(np.count_nonzero(p[excluded]))
    if want >= allowed:
        mask = np.ones(n_items, dtype=bool)
        mask[excluded] = False
        if p is not None:
            mask &= p > 0
        return np.flatnonzero(mask)
    got: list[int] = []
    seen = set(excluded.tolist())
    while len(got) < want:
        size = 2 * (want - len(got)) + 8
        draw = (
            rng.choice(n_items, size=size, p=p)
            if p is not None
            else rng.integers(0, n_items, size=size)
        )
        for x in draw.tolist():
            if x not in seen:
                seen.add(x)
                got.append(x)
                if len(got) == want:
                    break
    return np.sort(np.asarray(got, dtype=np.int64))


def sample_candidates(
    train: sp.csr_array | None, test: sp.csr_array, neg: dict[str, Any]
) -> np.ndarray:
    """Every user's candidates (positives and sampled negatives, by increasing item index), as
    an ``(m, W)`` array padded with -1; users without a positive get none."""
    m, n_items = test.shape
    rng = np.random.default_rng(neg["seed"])
    p = None
    if neg["by"] == "popularity":
        counts = (
            np.bincount(train.indices, minlength=n_items).astype(np.float64)
            if train is not None
            else np.ones(n_items)
        )
        p = counts / counts.sum() if counts.sum() > 0 else None
    rows = []
    for u in range(m):
        pos = test.indices[test.indptr[u] : test.indptr[u + 1]]
        if pos.shape[0] == 0:
            rows.append(pos)
            continue
        tr = train.indices[train.indptr[u] : train.indptr[u + 1]] if train is not None else pos[:0]
        excluded = np.union1d(tr, pos)
        want = neg["n"] * (pos.shape[0] if neg["per_positive"] else 1)
        rows.append(np.union1d(pos, _draw(rng, want, excluded, n_items, p)))
    W = max((r.shape[0] for r in rows), default=1) or 1
    cand = np.full((m, W), -1, dtype=np.int64)
    for u, r in enumerate(rows):
        cand[u, : r.shape[0]] = r
    return cand


@dataclass
class CandidateScores(ScoreSource):
    """The catalogue scores of ``inner`` gathered at each user's candidate columns (0 for the
    padding, which the candidate train matrix masks)."""

    inner: Any
    cand: np.ndarray

    def __post_init__(self) -> None:
        self.n_items = int(self.cand.shape[1])
        self.n_users = getattr(self.inner, "n_users", None)
        self.dtype = self.inner.dtype

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        W = self.cand.shape[1]
        if out is None or out.shape != (len(users), W) or out.dtype != self.dtype:
            out = np.empty((len(users), W), dtype=self.dtype)
        step = max(1, BLOCK_BYTES // max(1, self.inner.n_items * np.dtype(self.dtype).itemsize))
        for s in range(0, len(users), step):
            part = users[s : s + step]
            S = self.inner.block(np.ascontiguousarray(part, dtype=np.int64))
            idx = self.cand[part]
            out[s : s + len(part)] = np.where(
                idx >= 0, np.take_along_axis(S, np.maximum(idx, 0), axis=1), 0
            )
        return out

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "candidates": int(self.cand.shape[1])}


def candidate_problem(
    prep: Any, source: Any, neg: dict[str, Any], func: str
) -> tuple[Any, CandidateScores, np.ndarray]:
    """The candidate version of the problem: ``prep`` with the test entries at their candidate
    columns and the padding as train, the candidate score source and the candidates."""
    if isinstance(source, RankedLists):
        raise InputError(
            f"The 'negatives' option of {func} needs a score for every candidate; "
            "ranked top-K lists cannot be evaluated against sampled negatives. "
            "Pass scores (factors, a score array or a scorer), or drop "
            "'negatives'."
        )
    cand = sample_candidates(prep.train, prep.test, neg)
    m, W = cand.shape
    test = prep.test
    rows = np.repeat(np.arange(m), np.diff(test.indptr))
    cols = np.empty(test.nnz, dtype=np.int64)
    for u in range(m):
        lo, hi = test.indptr[u], test.indptr[u + 1]
        if hi > lo:
            valid = cand[u, : int((cand[u] >= 0).sum())]
            cols[lo:hi] = np.searchsorted(valid, test.indices[lo:hi])
    new_test = sp.csr_array((test.data, (rows, cols)), shape=(m, W))
    pad_r, pad_c = np.nonzero(cand < 0)
    new_train = sp.csr_array((np.ones(pad_r.shape[0]), (pad_r, pad_c)), shape=(m, W))
    new_prep = replace(prep, train=new_train, test=new_test, n_items=W)
    return new_prep, CandidateScores(source, cand), cand
