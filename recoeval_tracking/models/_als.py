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
from typing import Any

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


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _gram(Yt: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``Yt @ Yt.T`` for ``Yt`` of shape (k, n), accumulated in float64 in a fixed order."""
    k, n = Yt.shape
    G = np.empty((k, k), dtype=np.float64)
    for a in prange(k):
        for b in range(a, k):
            s = 0.0
            for i in range(n):
                s += np.float64(Yt[a, i]) * np.float64(Yt[b, i])
            G[a, b] = s
            G[b, a] = s
    return G


@njit(parallel=True, cache=True, fastmath=_FASTMATH)
def _cg_sweep(
    indptr: np.ndarray,
    indices: np.ndarray,
    cm1: np.ndarray,
    X: np.ndarray,
    Y: np.ndarray,
    G: np.ndarray,
    reg: float,
    cg_steps: int,
) -> None:  # pragma: no cover
    """Update every row of ``X`` in place by ``cg_steps`` CG steps on its normal equations.

    ``cm1`` holds :math:`c_{ui} - 1 = \\alpha r_{ui}` for each stored entry. Row ``u`` reads only
    ``Y``, ``G`` and its own row, and writes only its own row, so the result does not depend on
    the number of threads.
    """
    m, k = X.shape
    for u in prange(m):
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
    indptr: np.ndarray,
    indices: np.ndarray,
    cm1: np.ndarray,
    X: np.ndarray,
    Y: np.ndarray,
    G: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled
    """Per-user data term :math:`\\sum_i c_{ui} (p_{ui} - x_u^\\top y_i)^2` over all items.

    Written as :math:`x_u^\\top (Y^\\top Y) x_u + \\sum_{i \\in I_u} [c_{ui}(1 - s_{ui})^2 - s_{ui}^2]`
    with :math:`s_{ui} = x_u^\\top y_i`, so that it costs :math:`O(k^2 + |I_u| k)`.
    """
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
    Pilászy & Tikk 2011). The sweeps run in parallel over rows (numba); each row reads only the
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

    def params(self) -> dict[str, Any]:
        return {
            "factors": self.factors,
            "regularization": self.regularization,
            "alpha": self.alpha,
            "iterations": self.iterations,
            "cg_steps": self.cg_steps,
            "seed": self.seed,
            "progress": self.progress,
            "compute_loss": self.compute_loss,
        }

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
        if not is_cached(_cg_sweep):
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
        for _ in bar:
            _cg_sweep(*Xu, U, V, _gram(np.ascontiguousarray(V.T)), reg, self.cg_steps)
            _cg_sweep(*Xi, V, U, _gram(np.ascontiguousarray(U.T)), reg, self.cg_steps)
            if self.compute_loss:
                loss = self._loss(Xu, U, V)
                self.loss_history_.append(loss)
                bar.set_postfix(loss=f"{loss:.6g}")
        bar.close()
        self.user_factors_ = U
        self.item_factors_ = V

    def _loss(
        self, Xu: tuple[np.ndarray, np.ndarray, np.ndarray], U: np.ndarray, V: np.ndarray
    ) -> float:
        G = _gram(np.ascontiguousarray(V.T))
        data = float(np.sum(_loss_rows(*Xu, U, V, G)))
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


def _kernel_csr(X: sp.csr_array, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int64, alpha * data float64) of a CSR with sorted indices."""
    X = sp.csr_array(X)
    X.sort_indices()
    return (
        np.asarray(X.indptr, dtype=np.int64),
        np.asarray(X.indices, dtype=np.int64),
        alpha * np.asarray(X.data, dtype=np.float64),
    )
