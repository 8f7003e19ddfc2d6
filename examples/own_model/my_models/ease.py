"""EASE (Steck 2019, "Embarrassingly Shallow Autoencoders for Sparse Data"), in numpy.

A model of the user's own: recoeval_tracking never imports it; it only needs ``fit(train)``
returning the model and ``score_users(user_indices)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class EASE:
    r"""Item-item weights :math:`B = I - P\,\mathrm{diag}(1/\mathrm{diag}(P))` with
    :math:`P = (X^\top X + \lambda I)^{-1}`, then :math:`\mathrm{diag}(B) = 0`; a user's scores
    are :math:`x_u B`.

    Parameters
    ----------
    lam : float
        The L2 regularisation :math:`\lambda` (hundreds to thousands on MovieLens).
    """

    def __init__(self, lam: float = 500.0) -> None:
        if lam <= 0:
            raise ValueError(f"lam must be > 0; got {lam}")
        self.lam = float(lam)

    def fit(self, train: sp.csr_array) -> EASE:
        X = sp.csr_array(train, dtype=np.float64)
        gram = (X.T @ X).toarray()
        gram[np.diag_indices_from(gram)] += self.lam
        P = np.linalg.inv(gram)
        B = P / -np.diag(P)
        B[np.diag_indices_from(B)] = 0.0
        self.X_ = sp.csr_array(X, dtype=np.float32)
        self.B_ = np.ascontiguousarray(B, dtype=np.float32)
        return self

    def score_users(self, user_indices: np.ndarray) -> np.ndarray:
        return np.asarray(self.X_[user_indices] @ self.B_)

    def __repr__(self) -> str:
        return f"EASE(lam={self.lam:g})"
