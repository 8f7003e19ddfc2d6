"""The interactions container shared by loaders, preparation steps and splits."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, check_type, checked_sparse, param_error
from ._relevance import Relevance

if TYPE_CHECKING:  # imported by to_dataframe: evaluate() and the splits need no pandas
    import pandas as pd

__all__ = ["Interactions", "PrepReport", "gini", "DUPLICATE_POLICIES"]

logger = logging.getLogger("recoeval_tracking.data")

#: Allowed values of the ``duplicates`` argument of every loader.
DUPLICATE_POLICIES = ("sum", "max", "last", "error")


@dataclass(frozen=True)
class PrepReport:
    """What one loading or preparation step removed or merged.

    Every step that can drop data returns (and attaches to the resulting :class:`Interactions`)
    one of these, and logs it at INFO level through the ``recoeval_tracking.data`` logger, so
    nothing is silently dropped.

    Attributes
    ----------
    step : str
        Name of the step (``"duplicates"``, ``"min_interactions"``, ``"k_core"``,
        ``"implicit"``, ...).
    params : dict
        Parameters of the step.
    interactions_before, interactions_after : int
        Stored interactions before and after the step.
    users_removed, items_removed : int
        Users and items that lost all their interactions and were removed from the id maps
        (0 when the step keeps the shape).
    details : dict
        Step-specific counts (e.g. duplicate pairs merged, iterations of the k-core).
    """

    step: str
    params: dict
    interactions_before: int
    interactions_after: int
    users_removed: int = 0
    items_removed: int = 0
    details: dict = field(default_factory=dict)

    @property
    def interactions_removed(self) -> int:
        """Number of stored interactions the step removed (merged duplicates count here)."""
        return self.interactions_before - self.interactions_after

    def __str__(self) -> str:
        text = (
            f"{self.step}{self.params}: {self.interactions_before} -> "
            f"{self.interactions_after} interactions ({self.interactions_removed} removed), "
            f"{self.users_removed} users and {self.items_removed} items removed"
        )
        if self.details:
            text += f"; {self.details}"
        return text

    def log(self) -> PrepReport:
        """Log the report at INFO level and return it."""
        logger.info("%s", self)
        return self


def gini(counts: np.ndarray) -> float:
    r"""Gini coefficient of non-negative counts (0: all equal, towards 1: concentrated).

    .. math::
        G = \frac{2 \sum_{i=1}^{n} i\, x_{(i)}}{n \sum_{i=1}^{n} x_{(i)}} - \frac{n + 1}{n}

    with :math:`x_{(1)} \le \dots \le x_{(n)}` the sorted counts (Damgaard & Weiner 2000,
    "Describing inequality in plant size or fecundity", Ecology 81(4)). Returns NaN when all
    counts are zero or there are none.
    """
    x = np.sort(np.asarray(counts, dtype=np.float64))
    n = x.shape[0]
    total = float(x.sum())
    if n == 0 or total == 0.0:
        return float("nan")
    ranks = np.arange(1, n + 1, dtype=np.float64)
    return float(2.0 * np.dot(ranks, x) / (n * total) - (n + 1) / n)


def _ids_bytes(ids: np.ndarray) -> bytes:
    arr = np.asarray(ids)
    if arr.dtype.kind in "iub":
        return b"i" + arr.astype(np.int64).tobytes()
    if arr.dtype.kind == "f":
        return b"f" + arr.astype(np.float64).tobytes()
    return b"s" + "\x1f".join(map(str, arr.tolist())).encode("utf-8")


class _IdLookup:
    """Maps original ids to positions, vectorised (sorted ids use a binary search)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        if ids.shape[0] > 1 and ids.dtype.kind in "iuf" and np.all(ids[1:] > ids[:-1]):
            self.order = None
        else:
            self.order = np.argsort(ids, kind="stable")
        self.sorted = ids if self.order is None else ids[self.order]

    def __call__(self, query: Any, name: str, func: str) -> np.ndarray:
        q = np.atleast_1d(np.asarray(query))
        if q.size == 0:
            return np.zeros(0, dtype=np.int64)
        try:
            pos = np.searchsorted(self.sorted, q)
        except TypeError as exc:
            raise param_error(
                name, func, f"ids of the same type as the stored ids ({self.ids.dtype})", q
            ) from exc
        pos_c = np.minimum(pos, max(self.sorted.shape[0] - 1, 0))
        found = (pos < self.sorted.shape[0]) & (self.sorted[pos_c] == q)
        if not np.all(found):
            missing = q[~found][:5].tolist()
            raise param_error(
                name, func, "ids present in the data", f"unknown ids {missing}", got_is_text=True
            )
        return (pos_c if self.order is None else self.order[pos_c]).astype(np.int64)


