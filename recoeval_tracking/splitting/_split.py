"""The :class:`Split` result shared by every split strategy, and helpers to build it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..data import Interactions

__all__ = ["Split", "TRAIN", "TEST", "VALIDATION", "split_from_parts", "union_of"]

#: Part labels of each stored entry.
TRAIN, TEST, VALIDATION = 0, 1, 2


@dataclass(eq=False)
class Split:
    """A train/test (and optional validation) split of one :class:`Interactions`.

    Attributes
    ----------
    train, test : Interactions
        Same shape and id maps as the input; together (with ``validation``) they hold every
        input entry exactly once unless the strategy documents that it drops some.
    validation : Interactions or None
    strategy : str
        Name of the strategy (a key of ``SPLITS``).
    params : dict
        The strategy's parameters, seed included.
    fingerprint : str
        First 16 hex chars of a sha256 over the input's fingerprint and the part label of every
        entry: the same data split the same way has the same fingerprint.
    per_user : pandas.DataFrame
        One row per user: ``user_id`` (original id), ``n_train``, ``n_test`` and, when there
        is a validation part, ``n_validation``.
    fold : int or None
        Fold number for k-fold strategies.
    details : dict
        Strategy-specific counts (e.g. users capped by ``min_train``, users without test data).
    """

    train: Interactions
    test: Interactions
    validation: Interactions | None
    strategy: str
    params: dict
    fingerprint: str = ""
    per_user: pd.DataFrame = field(default_factory=pd.DataFrame)
    fold: int | None = None
    details: dict = field(default_factory=dict)

    @property
    def test_users(self) -> np.ndarray:
        """Row indices of the users with at least one test entry."""
        return np.flatnonzero(self.test.user_counts() > 0)

    @property
    def has_validation(self) -> bool:
        """Whether the split has a validation part with at least one entry."""
        return self.validation is not None and self.validation.nnz > 0

    def validation_split(self) -> Split:
        """The selection phase of a fair study: fit on ``train``, evaluate on ``validation``.

        A :class:`Split` whose ``test`` is this split's validation part (so evaluating it ranks
        every item not in ``train``) and which has no validation part of its own; its
        fingerprint is this split's with the part named (``<fingerprint>/validation`` hashed),
        so a run evaluated on validation is never paired with one evaluated on test.

        Raises
        ------
        InputError
            The split has no validation part.
        """
        self._require_validation("validation_split")
        assert self.validation is not None
        return self._part_view(self.train, self.validation, "validation")

    def test_split(self, *, refit: bool = True) -> Split:
        """The test phase of a fair study: the chosen configuration evaluated once on ``test``.

        A :class:`Split` whose ``train`` is ``train`` plus ``validation`` (the entries a refit
        learns from, and those evaluating on ``test`` never ranks: every item the user has in
        train or validation is excluded) and whose ``test`` is this split's test part. Without a
        validation part, the split itself. ``refit`` only names what the caller fits on: with
        ``refit=False`` the model keeps its fit on ``train`` alone (``self.train``), and the
        ranking still excludes the validation items, which are known interactions.
        """
        if not self.has_validation:
            return self
        assert self.validation is not None
        merged = union_of(self.train, self.validation)
        view = self._part_view(merged, self.test, "test")
        view.details = {**view.details, "refit": bool(refit)}
        return view

    def part_fingerprint(self, part: str) -> str:
        """The fingerprint of the phase evaluating ``part`` (``"validation"`` or ``"test"``):
        that of :meth:`validation_split` or :meth:`test_split`, without building its parts
        (the split's own fingerprint for the test of a split without a validation part)."""
        if part == "test" and not self.has_validation:
            return self.fingerprint
        return hashlib.sha256(f"{self.fingerprint}/{part}".encode()).hexdigest()[:16]

    def _require_validation(self, func: str) -> None:
        from .._validation import InputError

        if not self.has_validation:
            raise InputError(
                f"Split.{func} needs a split with a validation part; this {self.strategy!r} "
                "split has none. Make one with a validation setting of its strategy "
                "(validation_fraction=0.1 for 'random', validation_n=1 for 'leave_n_out', "
                "validation_quantile=0.8 for 'temporal_global')."
            )

    def _part_view(self, train: Interactions, test: Interactions, part: str) -> Split:
        per_user = pd.DataFrame(
            {
                "user_id": train.user_ids,
                "n_train": train.user_counts(),
                "n_test": test.user_counts(),
            }
        )
        return Split(
            train=train,
            test=test,
            validation=None,
            strategy=self.strategy,
            params=dict(self.params),
            fingerprint=self.part_fingerprint(part),
            per_user=per_user,
            fold=self.fold,
            details={**self.details, "evaluated_on": part, "split_fingerprint": self.fingerprint},
        )

    def summary(self) -> dict[str, Any]:
        """Sizes of the parts and the fingerprint (JSON-able)."""
        out = {
            "strategy": self.strategy,
            "params": self.params,
            "fingerprint": self.fingerprint,
            "train_interactions": self.train.nnz,
            "test_interactions": self.test.nnz,
            "test_users": int(self.test_users.shape[0]),
        }
        if self.validation is not None:
            out["validation_interactions"] = self.validation.nnz
        if self.fold is not None:
            out["fold"] = self.fold
        out.update(self.details)
        return out

    def __repr__(self) -> str:
        val = f", validation={self.validation.nnz}" if self.validation is not None else ""
        fold = f", fold={self.fold}" if self.fold is not None else ""
        return (
            f"Split({self.strategy!r}{fold}, train={self.train.nnz}, test={self.test.nnz}"
            f"{val}, fingerprint={self.fingerprint!r})"
        )


def union_of(a: Interactions, b: Interactions) -> Interactions:
    """The entries of ``a`` and ``b`` (two disjoint parts of one :class:`Interactions`: same
    shape and id maps) in one container; values and timestamps follow their entries. Explicit
    zeros are kept (a sparse sum would drop them)."""
    if a.shape != b.shape:
        raise ValueError(f"union_of: parts of different shapes {a.shape} and {b.shape}")
    rows = np.concatenate([a.row_of_entries(), b.row_of_entries()])
    cols = np.concatenate([np.asarray(a.matrix.indices), np.asarray(b.matrix.indices)])
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    if rows.size > 1 and np.any((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])):
        raise ValueError("union_of: the parts share an entry (they must be disjoint)")
    indptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=a.shape[0]), out=indptr[1:])
    data = np.concatenate([np.asarray(a.matrix.data), np.asarray(b.matrix.data)])[order]
    m = sp.csr_array((data, cols, indptr), shape=a.shape)
    m.has_sorted_indices = True
    m.has_canonical_format = True
    t = None
    if a.timestamps is not None and b.timestamps is not None:
        tdata = np.concatenate([np.asarray(a.timestamps.data), np.asarray(b.timestamps.data)])
        t = sp.csr_array((tdata[order], cols, indptr), shape=a.shape)
    return a.with_data(m, t)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def split_from_parts(
    X: Interactions,
    part: np.ndarray,
    strategy: str,
    params: dict,
    *,
    fold: int | None = None,
    details: dict | None = None,
    keep: np.ndarray | None = None,
) -> Split:
    """Build a :class:`Split` from one part label per stored entry (TRAIN/TEST/VALIDATION).

    ``keep`` (optional bool per entry) drops entries from every part (for strategies that
    document dropping, e.g. nothing in the default strategies).
    """
    if keep is None:
        keep = np.ones(X.nnz, dtype=bool)
    train = X.subset(keep & (part == TRAIN))
    test = X.subset(keep & (part == TEST))
    has_val = bool(np.any(part == VALIDATION))
    validation = X.subset(keep & (part == VALIDATION)) if has_val else None
    per_user = pd.DataFrame(
        {"user_id": X.user_ids, "n_train": train.user_counts(), "n_test": test.user_counts()}
    )
    if validation is not None:
        per_user["n_validation"] = validation.user_counts()
    h = hashlib.sha256()
    h.update(X.fingerprint().encode())
    labels = np.where(keep, np.asarray(part, dtype=np.int8), np.int8(-1))
    h.update(labels.tobytes())
    det = dict(details or {})
    det.setdefault(
        "users_without_test",
        int(np.count_nonzero((per_user["n_test"].to_numpy() == 0) & (X.user_counts() > 0))),
    )
    det.setdefault(
        "test_users_without_train",
        int(
            np.count_nonzero(
                (per_user["n_test"].to_numpy() > 0) & (per_user["n_train"].to_numpy() == 0)
            )
        ),
    )
    params = json.loads(json.dumps(params, default=_json_default))
    return Split(
        train=train,
        test=test,
        validation=validation,
        strategy=strategy,
        params=params,
        fingerprint=h.hexdigest()[:16],
        per_user=per_user,
        fold=fold,
        details=det,
    )


