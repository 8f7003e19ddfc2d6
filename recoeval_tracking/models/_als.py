r"""Implicit-feedback alternating least squares (Hu, Koren & Volinsky 2008) with conjugate gradient.

The model minimises the weighted squared loss

.. math::

    L(X, Y) = \sum_{u, i} c_{ui} (p_{ui} - x_u^\top y_i)^2
              + \lambda \Big(\sum_u \lVert x_u \rVert^2 + \sum_i \lVert y_i \rVert^2\Big),

with confidence :math:`c_{ui} = 1 + \alpha r_{ui}` and preference :math:`p_{ui} = 1` for the stored
entries :math:`r_{ui}` of the training matrix (:math:`c_{ui} = 1`, :math:`p_{ui} = 0` elsewhere).
With the item factors fixed, user :math:`u`'s factors solve the linear system

.. math::

    (Y^\top Y + Y^\top (C^u - I) Y + \lambda I)\, x_u = Y^\top C^u p(u),

where :math:`Y^\top Y` is computed once per sweep (the Gram-matrix trick) and :math:`C^u - I` has
only :math:`|I_u|` non-zero entries. Instead of solving it exactly, a fixed number of conjugate-
gradient steps is run from the current :math:`x_u` (Takács, Pilászy & Tikk 2011), which costs
:math:`O(|I_u| k + k^2)` per step instead of :math:`O(|I_u| k^2 + k^3)`. Each CG step can only
lower the user's part of the loss, so the loss does not increase from one sweep to the next.
Items are updated the same way from the transposed matrix.

References
----------
Y. Hu, Y. Koren and C. Volinsky, "Collaborative filtering for implicit feedback datasets",
ICDM 2008.
G. Takács, I. Pilászy and D. Tikk, "Applications of the conjugate gradient method for implicit
feedback collaborative filtering", RecSys 2011.
"""

from __future__ import annotations

import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from tqdm.auto import tqdm

from .._numba_cache import is_cached
from .._validation import as_csr, check_bool, check_float, check_int
from ..scores import FactorScores, ScoreSource
from ._base import Model, check_nonnegative_values

__all__ = ["ALSModel"]

logger = logging.getLogger(__name__)

# Reassociation lets LLVM vectorise the dot products (about 2x faster). The summation order is
# then fixed by the compiled code, not by the thread count, so results stay bit-identical for
# any number of threads on a given machine; NaN/inf semantics are kept (no nnan/ninf flags).
_FASTMATH = {"reassoc", "contract", "arcp", "nsz"}

#: A confidence matrix as the kernels read it, :func:`_kernel_csr`'s ``(indptr, indices, cm1)``
#: with ``cm1`` the :math:`c_{ui} - 1 = \alpha r_{ui}` of each stored entry.
_Csr = tuple[np.ndarray, np.ndarray, np.ndarray]


@njit(nogil=True, cache=True, fastmath=_FASTMATH)
def _gram_rows(Yt: np.ndarray, G: np.ndarray, rows: np.ndarray) -> None:  # pragma: no cover
    """Rows ``rows`` of ``Yt @ Yt.T`` (and their mirror entries) into ``G``, for ``Yt`` of
    shape (k, n), accumulated in float64 in a fixed order."""
    k, n = Yt.shape
    for a in rows:
        for b in range(a, k):
            s = 0.0
            for i in range(n):
                s += np.float64(Yt[a, i]) * np.float64(Yt[b, i])
            G[a, b] = s
            G[b, a] = s