@dataclass(eq=False)
class Interactions:
    """User-item interactions: a CSR matrix plus the maps to the original ids.

    Attributes
    ----------
    matrix : scipy.sparse.csr_array
        Users x items, float64 values, sorted indices, no duplicate entries.
    user_ids : numpy.ndarray
        Row index -> original user id (sorted ascending when built by a loader).
    item_ids : numpy.ndarray
        Column index -> original item id.
    timestamps : scipy.sparse.csr_array or None
        Same sparsity pattern as ``matrix`` holding int64 timestamps, or None.
    reports : list of PrepReport
        What every loading and preparation step removed, in order.
    name : str
        A short label of the data source (for logs and reports).
    relevance : Relevance
        The data's relevance rule: which test entries are positives and their gains (set by
        the loader; splits and preparation steps carry it; :func:`recoeval_tracking.evaluate`
        applies it unless told otherwise). Not part of the :meth:`fingerprint` (it is
        recorded in a result's definitions).
    """

    matrix: sp.csr_array
    user_ids: np.ndarray
    item_ids: np.ndarray
    timestamps: sp.csr_array | None = None
    reports: list[PrepReport] = field(default_factory=list)
    name: str = ""
    relevance: Relevance = field(default_factory=Relevance)

    @classmethod
    def checked(cls, value: Any, func: str) -> Interactions:
        """``value`` when it is an :class:`Interactions`, else the standard error."""
        return check_type(
            value,
            cls,
            "interactions",
            func,
            "an Interactions object",
            "Build one with recoeval_tracking.data.load_dataset or from_dataframe.",
        )

    def __post_init__(self) -> None:
        func = "Interactions"
        m = self.matrix
        if not sp.issparse(m) or m.format != "csr":
            raise param_error("matrix", func, "a scipy.sparse CSR array", m)
        m = checked_sparse(m, "matrix", func)  # before any scipy method reads its structure
        if m.dtype != np.float64:
            m = m.astype(np.float64)
        if not m.has_canonical_format:
            raise param_error(
                "matrix",
                func,
                "a canonical CSR (sorted indices, no duplicates)",
                m,
                "Build it with recoeval_tracking.data.from_dataframe or call "
                "sum_duplicates() first.",
            )
        self.matrix = m
        if not isinstance(self.relevance, Relevance):
            raise param_error(
                "relevance", func, "a recoeval_tracking.data.Relevance", self.relevance
            )
        self.user_ids = np.asarray(self.user_ids)
        self.item_ids = np.asarray(self.item_ids)
        for name, ids, n, per in (
            ("user_ids", self.user_ids, m.shape[0], "row"),
            ("item_ids", self.item_ids, m.shape[1], "column"),
        ):
            if ids.shape != (n,):
                raise param_error(name, func, f"a 1-d array of length {n} (one id per {per})", ids)
        if self.timestamps is not None:
            t = self.timestamps
            if (
                not sp.issparse(t)
                or t.shape != m.shape
                or t.nnz != m.nnz
                or not np.array_equal(t.indptr, m.indptr)
                or not np.array_equal(t.indices, m.indices)
            ):
                raise param_error(
                    "timestamps", func, "a CSR with the same sparsity pattern as 'matrix'", t
                )
            if not isinstance(t, sp.csr_array) or t.dtype != np.int64:
                self.timestamps = sp.csr_array(
                    (np.asarray(t.data).astype(np.int64), t.indices, t.indptr), shape=t.shape
                )
        self._user_lookup: _IdLookup | None = None
        self._item_lookup: _IdLookup | None = None
        self._fingerprint: str | None = None

    # ----------------------------------------------------------------- sizes
    @property
    def n_users(self) -> int:
        """Number of rows (users), including users without interactions."""
        return int(self.matrix.shape[0])

    @property
    def n_items(self) -> int:
        """Number of columns (items), including items without interactions."""
        return int(self.matrix.shape[1])

    @property
    def nnz(self) -> int:
        """Number of stored interactions."""
        return int(self.matrix.nnz)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_users, n_items)``."""
        return (self.n_users, self.n_items)

    def user_counts(self) -> np.ndarray:
        """Interactions per user (row), int64."""
        return np.diff(self.matrix.indptr).astype(np.int64)

    def item_counts(self) -> np.ndarray:
        """Interactions per item (column), int64."""
        return np.bincount(self.matrix.indices, minlength=self.n_items).astype(np.int64)

    def row_of_entries(self) -> np.ndarray:
        """Row index of every stored entry, in CSR order (int64)."""
        return np.repeat(np.arange(self.n_users, dtype=np.int64), self.user_counts())

    # ------------------------------------------------------------------ ids
    def user_index(self, ids: Any) -> np.ndarray:
        """Row indices of the original user ``ids`` (raises for unknown ids)."""
        if self._user_lookup is None:
            self._user_lookup = _IdLookup(self.user_ids)
        return self._user_lookup(ids, "ids", "Interactions.user_index")

    def item_index(self, ids: Any) -> np.ndarray:
        """Column indices of the original item ``ids`` (raises for unknown ids)."""
        if self._item_lookup is None:
            self._item_lookup = _IdLookup(self.item_ids)
        return self._item_lookup(ids, "ids", "Interactions.item_index")

    # ------------------------------------------------------------- summaries
    def stats(self) -> dict[str, Any]:
        r"""Dataset statistics.

        Returns a dict with ``users`` and ``items`` (rows and columns with at least one
        interaction), ``n_users`` and ``n_items`` (the full shape), ``interactions`` (stored
        entries), ``density`` = interactions / (n_users * n_items), ``popularity_gini`` (the
        :func:`gini` of the per-item interaction counts over all columns),
        ``has_timestamps`` and ``fingerprint``.
        """
        uc = self.user_counts()
        ic = self.item_counts()
        cells = self.n_users * self.n_items
        return {
            "users": int(np.count_nonzero(uc)),
            "items": int(np.count_nonzero(ic)),
            "n_users": self.n_users,
            "n_items": self.n_items,
            "interactions": self.nnz,
            "density": float(self.nnz / cells) if cells else float("nan"),
            "popularity_gini": gini(ic),
            "has_timestamps": self.timestamps is not None,
            "fingerprint": self.fingerprint(),
        }

    def fingerprint(self) -> str:
        """Short stable content hash: sha256 of the canonical CSR arrays, ids and timestamps.

        The first 16 hex characters. Equal data (same shape, entries, values, id maps and
        timestamps) gives the same fingerprint on every platform; index dtypes do not matter.
        Computed once and cached: treat the container as immutable (every step in this package
        returns a new one).
        """
        if self._fingerprint is not None:
            return self._fingerprint
        h = hashlib.sha256()
        m = self.matrix
        h.update(np.asarray(m.shape, dtype=np.int64).tobytes())
        h.update(np.asarray(m.indptr, dtype=np.int64).tobytes())
        h.update(np.asarray(m.indices, dtype=np.int64).tobytes())
        h.update(np.asarray(m.data, dtype=np.float64).tobytes())
        h.update(_ids_bytes(self.user_ids))
        h.update(_ids_bytes(self.item_ids))
        if self.timestamps is not None:
            h.update(b"t" + np.asarray(self.timestamps.data, dtype=np.int64).tobytes())
        self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    def to_dataframe(self) -> pd.DataFrame:
        """One row per interaction with original ids: ``user``, ``item``, ``value``
        (and ``timestamp`` when present), in CSR order."""
        rows = self.row_of_entries()
        out = {
            "user": self.user_ids[rows],
            "item": self.item_ids[self.matrix.indices],
            "value": np.asarray(self.matrix.data, dtype=np.float64),
        }
        if self.timestamps is not None:
            out["timestamp"] = np.asarray(self.timestamps.data, dtype=np.int64)
        import pandas as pd

        return pd.DataFrame(out)

    # --------------------------------------------------------------- helpers
    def with_data(
        self,
        matrix: sp.csr_array,
        timestamps: sp.csr_array | None,
        report: PrepReport | None = None,
        *,
        user_ids: np.ndarray | None = None,
        item_ids: np.ndarray | None = None,
    ) -> Interactions:
        """A new container sharing this one's id maps (unless given) and history."""
        reports = list(self.reports) + ([report] if report is not None else [])
        return Interactions(
            matrix=matrix,
            user_ids=self.user_ids if user_ids is None else user_ids,
            item_ids=self.item_ids if item_ids is None else item_ids,
            timestamps=timestamps,
            reports=reports,
            name=self.name,
            relevance=self.relevance,
        )

    def with_relevance(
        self, relevance_level: float | None = None, gains: str = "graded"
    ) -> Interactions:
        """The same data with another relevance rule (:class:`Relevance`): test entries below
        ``relevance_level`` are judged non-relevant (None: every entry is a positive), and a
        positive's gain is its value (``gains="graded"``) or 1 (``"binary"``)."""
        rule = Relevance.checked(relevance_level, gains, "Interactions.with_relevance")
        out = self.with_data(self.matrix, self.timestamps)
        out.relevance = rule
        out._fingerprint = self._fingerprint
        return out

    def subset(self, mask: np.ndarray) -> Interactions:
        """Keep the stored entries where ``mask`` (one bool per entry, CSR order) is True.

        Shape and id maps are unchanged; values and timestamps follow their entries.
        """
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.nnz,):
            raise InputError(
                f"The 'mask' parameter of Interactions.subset must be a bool array "
                f"of length {self.nnz}. Got shape {mask.shape} instead."
            )
        csum = np.zeros(self.nnz + 1, dtype=np.int64)
        np.cumsum(mask, out=csum[1:])
        indptr = csum[np.asarray(self.matrix.indptr)]
        indices = np.asarray(self.matrix.indices)[mask]
        m = sp.csr_array(
            (np.asarray(self.matrix.data)[mask], indices, indptr), shape=self.matrix.shape
        )
        m.has_sorted_indices = True
        m.has_canonical_format = True
        t = None
        if self.timestamps is not None:
            t = sp.csr_array(
                (np.asarray(self.timestamps.data)[mask], indices, indptr), shape=self.matrix.shape
            )
        return self.with_data(m, t)

    def __repr__(self) -> str:
        ts = ", timestamps" if self.timestamps is not None else ""
        name = f"{self.name!r}, " if self.name else ""
        return (
            f"Interactions({name}{self.n_users} users x {self.n_items} items, "
            f"{self.nnz} interactions{ts}; relevance: {self.relevance})"
        )