# ----------------------------------------------------------------------------- helpers
def round_half_up(x: np.ndarray) -> np.ndarray:
    """``std::round`` for non-negative values: halves round away from zero (not to even).

    This is how recometrics turns ``n * fraction`` into a count. Exact: no ``x + 0.5`` error.
    """
    x = np.asarray(x, dtype=np.float64)
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


def _rank_rows(indptr: np.ndarray, key: np.ndarray, tie: np.ndarray | None) -> np.ndarray:
    """Rank of each entry inside its row by ``key`` ascending (stable), ties by ``tie``.

    Plain numpy: stable sorts over all entries by ``tie``, then ``key``, then row, so equal
    (key, tie) keep CSR order as a stable per-row sort does. (A numba kernel did this before;
    in a new process its cached load alone cost as much as these sorts at a million entries, and
    a fresh install compiled it for seconds before the split.)"""
    n = key.shape[0]
    n_rows = indptr.shape[0] - 1
    order = np.arange(n, dtype=np.int64) if tie is None else np.argsort(tie, kind="stable")
    order = order[np.argsort(key[order], kind="stable")]
    # the smallest integer type for the row numbers: numpy sorts 16-bit keys by radix
    row_type = np.int16 if n_rows <= np.iinfo(np.int16).max else np.int64
    rows = np.repeat(np.arange(n_rows, dtype=row_type), np.diff(indptr))
    order = order[np.argsort(rows[order], kind="stable")]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64) - indptr[rows[order].astype(np.int64)]
    return rank


def within_row_rank(
    X: Interactions, key: np.ndarray, *, random_ties: np.ndarray | None = None
) -> np.ndarray:
    """Rank (0-based) of each entry within its row when the row is sorted by ``key`` ascending.

    Ties keep CSR (column) order, unless ``random_ties`` (one float per entry) breaks them.
    """
    indptr = np.asarray(X.matrix.indptr, dtype=np.int64)
    key = np.asarray(key, dtype=np.float64)
    if random_ties is None:
        return _rank_rows(indptr, key, None)
    return _rank_rows(indptr, key, np.asarray(random_ties, dtype=np.float64))


def random_row_rank(X: Interactions, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation rank of the entries of each row (0-based): one uniform
    per entry from ``rng``, each row sorted by it."""
    return within_row_rank(X, rng.random(X.nnz))