@njit(nogil=True, cache=True, fastmath=_FASTMATH)
def _cg_rows(
    csr: _Csr,
    X: np.ndarray,
    Y: np.ndarray,
    G: np.ndarray,
    reg: float,
    cg_steps: int,
    lo: int,
    hi: int,
) -> None:  # pragma: no cover
    """Update rows ``lo:hi`` of ``X`` in place by ``cg_steps`` CG steps on their normal
    equations.

    ``csr`` is the confidence matrix (:data:`_Csr`). Row ``u`` reads only ``Y``, ``G`` and its
    own row, and writes only its own row, so the result does not depend on how the rows are
    shared among threads.
    """
    indptr, indices, cm1 = csr
    k = X.shape[1]
    for u in range(lo, hi):
        x = np.empty(k, dtype=np.float64)
        r = np.empty(k, dtype=np.float64)
        p = np.empty(k, dtype=np.float64)
        Ap = np.empty(k, dtype=np.float64)
        for a in range(k):
            x[a] = X[u, a]
        # r = b - A x, with A x = (G + reg I) x + sum_i (c_i - 1) (y_i . x) y_i, b = sum_i c_i y_i
        for a in range(k):
            s = 0.0
            for b in range(k):
                s += G[a, b] * x[b]
            r[a] = -s - reg * x[a]
        for jj in range(indptr[u], indptr[u + 1]):
            i = indices[jj]
            yx = 0.0
            for a in range(k):
                yx += Y[i, a] * x[a]
            coef = (1.0 + cm1[jj]) - cm1[jj] * yx
            for a in range(k):
                r[a] += coef * Y[i, a]
        rsold = 0.0
        for a in range(k):
            p[a] = r[a]
            rsold += r[a] * r[a]
        for _ in range(cg_steps):
            if rsold <= 1e-30:
                break
            for a in range(k):
                s = 0.0
                for b in range(k):
                    s += G[a, b] * p[b]
                Ap[a] = s + reg * p[a]
            for jj in range(indptr[u], indptr[u + 1]):
                i = indices[jj]
                yp = 0.0
                for a in range(k):
                    yp += Y[i, a] * p[a]
                coef = cm1[jj] * yp
                for a in range(k):
                    Ap[a] += coef * Y[i, a]
            pAp = 0.0
            for a in range(k):
                pAp += p[a] * Ap[a]
            if pAp <= 0.0:
                break
            step = rsold / pAp
            rsnew = 0.0
            for a in range(k):
                x[a] += step * p[a]
                r[a] -= step * Ap[a]
                rsnew += r[a] * r[a]
            beta = rsnew / rsold
            for a in range(k):
                p[a] = r[a] + beta * p[a]
            rsold = rsnew
        for a in range(k):
            X[u, a] = np.float32(x[a])


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _loss_rows(
    csr: _Csr, X: np.ndarray, Y: np.ndarray, G: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    """Per-user data term :math:`\\sum_i c_{ui} (p_{ui} - x_u^\\top y_i)^2` over all items.

    Written as :math:`x_u^\\top (Y^\\top Y) x_u + \\sum_{i \\in I_u} [c_{ui}(1 - s_{ui})^2 - s_{ui}^2]`
    with :math:`s_{ui} = x_u^\\top y_i`, so that it costs :math:`O(k^2 + |I_u| k)`.
    """
    indptr, indices, cm1 = csr
    m, k = X.shape
    out = np.empty(m, dtype=np.float64)
    for u in prange(m):
        total = 0.0
        for a in range(k):
            s = 0.0
            for b in range(k):
                s += G[a, b] * X[u, b]
            total += X[u, a] * s
        for jj in range(indptr[u], indptr[u + 1]):
            i = indices[jj]
            yx = 0.0
            for a in range(k):
                yx += np.float64(Y[i, a]) * np.float64(X[u, a])
            total += (1.0 + cm1[jj]) * (1.0 - yx) ** 2 - yx * yx
        out[u] = total
    return out


class ALSModel(Model):
    r"""Implicit-feedback ALS (Hu, Koren & Volinsky 2008) with conjugate-gradient updates.

    Minimises :math:`\sum_{u,i} c_{ui}(p_{ui} - x_u^\top y_i)^2 + \lambda(\sum_u\lVert x_u\rVert^2
    + \sum_i\lVert y_i\rVert^2)` with :math:`c_{ui} = 1 + \alpha r_{ui}` and :math:`p_{ui} = 1` on
    the stored entries, alternating user and item sweeps; each row is updated by ``cg_steps``
    conjugate-gradient steps on its normal equations, warm-started at its current value (Takács,
    Pilászy & Tikk 2011). The sweeps run in parallel over chunks of rows (compiled numba kernels on
    numba's thread count, in threads: they release the GIL); each row reads only the
    other side's factors, so the factors are bit-identical whatever the thread count.

    Parameters
    ----------
    factors : int, default 64
        Number of latent factors :math:`k`.
    regularization : float, default 0.01
        :math:`\lambda \ge 0`.
    alpha : float, default 1.0
        Confidence scale :math:`\alpha \ge 0` in :math:`c = 1 + \alpha r`.
    iterations : int, default 15
        Number of (user sweep, item sweep) pairs.
    cg_steps : int, default 3
        Conjugate-gradient steps per row and sweep.
    seed : int, default 0
        Seed of the initial factors, drawn as ``0.01 * standard_normal`` from
        ``numpy.random.default_rng(seed)`` (users first, then items).
    progress : bool, default True
        Show a progress bar over iterations (only when stderr is a terminal).
    compute_loss : bool, default False
        Compute the training loss after each iteration into ``loss_history_``.

    Attributes
    ----------
    user_factors_, item_factors_ : ndarray of float32
    loss_history_ : list of float
        Training loss :math:`L(X, Y)` after each iteration (empty unless ``compute_loss``).
    """

    name = "als"

    def __init__(
        self,
        factors: int = 64,
        regularization: float = 0.01,
        alpha: float = 1.0,
        iterations: int = 15,
        cg_steps: int = 3,
        seed: int = 0,
        progress: bool = True,
        compute_loss: bool = False,
    ) -> None:
        super().__init__()
        f = "ALSModel"
        self.factors = check_int(factors, "factors", f, minimum=1)
        self.regularization = check_float(regularization, "regularization", f, minimum=0.0)
        self.alpha = check_float(alpha, "alpha", f, minimum=0.0)
        self.iterations = check_int(iterations, "iterations", f, minimum=0)
        self.cg_steps = check_int(cg_steps, "cg_steps", f, minimum=1)
        self.seed = check_int(seed, "seed", f, minimum=0)
        self.progress = check_bool(progress, "progress", f)
        self.compute_loss = check_bool(compute_loss, "compute_loss", f)
        self.user_factors_: np.ndarray | None = None
        self.item_factors_: np.ndarray | None = None
        self.loss_history_: list[float] = []

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        check_nonnegative_values(X, "ALSModel.fit")
        m, n = X.shape
        k = self.factors
        rng = np.random.default_rng(self.seed)
        U = (rng.standard_normal((m, k)) * 0.01).astype(np.float32)
        V = (rng.standard_normal((n, k)) * 0.01).astype(np.float32)
        Xu = _kernel_csr(X, self.alpha)
        Xi = _kernel_csr(sp.csr_array(X.T), self.alpha)
        reg = self.regularization
        self.loss_history_ = []
        if not is_cached(_cg_rows):
            logger.info("compiling the ALS kernels (once: numba caches them)...")
        disable = None if self.progress else True
        bar = tqdm(
            range(self.iterations),
            desc="ALS",
            unit="it",
            disable=disable,
            file=sys.stderr,
            leave=False,
        )
        with _Sweeps(numba.get_num_threads()) as sweeps:
            for _ in bar:
                sweeps.cg(Xu, U, V, sweeps.gram(V), reg, self.cg_steps)
                sweeps.cg(Xi, V, U, sweeps.gram(U), reg, self.cg_steps)
                if self.compute_loss:
                    loss = self._loss(Xu, U, V)
                    self.loss_history_.append(loss)
                    bar.set_postfix(loss=f"{loss:.6g}")
        bar.close()
        self.user_factors_ = U
        self.item_factors_ = V

    def _loss(self, Xu: _Csr, U: np.ndarray, V: np.ndarray) -> float:
        with _Sweeps(1) as sweeps:
            G = sweeps.gram(V)
        data = float(np.sum(_loss_rows(Xu, U, V, G)))
        U64, V64 = U.astype(np.float64), V.astype(np.float64)
        penalty = self.regularization * (float(np.sum(U64 * U64)) + float(np.sum(V64 * V64)))
        return data + penalty

    def training_loss(self, train: Any) -> float:
        r"""The loss :math:`L(X, Y)` of the fitted factors on ``train`` (float64 arithmetic)."""
        self.score_source()  # raises NotFittedError before fit
        X = as_csr(train, "train", "ALSModel.training_loss", shape=(self.n_users_, self.n_items_))
        return self._loss(_kernel_csr(X, self.alpha), self.user_factors_, self.item_factors_)

    def _score_source(self) -> ScoreSource:
        return FactorScores(self.user_factors_, self.item_factors_, func="ALSModel.score_source")


def _kernel_csr(X: sp.csr_array, alpha: float) -> _Csr:
    """(indptr int64, indices int64, alpha * data float64) of a CSR with sorted indices."""
    X = sp.csr_array(X)
    X.sort_indices()
    return (
        np.asarray(X.indptr, dtype=np.int64),
        np.asarray(X.indices, dtype=np.int64),
        alpha * np.asarray(X.data, dtype=np.float64),
    )


#: Row chunks per thread in a sweep: users differ in their counts, so a thread that ends its
#: chunk early takes the next one.
_CHUNKS_PER_THREAD = 8


class _Sweeps:
    """Runs the compiled row kernels on ``nthreads`` threads (they release the GIL), each on
    chunks of rows. A row's update reads only the other side's factors and the Gram matrix,
    and every Gram entry is summed in one fixed order, so the factors do not depend on the
    thread count. (Plain ``njit`` kernels with ``nogil`` compile in a fraction of the time of
    numba's ``parallel=True`` loops, which a first fit on a fresh install waits for.)"""

    def __init__(self, nthreads: int) -> None:
        self.nthreads = max(1, int(nthreads))
        self.pool = ThreadPoolExecutor(self.nthreads) if self.nthreads > 1 else None

    def __enter__(self) -> _Sweeps:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def _run(self, call: Any, tasks: list[tuple[Any, ...]]) -> None:
        if self.pool is None or len(tasks) < 2:
            for args in tasks:
                call(*args)
            return
        for future in [self.pool.submit(call, *args) for args in tasks]:
            future.result()

    def gram(self, Y: np.ndarray) -> np.ndarray:
        """``Y.T @ Y`` in float64 (rows of ``Y.T`` dealt round-robin to the threads)."""
        Yt = np.ascontiguousarray(Y.T)
        k = Yt.shape[0]
        G = np.empty((k, k), dtype=np.float64)
        parts = min(self.nthreads, max(1, k))
        self._run(_gram_rows, [(Yt, G, np.arange(t, k, parts)) for t in range(parts)])
        return G

    def cg(
        self, csr: _Csr, X: np.ndarray, Y: np.ndarray, G: np.ndarray, reg: float, cg_steps: int
    ) -> None:
        """One sweep of :func:`_cg_rows` over every row of ``X``, in chunks of about equal
        work (stored entries plus ``k`` per row)."""
        indptr = csr[0]
        m, k = X.shape
        parts = 1 if self.pool is None else min(m, self.nthreads * _CHUNKS_PER_THREAD)
        work = indptr[1:] + k * np.arange(1, m + 1, dtype=np.int64)
        total = int(work[-1]) if m else 0
        cuts = np.searchsorted(work, np.linspace(0, total, parts + 1)[1:-1], side="left")
        bounds = [0, *sorted({int(c) for c in cuts}), m]
        tasks = [
            (csr, X, Y, G, float(reg), int(cg_steps), lo, hi)
            for lo, hi in zip(bounds[:-1], bounds[1:])
            if hi > lo
        ]
        self._run(_cg_rows, tasks)
